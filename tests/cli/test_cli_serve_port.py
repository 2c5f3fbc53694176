"""`corrige serve` on a port already taken says so, and how to choose another, before loading the model."""

from __future__ import annotations

import socket
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_taken_port_is_a_clear_error_with_the_way_out():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = subprocess.run(
            [sys.executable, "-m", "corrige.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert run.returncode == 2, run.stdout + run.stderr
    out = " ".join(run.stdout.split())
    assert f"port {port} on 127.0.0.1 is taken" in out and "make serve PORT=8001" in out
    assert "serving on" not in out  # refused before the model loads


def test_make_serve_takes_port_and_threadpoolctl_is_a_runtime_dependency():
    makefile = (ROOT / "Makefile").read_text()
    assert "--port $(PORT)" in makefile and "PORT ?= 8000" in makefile
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert any(d.startswith("threadpoolctl") for d in project["dependencies"])
