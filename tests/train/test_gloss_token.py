"""Converting a model that writes "corrected / gloss" to the `<|gloss|>` token, and going on
training it: nothing it learned moves, the new token starts where " /" was, the card tells both runs."""

import json
from dataclasses import replace

import numpy as np
import pytest

pytest.importorskip("torch")

from test_train_smoke import SMOKE  # noqa: E402

from corrige.model.config import preset  # noqa: E402
from corrige.model.weights import load_model, random_params, save_model  # noqa: E402
from corrige.synth.data import make_splits  # noqa: E402
from corrige.tokenizer import BPETokenizer  # noqa: E402
from corrige.train.card import render_card  # noqa: E402
from corrige.train.gloss_token import EMBEDDING, add_gloss_token  # noqa: E402
from corrige.train.loop import train  # noqa: E402
from corrige.tutor.answer_text import render_target  # noqa: E402


@pytest.fixture(scope="module")
def old_model(tmp_path_factory):
    """A model directory in the old format: a tokenizer without `<|gloss|>`, as the first bundled ones."""
    out = tmp_path_factory.mktemp("old")
    examples = make_splits(0, 300, 10, 10)["train"]
    tok = BPETokenizer.train((t for e in examples for t in (e.source, render_target(e.corrected, e.gloss))), 300)
    assert tok.special.gloss is None
    cfg = preset("smoke").with_(vocab_size=tok.vocab_size)
    save_model(out, random_params(cfg, seed=1), cfg)
    tok.save(out)
    (out / "train_config.json").write_text(
        json.dumps(
            {"train": {"lr": 0.003}, "model": cfg.to_dict(), "result": {"steps": 7, "minutes": 0.1, "history": []}}
        )
    )
    return out


def test_the_new_token_starts_as_a_copy_of_the_separator_it_replaces(old_model):
    tok = BPETokenizer.load(old_model)
    _, params = load_model(old_model)
    new_tok, new_params = add_gloss_token(tok, params)
    old, new = params[EMBEDDING], new_params[EMBEDDING]
    assert new_tok.special.gloss == tok.vocab_size == old.shape[0] and new.shape[0] == old.shape[0] + 1
    assert np.array_equal(new[:-1], old)  # every learned row kept
    assert np.array_equal(new[-1], old[tok.encode(" / ")[0]])  # the tied head scores it as " /"
    assert add_gloss_token(new_tok, new_params) == (new_tok, new_params)  # a second call changes nothing


def test_training_on_from_an_old_model_converts_it_and_the_card_tells_both_runs(old_model, tmp_path):
    cfg = replace(SMOKE, n_train=300, n_dev=10, n_test=10, batch_size=8, max_steps=2, lr=0.0, eval_every=100,
                  eval_examples=4, checkpoint_every=100, warmup_steps=1, init_from=str(old_model))  # fmt: skip
    train(cfg, tmp_path)
    tok = BPETokenizer.load(tmp_path)
    model_cfg, params = load_model(tmp_path)
    _, before = load_model(old_model)
    assert tok.special.gloss == model_cfg.vocab_size - 1
    assert np.array_equal(params[EMBEDDING][:-1], before[EMBEDDING])  # lr 0: nothing moved
    meta = json.loads((tmp_path / "train_config.json").read_text())
    assert meta["continued_from"][0]["result"]["steps"] == 7 and meta["result"]["steps"] == 2
    card = render_card(tmp_path, {"sets": {}})
    assert "write `corrected <|gloss|> Spanish gloss <eos>`" in card
    assert "- trained: 7 steps" in card
    assert "- then continued from that model's weights (the `<|gloss|>` separator token added" in card
