"""The engine process killed under load, against real servers: the server's standby engine process
takes over (and a new standby is started), few requests fail (503 `engine_restarting` with
`Retry-After`), service resumes within 5 s, and `/healthz` and `/readyz` tell the truth
throughout; an engine that dies too often makes `/healthz` answer 503 `engine_failed`, then takes
the server down with a failing exit status, so whatever runs it sees why and can start a fresh one.

The only time bound is the issue's "resumes within 5 s", measured from the kill to the first
correction answered after it, by a client that sends them back to back.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from dataclasses import dataclass

import httpx
from e2e_support import wait_for

SENTENCES = [
    "Yesterday I goed to the store.",
    "She like cats very much.",
    "He don't want to come.",
    "We was late for the meeting.",
]
CLIENTS = 4
AFTER_KILL = 600  # requests answered after the kill, so that 1% of them is a few requests


@dataclass(frozen=True)
class Answer:
    start: float
    end: float
    status: int  # 0: no HTTP answer at all
    code: str | None = None
    retry_after: str | None = None


def answer_of(start: float, response: httpx.Response) -> Answer:
    code = None if response.status_code == 200 else response.json()["error"]["code"]
    return Answer(start, time.monotonic(), response.status_code, code, response.headers.get("retry-after"))


class Load:
    """`CLIENTS` threads posting corrections back to back; after a 503 each waits as `Retry-After`
    asks (at most 1 s), as a well-behaved client does."""

    def __init__(self, url: str) -> None:
        self.url = f"{url}/v1/grammar/correct"
        self.answers: list[Answer] = []
        self.stopped = threading.Event()
        self._threads = [threading.Thread(target=self._client, args=(k,), daemon=True) for k in range(CLIENTS)]

    def __enter__(self) -> Load:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stopped.set()
        for thread in self._threads:
            thread.join(timeout=60)

    def post(self, client: httpx.Client, i: int) -> Answer:
        start = time.monotonic()
        try:
            answer = answer_of(start, client.post(self.url, json={"sentence": SENTENCES[i % len(SENTENCES)]}))
        except httpx.HTTPError:
            answer = Answer(start, time.monotonic(), 0)
        self.answers.append(answer)  # list.append is atomic
        return answer

    def _client(self, k: int) -> None:
        with httpx.Client(timeout=30.0) as client:
            i = k
            while not self.stopped.is_set():
                answer = self.post(client, i)
                if answer.status == 503:
                    time.sleep(min(float(answer.retry_after or 1), 1.0))
                i += 1

    def first_success_after(self, since: float, timeout: float = 60.0) -> float:
        """Back to back from now on, until a correction is answered; when it was."""
        with httpx.Client(timeout=30.0) as client:
            for i in range(100_000):
                answer = self.post(client, i)
                if answer.status == 200:
                    return answer.end
                assert time.monotonic() < since + timeout, "service never resumed"
        raise AssertionError("service never resumed")

    def answered_since(self, since: float) -> int:
        return sum(1 for a in self.answers if a.start > since)


@dataclass(frozen=True)
class Probe:
    start: float  # when /readyz was asked
    end: float  # ...and when it answered
    healthz: int
    readyz: int
    readyz_code: str | None
    retry_after: str | None


class Monitor:
    """Polls `/healthz` and `/readyz` every 20 ms on a thread of its own."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.probes: list[Probe] = []
        self.stopped = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self) -> Monitor:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stopped.set()
        self._thread.join(timeout=30)

    def _poll(self) -> None:
        with httpx.Client(timeout=30.0) as client:
            while not self.stopped.wait(0.02):
                health = client.get(f"{self.url}/healthz")
                start = time.monotonic()
                ready = client.get(f"{self.url}/readyz")
                code = None if ready.status_code == 200 else ready.json()["error"]["code"]
                retry_after = ready.headers.get("retry-after")
                probe = Probe(start, time.monotonic(), health.status_code, ready.status_code, code, retry_after)
                self.probes.append(probe)


def engine_pid(server) -> int:
    return server.stats()["server"]["engine_pid"]


def test_a_killed_engine_process_is_replaced_under_load(make_server):
    server = make_server("uvicorn")
    with Monitor(server.url) as monitor, Load(server.url) as load:
        wait_for(lambda: sum(a.status == 200 for a in load.answers) >= 100, "the load warms up", timeout=120)
        dead = engine_pid(server)
        killed_at = time.monotonic()
        os.kill(dead, signal.SIGKILL)
        resumed_at = load.first_success_after(killed_at)
        wait_for(lambda: load.answered_since(killed_at) >= AFTER_KILL, f"{AFTER_KILL} answers", timeout=300)
    stats = server.stats()["server"]

    assert resumed_at - killed_at < 5.0
    answers = load.answers
    failed = [a for a in answers if a.status != 200]
    assert len(failed) < 0.01 * len(answers), failed
    # what failed was in flight when the engine died, and said so, as documented
    assert all((a.status, a.code) == (503, "engine_restarting") and a.retry_after for a in failed), failed
    assert all(a.start < resumed_at for a in failed)
    assert stats["engine_restarts"] == 1 and stats["engine_pid"] != dead

    # the server was alive throughout; readiness failed while the engine restarted, and only then
    assert monitor.probes and all(p.healthz == 200 for p in monitor.probes)
    assert all(p.readyz == 200 for p in monitor.probes if p.end < killed_at)
    after = [p for p in monitor.probes if p.start > killed_at]
    states = "".join("U" if p.readyz == 200 else "D" for p in after)
    # U*: the moments before the server saw it die; D*: the standby takes over within a probe or two, or none
    assert re.fullmatch("U*D*U+", states), states
    down = [p for p in after if p.readyz != 200]
    assert all(p.readyz_code == "engine_restarting" and p.retry_after for p in down)
    assert all(p.start < resumed_at for p in down)


def standby_pid(server) -> int | None:
    return server.stats()["server"]["engine_standby_pid"]


def test_the_standby_engine_process_takes_over_and_a_new_standby_is_started(make_server):
    server = make_server("serve")
    standby = wait_for(lambda: standby_pid(server), "a standby engine process", timeout=60)
    dead = engine_pid(server)
    assert standby != dead
    os.kill(dead, signal.SIGKILL)
    wait_for(lambda: engine_pid(server) == standby, "the standby serves", timeout=60)
    answer = httpx.post(f"{server.url}/v1/grammar/correct", json={"sentence": SENTENCES[0]}, timeout=30)
    assert answer.status_code == 200 and answer.json()["corrected"]
    assert httpx.get(f"{server.url}/readyz").status_code == 200
    following = wait_for(lambda: standby_pid(server), "the next standby", timeout=60)
    assert following not in (dead, standby)
    assert server.stats()["server"]["engine_restarts"] == 1


def says_engine_failed_before_exiting(server) -> None:
    """/healthz answers 503 engine_failed (the error model) while the server still runs."""

    def failed() -> bool:
        assert server.proc.poll() is None, f"the server exited before /healthz said why:\n{server.log()}"
        health = httpx.get(f"{server.url}/healthz", timeout=10)
        return health.status_code == 503 and health.json()["error"]["code"] == "engine_failed"

    wait_for(failed, "/healthz answers 503 engine_failed", timeout=60)


def test_an_engine_that_keeps_dying_takes_corrige_serve_down_with_status_1(make_server):
    server = make_server("serve", CORRIGE_ENGINE_MAX_RESTARTS="1")
    first = engine_pid(server)
    os.kill(first, signal.SIGKILL)
    ready = lambda: httpx.get(f"{server.url}/readyz").status_code == 200  # noqa: E731
    second = wait_for(lambda: ready() and engine_pid(server) != first and engine_pid(server), "a new engine")
    os.kill(second, signal.SIGKILL)  # one more death than the 1 a minute allowed
    says_engine_failed_before_exiting(server)
    assert server.proc.wait(timeout=60) == 1
    assert "giving up" in server.log()


def test_under_plain_uvicorn_the_status_is_sigterms(make_server):
    server = make_server("uvicorn", CORRIGE_ENGINE_MAX_RESTARTS="0")
    os.kill(engine_pid(server), signal.SIGKILL)
    says_engine_failed_before_exiting(server)
    assert server.proc.wait(timeout=60) == -signal.SIGTERM  # uvicorn stops, then raises the signal again
    assert "giving up" in server.log()
