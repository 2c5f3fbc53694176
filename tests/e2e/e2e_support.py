"""A real server in a subprocess: a free loopback port, readiness polling, a log file to show
when something goes wrong, and a stop that always kills what it started."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from corrige.bench.servers import wait_until_ready

HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


class ServerProcess:
    """`python <args> --host 127.0.0.1 --port <free>` with `env` added to a clean environment."""

    def __init__(self, args: list[str], env: dict[str, str], log_path: Path) -> None:
        self.args = args
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("CORRIGE_")}
        self.env.update({"OMP_WAIT_POLICY": "PASSIVE", **env})
        self.log_path = log_path
        self.port = free_port()
        self.url = f"http://{HOST}:{self.port}"
        self.proc: subprocess.Popen | None = None

    def start(self, ready_timeout: float = 60.0) -> ServerProcess:
        command = [sys.executable, *self.args, "--host", HOST, "--port", str(self.port)]
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(command, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        state = wait_until_ready(self.url, self.proc, ready_timeout)
        if state == "exited":
            raise RuntimeError(f"the server exited with {self.proc.returncode}:\n{self.log()}")
        if state == "timeout":
            self.stop()
            raise RuntimeError(f"the server was not ready within {ready_timeout} s:\n{self.log()}")
        return self

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def terminate(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)

    def stop(self) -> None:
        """Always safe to call: SIGTERM, then SIGKILL if it does not exit within a few seconds."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def stats(self) -> dict:
        return httpx.get(f"{self.url}/v1/engine/stats", timeout=5.0).json()


def wait_for(condition, what: str, timeout: float = 20.0, interval: float = 0.005):
    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"never happened: {what}")
