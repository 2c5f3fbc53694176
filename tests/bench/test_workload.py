"""The sentence mix: seeded, from the test split, with a long tail of lengths."""

from corrige.bench.workload import build_workload, sentence_pool


def test_same_seed_same_sentences_and_another_seed_differs():
    assert build_workload(200, seed=3).sentences == build_workload(200, seed=3).sentences
    assert build_workload(200, seed=3).sentences != build_workload(200, seed=4).sentences


def test_sentences_come_from_the_test_split():
    pool = {s for group in sentence_pool().values() for s in group}
    workload = build_workload(300, seed=1)
    assert set(workload.sentences) <= pool


def test_lengths_have_a_long_tail():
    described = build_workload(4000, seed=0).describe()
    assert 6 <= described["words_p50"] <= 8
    assert described["words_p95"] >= described["words_p50"] + 4  # the tail reaches well past the median
    assert described["words_max"] <= 16  # no longer than the tutor was trained on


def test_indexing_wraps_around():
    workload = build_workload(5, seed=0)
    assert workload[7] == workload[2]


def test_every_sentence_fits_the_served_models_window(model_dir):
    from corrige.tutor.agent import Tutor

    tutor = Tutor.load(model_dir)
    for sentence in set(build_workload(2000, seed=2, model=model_dir).sentences):
        tutor.build_prompt(sentence)  # raises PromptTooLong when the server would answer 422
