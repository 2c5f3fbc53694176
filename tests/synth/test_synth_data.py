"""Examples and splits: balance, determinism, disjointness, held-out templates, no ambiguity."""

import logging
from collections import Counter

from corrige.synth.data import (
    held_out_templates,
    iter_texts,
    load_realistic,
    make_splits,
)
from corrige.tutor.answer_text import NO_ERRORS_GLOSS, parse_target
from corrige.tutor.categories import SYNTHETIC_CATEGORY_IDS
from corrige.tutor.edits import apply_edits


def test_sizes_and_split_names(splits):
    assert {k: len(v) for k, v in splits.items()} == {"train": 4000, "dev": 600, "test": 600}
    for name, examples in splits.items():
        assert all(ex.split == name for ex in examples)


def test_deterministic_by_seed(splits):
    again = make_splits(data_seed=7, n_train=4000, n_dev=600, n_test=600)
    assert [ex.target for ex in again["train"]] == [ex.target for ex in splits["train"]]
    assert [ex.source for ex in again["test"]] == [ex.source for ex in splits["test"]]
    other = make_splits(data_seed=8, n_train=200, n_dev=50, n_test=50)
    assert [ex.source for ex in other["test"]] != [ex.source for ex in splits["test"][:50]]


def test_share_of_correct_examples(splits):
    for examples in splits.values():
        correct = [ex for ex in examples if ex.is_correct]
        assert len(correct) / len(examples) >= 0.35
        assert all(ex.gloss == NO_ERRORS_GLOSS and not ex.edits for ex in correct)


def test_every_category_is_represented(splits):
    counts = Counter(c for ex in splits["train"] for c in ex.categories)
    assert set(counts) == set(SYNTHETIC_CATEGORY_IDS)
    assert min(counts.values()) >= 80  # 2,400 erroneous examples over 25 categories


def test_several_errors_sometimes(splits):
    n_edits = Counter(len(ex.edits) for ex in splits["train"] if not ex.is_correct)
    erroneous = sum(n_edits.values())
    assert 0.08 < n_edits[2] / erroneous < 0.25
    assert n_edits[1] / erroneous > 0.7


def test_examples_are_exact(splits):
    for ex in splits["train"][:1500] + splits["test"]:
        assert apply_edits(ex.source, ex.edits) == ex.corrected
        assert parse_target(ex.target) == (ex.corrected, ex.gloss)
        assert " / " not in ex.gloss
        assert 3 <= len(ex.source.split()) <= 16 and len(ex.source) <= 100


def test_no_source_has_two_targets(splits):
    target_of: dict[str, str] = {}
    for examples in splits.values():
        for ex in examples:
            assert target_of.setdefault(ex.source, ex.target) == ex.target


def test_evaluation_sentences_are_unseen_in_training(splits):
    train_sources = {ex.source for ex in splits["train"]}
    train_clean = {ex.corrected for ex in splits["train"]}
    for name in ("dev", "test"):
        for ex in splits[name]:
            assert ex.source not in train_sources
            assert ex.corrected not in train_clean
    assert not {ex.source for ex in splits["dev"]} & {ex.source for ex in splits["test"]}


def test_held_out_templates_only_in_evaluation(splits):
    held = held_out_templates(7)
    assert held
    assert not held & {ex.template_id for ex in splits["train"]}
    test_templates = {ex.template_id for ex in splits["test"]}
    assert held & test_templates


def test_iter_texts(splits):
    texts = list(iter_texts(splits))
    assert len(texts) == 2 * sum(len(v) for v in splits.values())
    assert texts[1] == splits["train"][0].target
    assert list(iter_texts(splits["dev"]))[0] == splits["dev"][0].source


def test_length_guards():
    small = make_splits(data_seed=3, n_train=300, n_dev=0, n_test=0, max_words=8, max_chars=40)
    for ex in small["train"]:
        assert len(ex.source.split()) <= 8 and len(ex.corrected) <= 40


def test_realistic_file():
    rows = load_realistic()
    assert len(rows) >= 100
    correct = sum(r.is_correct for r in rows)
    assert correct / len(rows) >= 0.25
    for r in rows:
        assert set(r.categories) <= set(SYNTHETIC_CATEGORY_IDS), r
        assert bool(r.categories) == (not r.is_correct), r
        assert r.source[0].isupper() and r.corrected[-1] in ".?!", r


def test_same_corpus_in_another_process():
    """Nothing may depend on Python's per-process string hashing."""
    import os
    import subprocess
    import sys

    code = (
        "from corrige.synth.data import make_splits\n"
        "sp = make_splits(data_seed=11, n_train=300, n_dev=50, n_test=50)\n"
        "print('|'.join(e.target for v in sp.values() for e in v))"
    )
    env = dict(os.environ, PYTHONHASHSEED="123")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    here = make_splits(data_seed=11, n_train=300, n_dev=50, n_test=50)
    assert out == "|".join(e.target for v in here.values() for e in v)


def test_asking_for_one_split_logs_nothing_about_the_others(caplog):
    """The portal's quiz and the load generator ask for the test split alone, at every start."""
    with caplog.at_level(logging.DEBUG, logger="corrige.synth.data"):
        make_splits(data_seed=5, n_train=0, n_dev=0, n_test=40)
    messages = [r.getMessage() for r in caplog.records if r.name == "corrige.synth.data"]
    assert messages == ["test: 40 examples (16 correct)"]
    assert all(r.levelno == logging.DEBUG for r in caplog.records if r.name == "corrige.synth.data")
