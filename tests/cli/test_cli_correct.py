"""`corrige correct A B C` with the real CLI and the bundled model: every text is tried, each
split into sentences and corrected as the `text` path does.

One test runs the command as a process (`python -m corrige.cli correct`); the others invoke the
same typer app in this process (typer's CliRunner), with the bundled tutor loaded once for the
module: loading it, and the speller's index its first corrections build, is most of a command's
seconds."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass

import pytest
from typer.testing import CliRunner

from corrige import cli
from corrige.cli import core as cli_core
from corrige.tutor.agent import Tutor
from corrige.tutor.token_codec import PromptTooLong

TOO_LONG = " ".join(["word"] * 150) + "."  # past the window of every bundled model (192 tokens at most)


def corrige_correct_process(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "corrige.cli", "correct", *args],
        capture_output=True,
        text=True,
        timeout=120,
        input=stdin,
    )


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture(scope="module")
def bundled_tutor() -> Tutor:
    return Tutor.load()


@pytest.fixture
def corrige_correct(bundled_tutor, monkeypatch):
    """`corrige correct ARGS` in this process, on the module's tutor (the command loads the bundled
    model: no --model here); BLAS threads are left as they are in this process."""

    def load(model_dir=None, config=None) -> Tutor:
        assert model_dir is None and config is None, (model_dir, config)
        return bundled_tutor

    monkeypatch.setattr(Tutor, "load", load)
    monkeypatch.setattr(cli_core, "_numpy_runtime_threads", lambda: None)

    def run(*args: str, stdin: str | None = None) -> Run:
        result = CliRunner().invoke(cli.app, ["correct", *args], input=stdin)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return Run(result.exit_code, result.stdout, result.stderr)

    return run


def test_a_sentence_too_long_is_reported_in_place_and_the_next_ones_are_corrected(bundled_tutor):
    """The command as a process of its own."""
    with pytest.raises(PromptTooLong):  # the sentence in the middle is one the model refuses
        bundled_tutor.correct(TOO_LONG)
    run = corrige_correct_process("He don't want to come.", TOO_LONG, "Yesterday I goed to the store")
    assert run.returncode == 2, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "He don't want to come."
    assert "  → He doesn't want to come." in lines
    refused = lines.index(TOO_LONG)
    assert lines[refused + 1].startswith("  error (too_long): word word")
    after = lines[refused + 2 :]
    assert after[:3] == [
        "Yesterday I goed to the store",
        "  → Yesterday I went to the store",
        "  pasado irregular: goed → went",
    ]
    assert lines[-1] == "1 of 3 texts could not be corrected in full"


def test_all_corrected_exits_zero(corrige_correct):
    run = corrige_correct("He don't want to come.", "I has a cat.")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "could not be corrected" not in run.stdout
    assert run.stdout.splitlines()[0] == "He don't want to come."


def test_an_empty_sentence_is_an_error_not_a_correction(corrige_correct):
    run = corrige_correct("", "She go to work by bus.")
    assert run.returncode == 2, run.stdout + run.stderr
    assert "(empty_sentence)" in run.stdout and "unparsable" not in run.stdout
    assert "  → She goes to work by bus." in run.stdout.splitlines()  # the next one is still corrected


EMAIL = (
    "Hi Ana,\nI am writing to tell you about my holidays. Yesterday I goed to the beach with my friends. "
    "My sister have a new dog. We was very happy.\nBest wishes,\nLucía"
)


def test_a_text_is_split_and_corrected_from_an_argument_stdin_or_a_file(corrige_correct, tmp_path):
    run = corrige_correct(EMAIL)
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    for gloss in ("pasado irregular: goed → went", "tercera persona: have → has", "concordancia: was → were"):
        assert f"  {gloss}" in out.splitlines()
    assert "Yesterday I went to the beach" in out and "My sister has a new dog. We were very happy." in out
    assert "sin revisar" not in out  # the greeting, the sign-off and the name are nothing to check
    assert corrige_correct("-", stdin=EMAIL).stdout == out
    path = tmp_path / "email.txt"
    path.write_text(EMAIL, encoding="utf-8")
    assert corrige_correct("--file", str(path)).stdout == out


@pytest.mark.parametrize("spanish", ["Yo tengo un perro.", "Quiero aprender inglés porque es importante."])
def test_spanish_is_refused_not_corrected(corrige_correct, spanish):
    run = corrige_correct(spanish, "She go to work by bus.")
    assert run.returncode == 2, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[1].startswith("  error (not_english): the text looks Spanish (es);")
    assert "  → She goes to work by bus." in lines


def test_nothing_to_correct_is_a_usage_error(corrige_correct):
    run = corrige_correct()
    assert run.returncode == 2 and "give a sentence or a text" in run.stderr
