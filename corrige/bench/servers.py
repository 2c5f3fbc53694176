"""Servers for the serving lab, each a subprocess on a free loopback port, always stopped on exit.

`LabServer.corrige(policy)` is `corrige serve --batching POLICY` with the rate limit and the
access log off (the load generator is one client sending hundreds of requests a second) and its
trace store in a temporary directory (a lab run should not fill the user's). `LabServer.peer()`
is the transformers server of `corrige.bench.peer`. Both answer `GET /readyz` once loaded.

The server's CPU time (all its threads, and its engine process) is read from /proc, so a
benchmark can say how much of the machine the server used and how much the load generator did.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

READY_TIMEOUT_S = 180.0  # a cold start on a busy 2-core machine (imports, model, warm-up) can take a while


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_ready(url: str, proc: subprocess.Popen, timeout: float) -> str:
    """Poll `url/readyz` until it answers 200 ("ready"), the process ends ("exited") or time runs out ("timeout")."""
    import httpx

    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        if proc.poll() is not None:
            return "exited"
        try:
            if httpx.get(f"{url}/readyz", timeout=1.0).status_code == 200:
                return "ready"
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    return "timeout"


def _children(pid: int) -> list[int]:
    """The live child processes of `pid` (from /proc; [] where the kernel does not list them)."""
    children: list[int] = []
    for path in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            children += [int(c) for c in path.read_text().split()]
        except OSError:
            continue
    return children


class LabServer:
    """A server subprocess; `url`, `pid`, `cpu_seconds()`, `engine_stats()` while running."""

    def __init__(self, name: str, args: list[str], env: dict[str, str] | None = None) -> None:
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.command = [sys.executable, *args, "--host", "127.0.0.1", "--port", str(self.port)]
        self.env = {**os.environ, **(env or {})}
        self._tmp = tempfile.TemporaryDirectory(prefix=f"corrige-lab-{name}-")
        self.log_path = Path(self._tmp.name) / "server.log"
        self.proc: subprocess.Popen | None = None

    @classmethod
    def corrige(
        cls, policy: str, model: Path | None = None, extra: list[str] | None = None, access_log: bool = False
    ) -> LabServer:
        args = ["-m", "corrige.cli", "serve", "--batching", policy, "--rate-limit", "0"]
        args += ["--access-log" if access_log else "--no-access-log"]
        args += ["--model", str(model)] if model is not None else []
        server = cls(policy, args + list(extra or []))
        # its files in its own temporary directory: a lab run leaves the user's traces and learners alone
        server.env["CORRIGE_TRACE_STORE"] = str(server.state_dir / "traces.sqlite")
        server.env["CORRIGE_PORTAL_DB"] = str(server.state_dir / "portal.sqlite")
        return server

    @property
    def state_dir(self) -> Path:
        """The server's temporary directory (log, trace store, portal database); removed by `stop`."""
        return Path(self._tmp.name)

    @classmethod
    def peer(cls, model: Path | None = None) -> LabServer:
        args = ["-m", "corrige.bench.peer"] + (["--model", str(model)] if model is not None else [])
        # torch's idle OpenMP workers would otherwise spin and take CPU from the load generator
        return cls("peer", args, {"OMP_WAIT_POLICY": "PASSIVE"})

    @property
    def pid(self) -> int:
        assert self.proc is not None, "the server is not running"
        return self.proc.pid

    def start(self) -> LabServer:
        """Start the process without waiting (several servers can load at once); then `wait_ready`."""
        self._log = open(self.log_path, "wb")  # noqa: SIM115  (closed in stop)
        self.proc = subprocess.Popen(self.command, stdout=self._log, stderr=subprocess.STDOUT, env=self.env)
        log.info("%s: starting on %s (pid %d)", self.name, self.url, self.proc.pid)
        return self

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> LabServer:
        assert self.proc is not None, "start() first"
        state = wait_until_ready(self.url, self.proc, timeout)
        if state != "ready":
            tail = self.log_tail()
            self.stop()
            raise RuntimeError(f"the {self.name} server {'exited' if state == 'exited' else 'timed out'}:\n{tail}")
        return self

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def log_problems(self, limit: int = 40) -> list[str]:
        """The log's warnings, errors and tracebacks (the last `limit` lines of them): what a lab
        run keeps of a server whose requests failed, since the log goes with the server."""
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return []
        marks = ("WARNING", "ERROR", "CRITICAL", "Traceback", "Error:", "  File ")
        return [line for line in lines if any(mark in line for mark in marks)][-limit:]

    def cpu_seconds(self) -> float | None:
        """User + system CPU time so far of the process and its children, such as the engine
        process of `corrige serve` (Linux /proc; None elsewhere)."""
        try:
            pids = [self.pid, *_children(self.pid)]
        except AssertionError:
            return None
        total = 0.0
        for pid in pids:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                if pid == self.pid:
                    return None
                continue  # a child that just exited
            total += int(fields[11]) + int(fields[12])  # utime, stime
        return total / os.sysconf("SC_CLK_TCK")

    def engine_stats(self) -> dict[str, Any] | None:
        """The server's `/v1/engine/stats` engine snapshot, or None (the peer has none)."""
        import httpx

        try:
            response = httpx.get(f"{self.url}/v1/engine/stats", timeout=5.0)
        except httpx.HTTPError:
            return None
        return response.json().get("engine") if response.status_code == 200 else None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if getattr(self, "_log", None) is not None:
            self._log.close()
            self._log = None
        self._tmp.cleanup()

    def __enter__(self) -> LabServer:
        return self.start().wait_ready()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


@dataclass(frozen=True)
class ServedBench:
    """How a bench against one real `corrige serve` runs (`bench text`, `bench portal`): the measured
    requests or rounds, the unmeasured ones first, the server's model and batching, the JSON report."""

    measured: int
    warmup: int
    model: Path | None = None
    batching: str = "continuous"
    json_output: Path | None = None
