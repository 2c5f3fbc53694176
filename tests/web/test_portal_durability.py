"""No acknowledged audit record is lost when the server is killed with SIGKILL mid-burst, on
SQLite and on PostgreSQL (the `backend` fixture).

625 quiz answers per backend, in bursts of 125: start a real `corrige serve` on the same database
(5 times on each backend), fire a burst of answers from several threads, kill -9 the
server once 20 to 50% of them (drawn per burst) have been acknowledged (others are in flight, the
rest meet a dead server), then check what the killed process left: every request id whose HTTP
response arrived is in the audit log. The next start must open that database (SQLite: WAL
recovery) and see the same records through the API, with the learner's session intact (the
session key is kept next to the database).
"""

from __future__ import annotations

import random
import signal
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from conftest import portal_env
from e2e_support import ServerProcess

SUBMISSIONS = 625  # quiz answers sent (or cut off by a kill) per backend, over all the cycles
CYCLES = {"sqlite": 5, "postgresql": 5}  # kill -9 restarts (a server start is most of a cycle's time)
WORKERS = 6  # concurrent clients
KILL_AFTER = (0.2, 0.5)  # the kill comes after this share of a burst's answers is acknowledged (drawn per burst)


def attempts(progress: dict) -> int:
    return sum(row["attempts"] for row in progress["categories"])


@pytest.mark.slow  # 5 server starts per backend
def test_no_acknowledged_record_is_lost_across_kill_9_restarts(model_dir, tmp_path, backend):
    # rules, tracing and metrics off: they do not touch the audit log and would only slow each start
    env = portal_env(
        model_dir,
        tmp_path,
        CORRIGE_WARMUP="false",
        CORRIGE_RULES="off",
        CORRIGE_TRACING="false",
        CORRIGE_METRICS="false",
        **backend.server_env,
    )
    # a real `corrige serve`; PostgreSQL's URL through its --database-url option
    argv = ["-m", "corrige.cli", "serve", "--no-access-log"]
    if backend.name == "postgresql":
        argv += ["--database-url", env.pop("CORRIGE_DATABASE_URL")]
    cycles = CYCLES[backend.name]
    per_cycle = SUBMISSIONS // cycles
    draw = random.Random(0)
    acknowledged: set[str] = set()
    cut_off = 0
    cookies: httpx.Cookies | None = None
    csrf = ""
    for cycle in range(cycles):
        server = ServerProcess(argv, env, tmp_path / f"server-{cycle}.log").start()
        try:
            with httpx.Client(base_url=server.url, cookies=cookies, timeout=30.0) as client:
                if cookies is None:
                    session = client.get("/portal/api/session").json()
                    cookies, csrf = httpx.Cookies(client.cookies), session["csrf_token"]
                else:  # the restarted server sees every acknowledged answer, for the same learner
                    assert attempts(client.get("/portal/api/progress").json()) == len(backend.request_ids())
                question = client.get("/portal/api/quiz/question").json()
            kill_after = draw.randint(int(KILL_AFTER[0] * per_cycle), int(KILL_AFTER[1] * per_cycle))
            acks = burst(server, cookies, csrf, question, cycle, per_cycle, kill_after)
            acknowledged |= acks
            cut_off += per_cycle - len(acks)
        finally:
            if server.proc is not None and server.proc.poll() is None:
                server.proc.send_signal(signal.SIGKILL)
            server.proc.wait(timeout=10)
        assert server.proc.returncode == -signal.SIGKILL, server.log()
        missing = acknowledged - backend.request_ids()
        assert not missing, f"cycle {cycle}: {len(missing)} acknowledged records lost: {sorted(missing)[:5]}"
    assert len(acknowledged) >= KILL_AFTER[0] * SUBMISSIONS
    assert cut_off > 0, "every burst finished before the kill: the test did not kill mid-burst"
    if backend.name == "sqlite":
        conn = sqlite3.connect(backend.location)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.close()


def burst(
    server: ServerProcess, cookies: httpx.Cookies, csrf: str, question: dict, cycle: int, size: int, kill_after: int
) -> set[str]:
    """Send `size` answers from WORKERS threads; SIGKILL the server after `kill_after` acknowledgements.
    Returns the request ids whose whole response arrived with status 200."""
    acks: set[str] = set()
    lock = threading.Lock()
    enough = threading.Event()
    body = {"question_id": question["question_id"], "answer": question["sentence"]}

    def answer(i: int) -> None:
        request_id = f"c{cycle}-{i}"
        headers = {"X-CSRF-Token": csrf, "X-Request-ID": request_id}
        try:
            response = client.post("/portal/api/quiz/answer", json=body, headers=headers)
            if response.status_code == 200 and response.json()["request_id"] == request_id:
                with lock:
                    acks.add(request_id)
                    if len(acks) >= kill_after:
                        enough.set()
        except httpx.TransportError:
            pass  # cut off by the kill (or sent after it): not acknowledged

    # one client for the burst (a connection per worker): a client per answer would spend the burst making them
    limits = httpx.Limits(max_connections=WORKERS, max_keepalive_connections=WORKERS)
    with (
        httpx.Client(base_url=server.url, cookies=cookies, timeout=30.0, limits=limits) as client,
        ThreadPoolExecutor(WORKERS) as pool,
    ):
        futures = [pool.submit(answer, i) for i in range(size)]
        enough.wait(timeout=60)
        server.proc.send_signal(signal.SIGKILL)
        for future in futures:
            future.result()
    with lock:
        return set(acks)


def test_a_postgresql_that_goes_away_is_a_503_and_then_the_portal_serves_again(model_dir, tmp_path, postgres):
    import psycopg

    url = postgres.fresh_url() + "&application_name=corrige-lost"
    env = portal_env(model_dir, tmp_path, CORRIGE_WARMUP="false", CORRIGE_RULES="off", CORRIGE_DATABASE_URL=url)
    server = ServerProcess(["-m", "corrige.cli", "serve", "--no-access-log"], env, tmp_path / "server.log").start()
    try:
        with httpx.Client(base_url=server.url, timeout=30.0) as client:
            csrf = {"X-CSRF-Token": client.get("/portal/api/session").json()["csrf_token"]}
            question = client.get("/portal/api/quiz/question").json()
            body = {"question_id": question["question_id"], "answer": question["sentence"]}
            assert client.post("/portal/api/quiz/answer", json=body, headers=csrf).status_code == 200
            with psycopg.connect(postgres.url, autocommit=True) as admin:
                admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'corrige-lost'"
                )
            lost = client.post("/portal/api/quiz/answer", json=body, headers=csrf)
            assert lost.status_code == 503 and lost.json()["error"]["code"] == "portal_unavailable"
            assert lost.headers["retry-after"]
            assert client.post("/portal/api/quiz/answer", json=body, headers=csrf).status_code == 200
            assert attempts(client.get("/portal/api/progress").json()) == 2
    finally:
        server.stop()
