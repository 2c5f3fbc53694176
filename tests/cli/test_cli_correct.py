"""`corrige correct A B C` with the real CLI and the bundled model: every sentence is tried."""

from __future__ import annotations

import subprocess
import sys

import pytest

from corrige.tutor.agent import Tutor
from corrige.tutor.token_codec import PromptTooLong

TOO_LONG = " ".join(["word"] * 150) + "."  # past the window of every bundled model (192 tokens at most)


def corrige_correct(*sentences: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "corrige.cli", "correct", *sentences], capture_output=True, text=True, timeout=120
    )


def test_a_refused_sentence_is_reported_in_place_and_the_next_ones_are_corrected():
    with pytest.raises(PromptTooLong):  # the sentence in the middle is one the model refuses
        Tutor.load().correct(TOO_LONG)
    run = corrige_correct("He don't want to come.", TOO_LONG, "Yesterday I goed to the store")
    assert run.returncode == 2, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "He don't want to come."
    assert "  → He doesn't want to come." in lines
    refused = lines.index(TOO_LONG)
    assert lines[refused + 1].startswith("  error (prompt_too_long): the sentence takes ")
    after = lines[refused + 2 :]
    assert after[:3] == [
        "Yesterday I goed to the store",
        "  → Yesterday I went to the store",
        "  pasado irregular: goed → went",
    ]
    assert lines[-1] == "1 of 3 sentences could not be corrected"


def test_all_corrected_exits_zero():
    run = corrige_correct("He don't want to come.", "I has a cat.")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "could not be corrected" not in run.stdout
    assert run.stdout.splitlines()[0] == "He don't want to come."


def test_an_empty_sentence_is_an_error_not_a_correction():
    run = corrige_correct("", "She go to work by bus.")
    assert run.returncode == 2, run.stdout + run.stderr
    assert "(empty_sentence)" in run.stdout and "unparsable" not in run.stdout
    assert "  → She goes to work by bus." in run.stdout.splitlines()  # the next one is still corrected
