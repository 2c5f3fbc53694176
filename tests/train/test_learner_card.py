"""The model card of a real-text model: sources and licences from the corpus, ERRANT figures, targets."""

import json

import pytest

from corrige.train import learner_card


@pytest.fixture()
def model_dir(tmp_path):
    meta = {
        "train": {"pairs": "/data/pairs.tsv", "batch_size": 64, "lr": 0.002, "bf16": True},
        "model": {"vocab_size": 4096, "n_ctx": 192},
        "result": {"steps": 1000, "minutes": 30.0, "history": [{"step": 1000, "dev_loss": 0.5, "dev_exact": 0.25}]},
    }
    (tmp_path / "train_config.json").write_text(json.dumps(meta))
    manifest = {
        "sha256": "abc",
        "totals": {"kept": 1234},
        "sources": [
            {
                "name": "tatoeba",
                "licence": "CC BY 2.0 FR",
                "attribution": "Tatoeba",
                "url": "https://x",
                "kept": 1000,
                "files": ["/a", "/b"],
            },
        ],
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    return tmp_path


def scores(p, r, fa, refusals=0):
    return {
        "rows": 10,
        "precision": p,
        "recall": r,
        "f05": 0.5,
        "false_alarm_rate": fa,
        "abstention_rate": 0.1,
        "refusals": refusals,
    }


def test_card_names_each_source_and_checks_each_target(model_dir):
    summary = learner_card.summarise_corpus(model_dir / "manifest.json")
    assert summary["kept"] == 1234 and "files" not in summary["sources"][0]  # no machine paths in the card
    (model_dir / learner_card.CORPUS_FILE).write_text(json.dumps(summary))
    results = {
        "sets": {"learner dev, test half (held out)": scores(0.7, 0.1, 0.02)},
        "targets": [{"set": "learner dev, test half (held out)", "name": "recall ≥ 0.2", "value": 0.1, "met": False}],
        "min_token_prob": 0.7,
        "latency": {"n": 5, "p50_ms": 9.5, "p95_ms": 12.0, "mean_prompt_tokens": 20, "mean_completion_tokens": 25},
    }
    card = learner_card.write(model_dir, results).read_text()
    assert "| [tatoeba](https://x) | CC BY 2.0 FR | 1,000 | Tatoeba |" in card
    assert "| learner dev, test half (held out) | recall ≥ 0.2 | 0.100 | no |" in card
    assert "0.700 | 0.100 |" in card and "**9.50 ms**" in card and "Abstention threshold: 0.7" in card
    assert json.loads((model_dir / "eval.json").read_text())["min_token_prob"] == 0.7
    assert "edit_labels.py" not in card  # the tutor writes no gloss of its own for this model
    card = learner_card.write(model_dir, results | {"gloss_from_edits": True}).read_text()
    assert "writes the gloss from the edits' own words (`corrige/tutor/edit_labels.py`)" in card
    assert "spelling.py" not in card
    card = learner_card.write(model_dir, results | {"spelling": True}).read_text()
    assert "Non-words the answer leaves are fixed" in card and "edit_labels.py" not in card
    card = learner_card.write(model_dir, results | {"patterns": True}).read_text()
    assert "patterns.py" in card and "Non-words" not in card


def test_targets_are_judged_from_the_scores():
    ok = {t[0]: t[2] for t in learner_card.TARGETS["learner dev, test half (held out)"]}
    assert ok["precision ≥ 0.6"](0.6) and not ok["precision ≥ 0.6"](0.59)
    assert ok["false alarms ≤ 3%"](0.03) and not ok["false alarms ≤ 3%"](0.031)
    assert ok["refusals 0"](0) and not ok["refusals 0"](1)


def test_a_model_trained_in_several_runs_lists_every_run_with_its_own_pairs_file(model_dir):
    meta = json.loads((model_dir / "train_config.json").read_text())
    first = {**meta, "train": {**meta["train"], "pairs": "/data/first.tsv", "lr": 0.003}}
    meta["train"]["init_from"] = "corrige/models/reader"
    meta["continued_from"] = [first]
    (model_dir / "train_config.json").write_text(json.dumps(meta))
    results = {"sets": {}, "targets": [], "min_token_prob": 0.7}
    card = learner_card.write(model_dir, results).read_text()
    first_run = card.index("- trained: 1000 steps in 30.0 min on pairs file `first.tsv` (all rows) at peak LR 0.003")
    second_run = card.index(
        "- then continued from that model's weights: 1000 steps in 30.0 min on pairs file `pairs.tsv`"
    )
    assert first_run < second_run and card.count("dev loss 0.5000") == 2
