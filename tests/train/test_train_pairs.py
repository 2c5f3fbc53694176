"""Training on a pairs TSV of real sentences: the `<|gloss|>` answer format end to end."""

import json

import numpy as np
import pytest

pytest.importorskip("torch")

from corrige.tokenizer import GLOSS, BPETokenizer  # noqa: E402
from corrige.train.loop import TrainConfig, _bucketed_order, train  # noqa: E402
from corrige.train.pairs import pair_splits, read_pairs  # noqa: E402
from corrige.tutor.agent import Tutor  # noqa: E402
from corrige.tutor.token_codec import encode_pair, split_answer  # noqa: E402

ROWS = [
    ("I goed to the beach with my friends.", "I went to the beach with my friends.", "pasado irregular: goed → went"),
    ("She have two brothers and a sister.", "She has two brothers and a sister.", "tercera persona: have → has"),
    ("Do you prefer tea / coffee?", "Do you prefer tea / coffee?", "sin errores"),
    ("We arrived to the hotel very late.", "We arrived at the hotel very late.", "preposición: to → at"),
    ("My brother is engineer in Madrid.", "My brother is an engineer in Madrid.", "artículo con profesión: is → is an"),
    ("The weather was realy nice yesterday.", "The weather was really nice yesterday.", "ortografía: realy → really"),
    ("I have lived here since 2015.", "I have lived here since 2015.", "sin errores"),
    ("People is very friendly in my town.", "People are very friendly in my town.", "people es plural: is → are"),
]


@pytest.fixture(scope="module")
def pairs_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("pairs") / "pairs.tsv"
    lines = ["source\tcorrected\tgloss\tcategories"]
    for i in range(22):  # training rows: each sentence several times
        s, c, g = ROWS[i % len(ROWS)]
        lines.append(f"{s}\t{c}\t{g}\t")
    for i in range(7):  # held-out rows, plus one that repeats a training sentence
        lines.append(f"We met {i} friends at the park.\tWe met {i} friends at the park.\tsin errores\t")
    lines.append("\t".join([*ROWS[0], ""]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_pairs_file_is_read_and_split_at_its_end(pairs_file):
    rows = list(read_pairs(pairs_file))
    assert len(rows) == 30 and rows[0].corrected == ROWS[0][1]
    splits = pair_splits(pairs_file, n_dev=4, n_test=4)
    assert splits["test"] == rows[-4:] and splits["dev"] == rows[-8:-4]
    held_out = {p.source for p in rows[-8:]}
    assert ROWS[0][0] in held_out and len(splits["train"]) == 22 - 3  # its 3 training copies are dropped
    assert not held_out & {p.source for p in splits["train"]}  # a held-out sentence is never trained on


def test_missing_column_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("source\tcorrected\nA b.\tA b.\n")
    with pytest.raises(ValueError, match="gloss"):
        list(read_pairs(bad))


def test_gloss_token_separates_the_answer_whatever_the_text_holds():
    tok = BPETokenizer.train((t for row in ROWS * 3 for t in row), vocab_size=300, gloss_token=True)
    assert tok.special.gloss is not None
    for source, corrected, gloss in ROWS:
        ex = encode_pair(tok, source, corrected, gloss)
        answer = ex.ids[ex.n_prompt :]
        assert answer.count(tok.special.gloss) == 1
        assert split_answer(tok, answer)[:2] == (corrected, gloss)
    # typed text never becomes the separator, even the token's own spelling
    assert tok.special.gloss not in tok.encode(f"tea {GLOSS} coffee / milk")


def test_bucketed_order_is_a_permutation_of_similar_lengths():
    lengths = np.random.default_rng(0).integers(5, 100, size=1000)
    order = _bucketed_order(lengths, batch_size=10, rng=np.random.default_rng(1), group=5)
    assert sorted(order.tolist()) == list(range(1000))
    spread = [np.ptp(lengths[order[i : i + 10]]) for i in range(0, 1000, 10)]
    assert np.median(spread) < np.ptp(lengths) / 3  # batches pad far less than random ones would


def test_training_on_pairs_exports_a_gloss_token_model(pairs_file, tmp_path):
    cfg = small_run(pairs_file, max_steps=6, eval_every=3, checkpoint_every=3, bf16=True)
    result = train(cfg, tmp_path)
    assert result.steps == 6
    tutor = Tutor.load(tmp_path)
    assert tutor.tokenizer.special.gloss is not None
    assert tutor.drafter.separator == tutor.tokenizer.special.gloss
    words = set((tmp_path / "words.txt").read_text().split())
    assert "really" in words and "realy" not in words  # injected misspellings are not known words
    meta = json.loads((tmp_path / "train_config.json").read_text())
    assert meta["train"]["pairs"] == str(pairs_file)
    # an untrained model may abstain, but never fails on a sentence holding " / "
    assert tutor.correct("Do you prefer tea / coffee?").sentence == "Do you prefer tea / coffee?"


def test_a_run_can_start_from_an_exported_model(pairs_file, tmp_path):
    base = small_run(pairs_file, max_steps=3, eval_every=100, checkpoint_every=100)
    first = tmp_path / "first"
    train(base, first)
    from corrige.model.weights import load_model

    _, before = load_model(first)
    second = tmp_path / "second"
    # lr 0: the weights cannot move, so the export equals the starting model exactly
    train(TrainConfig(**{**base.__dict__, "init_from": str(first), "lr": 0.0, "max_steps": 2}), second)
    _, after = load_model(second)
    assert (second / "tokenizer.json").read_text() == (first / "tokenizer.json").read_text()
    assert all(np.array_equal(before[k], after[k]) for k in before)


def small_run(pairs_file, **changes) -> TrainConfig:
    """A few steps of the smoke preset on the test's pairs file."""
    fields = dict(
        preset="smoke",
        pairs=str(pairs_file),
        n_dev=4,
        n_test=4,
        batch_size=4,
        max_minutes=5,
        eval_examples=4,
        warmup_steps=1,
        threads=1,
    )
    return TrainConfig(**{**fields, **changes})
