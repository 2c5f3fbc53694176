"""`make serve`, then `corrige --help` in a new shell, exactly as the README says.

The README's first shell block that runs `corrige` is run line for line in a fresh login shell
with an empty environment, in the repository root, where `make serve` left `.venv` (building a
fresh one here would take minutes; the Makefile's recipe is what makes it).
"""

from __future__ import annotations

import subprocess

import pytest
from doc_support import REPO, blocks

README = REPO / "README.md"


def first_corrige_block():
    for block in blocks(README):
        if block.lang in ("bash", "sh", "console") and any(
            line.lstrip("$ ").startswith("corrige ") for line in block.lines()
        ):
            return block
    raise AssertionError("the README never runs corrige in a shell block")


def fresh_shell(script: str, home) -> subprocess.CompletedProcess:
    """`bash -lc script` with nothing inherited: no PATH beyond the system's, no virtualenv, an empty home."""
    return subprocess.run(
        ["env", "-i", f"HOME={home}", "PATH=/usr/local/bin:/usr/bin:/bin", "TERM=dumb", "bash", "-lc", script],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def venv():
    if not (REPO / ".venv" / "bin" / "corrige").exists():
        pytest.skip("no .venv with corrige here: `make serve` or `make test` builds it")
    return REPO / ".venv"


def test_the_readmes_first_corrige_lines_work_in_a_fresh_shell(venv, tmp_path):
    block = first_corrige_block()
    assert "corrige --help" in block.text, f"{block.where}: the first corrige block should show `corrige --help`"
    run = fresh_shell(block.text, tmp_path)
    assert run.returncode == 0, f"{block.where} in a fresh shell:\n{block.text}\n{run.stdout}\n{run.stderr}"
    assert run.stdout.startswith("Usage: corrige [OPTIONS] COMMAND [ARGS]..."), run.stdout
    assert "correct" in run.stdout and "serve" in run.stdout


def test_the_fresh_shell_really_has_no_corrige(venv, tmp_path):
    """Without the README's set-up lines the same shell cannot find the command: the check above is not vacuous."""
    run = fresh_shell("corrige --help", tmp_path)
    assert run.returncode == 127, run.stdout + run.stderr
