"""A tiny end-to-end training run: data → tokenizer → torch → export → NumPy tutor → resume."""

import json

import numpy as np
import pytest

pytest.importorskip("torch")

from corrige.model.weights import load_model  # noqa: E402
from corrige.train.card import write_card  # noqa: E402
from corrige.train.loop import TrainConfig, lr_at, make_batch, train  # noqa: E402
from corrige.tutor.agent import Tutor  # noqa: E402
from corrige.tutor.token_codec import encode_example  # noqa: E402

SMOKE = TrainConfig(
    preset="smoke",
    n_train=600,
    n_dev=40,
    n_test=40,
    batch_size=16,
    max_steps=12,
    max_minutes=5,
    eval_every=6,
    eval_examples=8,
    checkpoint_every=6,
    warmup_steps=2,
    threads=1,
)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("smoke")
    losses = []
    result = train(SMOKE, out, on_step=lambda step, loss, progress: losses.append(loss))
    return out, result, losses


def test_training_exports_a_model_the_tutor_loads(trained):
    out, result, losses = trained
    assert result.steps == SMOKE.max_steps
    assert losses[-1] < losses[0]  # it learns something even in a dozen steps
    cfg, _ = load_model(out)
    assert cfg.n_layer == 1 and (out / "tokenizer.json").is_file()
    meta = json.loads((out / "train_config.json").read_text())
    assert meta["train"]["preset"] == "smoke"
    # the tutor serves the model that was trained: its NumPy logits are the checkpoint's torch logits
    import torch

    from corrige.model.numpy_gpt import KVCache, prefill
    from corrige.model.torch_gpt import TorchGPT

    tutor = Tutor.load(out)
    model = TorchGPT(cfg)
    model.load_state_dict(torch.load(out / "checkpoint.pt", weights_only=False)["model"])
    prompt = tutor.build_prompt("Yesterday I goed to the store")
    with torch.no_grad():
        want = model.eval()(torch.tensor([prompt]))[0, -1].numpy()
    got = prefill(tutor.weights, KVCache.allocate(cfg, 1), [prompt], [0])[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    correction = tutor.correct("Yesterday I goed to the store")  # untrained: it may abstain, but answers
    assert correction.sentence == "Yesterday I goed to the store" and correction.corrected


def test_resume_continues_from_the_checkpoint(trained, tmp_path):
    out, result, _ = trained
    longer = TrainConfig(**{**SMOKE.__dict__, "max_steps": SMOKE.max_steps + 4})
    resumed = train(longer, out, resume=True)
    assert resumed.steps == SMOKE.max_steps + 4
    assert [h.step for h in resumed.history][: len(result.history)] == [h.step for h in result.history]


def test_labels_cover_only_the_answer(trained):
    out, _, _ = trained
    from corrige.tokenizer import BPETokenizer

    tok = BPETokenizer.load(out)
    ex = encode_example(tok, "He go home.", "He goes home. / tercera persona: go → goes")
    x, y = make_batch([ex], tok.special.pad)
    labels = y[0].numpy()
    assert (labels[: ex.n_prompt - 1] == -100).all()
    np.testing.assert_array_equal(labels[ex.n_prompt - 1 :], ex.ids[ex.n_prompt :])


def test_learning_rate_warms_up_then_decays():
    cfg = TrainConfig(lr=1.0, warmup_steps=10, min_lr_ratio=0.1)
    assert lr_at(cfg, 0, 0.0) == pytest.approx(0.1)
    assert lr_at(cfg, 10, 0.0) == pytest.approx(1.0)
    assert lr_at(cfg, 100, 1.0) == pytest.approx(0.1)


def test_model_card_reports_the_figures(tmp_path):
    results = {
        "sets": {
            "synthetic test": {
                "n": 10,
                "exact_match": 0.9,
                "precision": 0.95,
                "recall": 0.8,
                "f05": 0.91,
                "false_alarm_rate": 0.01,
                "abstain_rate": 0.02,
            }
        },
        "latency": {"n": 5, "p50_ms": 3.25, "p95_ms": 4.0, "mean_prompt_tokens": 12.0, "mean_completion_tokens": 20.0},
    }
    text = write_card(tmp_path, results).read_text()
    assert "| synthetic test | 10 | 0.900 |" in text and "3.25 ms" in text
    assert json.loads((tmp_path / "eval.json").read_text())["latency"]["p50_ms"] == 3.25
    assert "tutor.json" not in text  # no settings: nothing to say
    text = write_card(tmp_path, results | {"tutor_settings": {"patterns": True}}).read_text()
    assert "The tutor's settings (`tutor.json`): `patterns` true." in text
