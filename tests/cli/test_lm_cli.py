"""`corrige lm build | tune | score` end to end on small files: a model directory is built,
margins are chosen with ERRANT against references, and the card and tables are written."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from corrige import cli
from corrige.model.ngram import NgramLM

SENTENCES = [
    "She went to the park on Friday.",
    "We met on Friday at the station.",
    "I go to school on Monday.",
    "They arrived at the station on Sunday.",
    "I am a teacher and she is a doctor.",
    "There are two cats in the garden.",
    "Their house is near the station.",
    "My brother goes to work by bus.",
] * 5

# a tokenised dev set in JFLEG's form, with two references
SOURCES = ["She went to the park in Friday .", "I go to school in Monday .", "We met on Friday at the station ."]
REFS = [
    ["She went to the park on Friday .", "I go to school on Monday .", "We met on Friday at the station ."],
    ["She went to the park on Friday .", "I went to school on Monday .", "We met on Friday at the station ."],
]


def _run(*args: str) -> str:
    result = CliRunner().invoke(cli.app, ["lm", *args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def lm_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("lm")
    corpus = root / "sentences.txt"
    corpus.write_text("\n".join(SENTENCES) + "\n")
    out = root / "lm"
    text = _run("build", str(corpus), "--out", str(out), "--min-trigram-count", "1", "--min-bigram-count", "1")
    assert "trigrams" in text
    return out


def test_build_writes_a_model_that_loads(lm_dir):
    lm = NgramLM.load(lm_dir)
    assert lm.info["sentences"] == len(SENTENCES) and lm.info["trigrams"] > 0
    assert lm.score("She went to the park on Friday.") > lm.score("She went to the park in Friday.")


def test_tune_chooses_margins_and_writes_the_card(lm_dir, tmp_path):
    pytest.importorskip("errant")
    src = tmp_path / "dev.src"
    src.write_text("\n".join(SOURCES) + "\n")
    refs = []
    for k, lines in enumerate(REFS):
        ref = tmp_path / f"dev.ref{k}"
        ref.write_text("\n".join(lines) + "\n")
        refs += ["--reference", str(ref)]
    out = _run(
        "tune", str(src), *refs, "--lm", str(lm_dir), "--target", "0.5", "--min-support", "1",
        "--false-alarms", "0", "--write",
    )  # fmt: skip
    assert "preposition/replace" in out
    margins = json.loads((lm_dir / "rescoring.json").read_text())["margins"]
    assert "preposition/replace" in margins  # in -> on is right on both rows: it gets a margin
    tuning = json.loads((lm_dir / "tuning.json").read_text())
    (prep,) = [c for c in tuning["choices"] if c["key"] == "preposition/replace"]
    assert prep["right"] == 2 and prep["margin"] == margins["preposition/replace"]
    card = (lm_dir / "MODEL_CARD.md").read_text()
    assert "preposition/replace" in card and f"{len(SENTENCES):,}" in card
    # the tuned model corrects with the margins it was given
    scored = _run("score", "She went to the park in Friday.", "--lm", str(lm_dir))
    assert "on Friday" in scored
