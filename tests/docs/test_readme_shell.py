"""The README's shell commands, as it says: `make serve` (on another port too), `make test`, then
`corrige --help` in a new shell.

`make serve PORT=…` is run for real on a free port in place of the README's 8001 and answers a
correction; `make serve` and `make test` (the whole suite, which is running this) are run with
`make -n`, which prints the recipe without running it. Both use the `.venv` that `make serve` left
here (building a fresh one would take minutes): `-o .venv/.base` keeps make from reinstalling it.
The README's first shell block that runs `corrige` is run line for line in a fresh login shell
with an empty environment, in the repository root.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import time

import httpx
import pytest
from doc_support import REPO, block_with, blocks

README = REPO / "README.md"
SET_UP = ".venv/.base"  # what `make serve` builds before it serves


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


def make_lines() -> list[list[str]]:
    """The README's `make` commands, comments left out, as argument lists."""
    block = block_with(README, "make serve PORT=8001")
    lines = [shlex.split(line.split("#")[0]) for line in block.lines() if line.strip()]
    assert lines and all(line[0] == "make" for line in lines), f"{block.where}: a line that is not a make command"
    return lines


def outside_make() -> dict[str, str]:
    """This process's environment without what a calling `make` (as `make test` is) passes down to a nested one."""
    return {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES"}}


def port_of(line: list[str]) -> str:
    return next((arg.removeprefix("PORT=") for arg in line if arg.startswith("PORT=")), "8000")


def test_the_readmes_make_commands_run_what_they_say(venv):
    """Each `make` line's recipe, as `make -n` prints it: `make serve` on its port, `make test` the lint and suite."""
    lines = make_lines()
    assert {" ".join(line[:2]) for line in lines} == {"make serve", "make test"}
    for line in lines:
        run = subprocess.run(
            [*line, "-n", "--no-print-directory", "-o", SET_UP],
            cwd=REPO,
            env=outside_make(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 0, f"{shlex.join(line)}: {run.stdout}{run.stderr}"
        recipe = run.stdout.splitlines()
        if line[1] == "serve":
            assert recipe[-1] == f".venv/bin/corrige serve --host 127.0.0.1 --port {port_of(line)}", run.stdout
        else:
            assert ".venv/bin/ruff check corrige tests" in recipe and "-m pytest -q" in recipe[-1], run.stdout


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow  # loads the model
def test_make_serve_on_another_port_serves_a_correction(venv, tmp_path):
    """The README's `make serve PORT=8001`, on a free port: ready, it corrects the README's sentence,
    and its start-up logs no warning of the project's own."""
    (line,) = [line for line in make_lines() if line[1] == "serve" and port_of(line) != "8000"]
    port = free_port()
    command = [arg if not arg.startswith("PORT=") else f"PORT={port}" for arg in line]
    env = {k: v for k, v in outside_make().items() if not k.startswith("CORRIGE_")}
    env |= {"CORRIGE_TRACE_STORE": str(tmp_path / "traces.sqlite"), "CORRIGE_PORTAL_DB": str(tmp_path / "portal.db")}
    log = tmp_path / "make-serve.log"
    with open(log, "wb") as out:
        make = subprocess.Popen(
            [*command, "-o", SET_UP], cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    try:
        give_up = time.monotonic() + 120
        while make.poll() is None and time.monotonic() < give_up:
            try:
                if httpx.get(f"{url}/readyz", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        else:
            raise AssertionError(f"{shlex.join(command)}: not ready (exit {make.poll()}):\n{log.read_text()[-3000:]}")
        answer = httpx.post(f"{url}/v1/grammar/correct", json={"sentence": "Yesterday I goed to the store"}, timeout=60)
        assert answer.status_code == 200 and answer.json()["corrected"] == "Yesterday I went to the store"
    finally:
        make.send_signal(signal.SIGTERM)  # make passes it on to `corrige serve`, which drains and exits
        try:
            make.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(make.pid, signal.SIGKILL)
            make.wait(timeout=10)
    text = log.read_text()
    assert re.search(rf"corrige serve --host 127\.0\.0\.1 --port {port}$", text, re.M)
    start_up = text.split("Application startup complete", 1)[0]
    assert "Application startup complete" in text and not re.search(
        r"^(WARNING|ERROR|CRITICAL) corrige", start_up, re.M
    )
