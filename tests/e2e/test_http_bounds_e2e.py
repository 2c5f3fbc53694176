"""A real `corrige serve` against clients that abuse HTTP itself, over raw sockets:

* 100 request headers of 1 MiB: refused with 431 `headers_too_large` while they arrive, and the
  server's resident memory (its peak, /proc/<pid>/status) grows by a few MB, not by the ~106 MB
  that uvicorn's httptools protocol used to keep before answering 200;
* a client that pipelines requests and closes the connection early, 40 times: no ERROR and no
  traceback in the server's log (uvicorn used to log "ASGI callable returned without completing
  response" with a traceback, about 6 times in 40);
* every route is rate-limited per client (`/metrics`, `/v1/engine/stats`, `/v1/models`, `/docs`
  among the GETs), the health probes by a bucket of their own, and `X-Forwarded-For` from
  127.0.0.1 is not read unless `CORRIGE_FORWARDED_ALLOW_IPS` names it, so a client cannot dodge
  its limit by naming another address in it.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest
from conftest import SERVE, base_env
from e2e_support import HOST, ServerProcess

SAFETY_S = 60.0
HEADERS, HEADER_BYTES = 100, 1 << 20
MAX_GROWTH_MB = 30  # the bound asserted; the refusal itself keeps 32 KiB and one read of the socket


def serve(model_dir: Path, log: Path, **env: str) -> ServerProcess:
    return ServerProcess(SERVE, base_env(model_dir, CORRIGE_WARMUP="false", **env), log).start()


@pytest.fixture(scope="module")
def bounded(model_dir, tmp_path_factory):
    process = serve(model_dir, tmp_path_factory.mktemp("bounds") / "server.log")
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="module")
def limited(model_dir, tmp_path_factory):
    # 4 tokens per client and next to no refill: what passes and what is refused is fixed, however slow the machine
    env = {"CORRIGE_RATE_LIMIT": "0.001", "CORRIGE_RATE_BURST": "4"}
    process = serve(model_dir, tmp_path_factory.mktemp("limits") / "server.log", **env)
    try:
        yield process
    finally:
        process.stop()


def read_all(sock: socket.socket) -> bytes:
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except OSError:  # reset once the server has closed: what came before is kept
        pass
    return b"".join(chunks)


class PeakRss:
    """The peak resident memory of a process while a block runs, in MB: the kernel's high-water mark
    (VmHWM, reset first through clear_refs) or, where that cannot be reset, VmRSS sampled."""

    def __init__(self, pid: int) -> None:
        self.status = Path(f"/proc/{pid}/status")
        self.clear_refs = Path(f"/proc/{pid}/clear_refs")
        self.sampled = 0
        self.reset = False
        self._done = threading.Event()

    def field(self, name: str) -> int:
        return int(re.search(rf"^{name}:\s+(\d+) kB", self.status.read_text(), re.M).group(1)) // 1024

    def __enter__(self) -> PeakRss:
        try:
            self.clear_refs.write_text("5")  # 5: reset the peak resident set size to the present one
            self.reset = True
        except OSError:
            pass
        self.before = self.field("VmRSS")
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()
        return self

    def _sample(self) -> None:
        while not self._done.wait(0.005):
            self.sampled = max(self.sampled, self.field("VmRSS"))

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._sampler.join()
        self.peak = max(self.sampled, self.field("VmHWM") if self.reset else 0, self.field("VmRSS"))


def test_100_headers_of_1_mib_are_refused_431_before_the_memory_grows(bounded):
    assert bounded.proc is not None
    answer: list[bytes] = []
    with PeakRss(bounded.proc.pid) as rss, socket.create_connection((HOST, bounded.port), timeout=SAFETY_S) as sock:
        reader = threading.Thread(target=lambda: answer.append(read_all(sock)))
        reader.start()  # the answer comes while the client is still sending
        try:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            for i in range(HEADERS):
                sock.sendall(f"X-Header-{i}: ".encode() + b"a" * HEADER_BYTES + b"\r\n")
            sock.sendall(b"\r\n")
        except OSError:  # the server closed the connection after its answer
            pass
        reader.join(SAFETY_S)
    head, _, body = answer[0].partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431 "), answer[0][:300]
    assert b"content-type: application/json" in head and b"connection: close" in head
    error = json.loads(body)["error"]
    assert error["code"] == "headers_too_large" and "32768 bytes" in error["message"]
    assert rss.peak - rss.before < MAX_GROWTH_MB, f"RSS {rss.before} MB -> peak {rss.peak} MB"
    assert httpx.get(f"{bounded.url}/healthz", timeout=10).status_code == 200  # and it still serves


def test_clients_closing_pipelined_connections_early_leave_no_error_in_the_log(bounded):
    body = b'{"sentence": "He go home yesterday."}'
    post = b"POST /v1/grammar/correct HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    post += b"Content-Length: %d\r\n\r\n" % len(body) + body
    get = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    mixes = [get * 3, post * 3, get + post + get, post + get + post]
    for i in range(40):
        with socket.create_connection((HOST, bounded.port), timeout=SAFETY_S) as sock:
            sock.sendall(mixes[i % len(mixes)])
            if i % 2:  # read the first answer, then leave while the next one is being made
                assert sock.recv(65536).startswith(b"HTTP/1.1 200 OK")
    # the server is fine, and whatever it logged about those clients has been written
    assert (
        httpx.post(f"{bounded.url}/v1/grammar/correct", json={"sentence": "I am here."}, timeout=30).status_code == 200
    )
    time.sleep(0.5)
    log = bounded.log_path.read_text(errors="replace")
    assert "ERROR" not in log and "Traceback" not in log, log[-4000:]
    assert "ASGI callable returned without completing response" not in log


def test_every_route_is_rate_limited_and_x_forwarded_for_does_not_dodge_it(limited):
    gets = ["/metrics", "/v1/engine/stats", "/v1/models", "/docs", "/metrics", "/v1/engine/stats", "/openapi.json"]
    with httpx.Client(base_url=limited.url, timeout=10) as client:
        answers = [client.get(path, headers={"X-Forwarded-For": f"203.0.113.{i}"}) for i, path in enumerate(gets)]
        assert [a.status_code for a in answers] == [200] * 4 + [429] * 3, [(a.url, a.status_code) for a in answers]
        for refused in answers[4:]:
            assert refused.json()["error"]["code"] == "rate_limited" and int(refused.headers["retry-after"]) >= 1
        # the probes have their own bucket: a client over its limit still passes its health checks
        assert {client.get(path).status_code for path in ("/healthz", "/readyz") * 10} == {200}
