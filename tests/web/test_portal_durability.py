"""No acknowledged audit record is lost when the server is killed with SIGKILL mid-burst.

Twenty times: start a server on the same database, fire a burst of quiz answers from several
threads, kill -9 the server as soon as a few answers have been acknowledged (the others are
in flight, or not sent yet), then check the file the killed process left: every request id
whose HTTP response arrived is in the audit log. The next start must open that file (WAL
recovery) and see the same records through the API, with the learner's session intact (the
session key is kept next to the database).
"""

from __future__ import annotations

import signal
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
from conftest import UVICORN, portal_env
from e2e_support import ServerProcess

CYCLES = 20
BURST = 12  # answers per cycle
WORKERS = 6  # concurrent clients
KILL_AFTER = 3  # acknowledgements before the kill


def recorded(db_path) -> set[str]:
    conn = sqlite3.connect(db_path)
    try:
        return {row[0] for row in conn.execute("SELECT request_id FROM submissions")}
    finally:
        conn.close()


def attempts(progress: dict) -> int:
    return sum(row["attempts"] for row in progress["categories"])


def test_no_acknowledged_record_is_lost_across_20_kill_9_restarts(model_dir, tmp_path):
    # rules, tracing and metrics off: they do not touch the audit log and would only slow each start
    env = portal_env(
        model_dir,
        tmp_path,
        CORRIGE_WARMUP="false",
        CORRIGE_RULES="off",
        CORRIGE_TRACING="false",
        CORRIGE_METRICS="false",
    )
    db_path = tmp_path / "portal.sqlite"
    acknowledged: set[str] = set()
    cut_off = 0
    cookies: httpx.Cookies | None = None
    csrf = ""
    for cycle in range(CYCLES):
        server = ServerProcess(UVICORN, env, tmp_path / f"server-{cycle}.log").start()
        try:
            with httpx.Client(base_url=server.url, cookies=cookies, timeout=30.0) as client:
                if cookies is None:
                    session = client.get("/portal/api/session").json()
                    cookies, csrf = httpx.Cookies(client.cookies), session["csrf_token"]
                else:  # the restarted server sees every acknowledged answer, for the same learner
                    assert attempts(client.get("/portal/api/progress").json()) == len(recorded(db_path))
                question = client.get("/portal/api/quiz/question").json()
            acks = burst(server, cookies, csrf, question, cycle)
            acknowledged |= acks
            cut_off += BURST - len(acks)
        finally:
            if server.proc is not None and server.proc.poll() is None:
                server.proc.send_signal(signal.SIGKILL)
            server.proc.wait(timeout=10)
        assert server.proc.returncode == -signal.SIGKILL, server.log()
        missing = acknowledged - recorded(db_path)
        assert not missing, f"cycle {cycle}: {len(missing)} acknowledged records lost: {sorted(missing)[:5]}"
    assert len(acknowledged) >= CYCLES * KILL_AFTER
    assert cut_off > 0, "every burst finished before the kill: the test did not kill mid-burst"
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def burst(server: ServerProcess, cookies: httpx.Cookies, csrf: str, question: dict, cycle: int) -> set[str]:
    """Send BURST answers from WORKERS threads; SIGKILL the server after KILL_AFTER acknowledgements.
    Returns the request ids whose whole response arrived with status 200."""
    acks: set[str] = set()
    lock = threading.Lock()
    enough = threading.Event()
    body = {"question_id": question["question_id"], "answer": question["sentence"]}

    def answer(i: int) -> None:
        request_id = f"c{cycle}-{i}"
        headers = {"X-CSRF-Token": csrf, "X-Request-ID": request_id}
        try:
            with httpx.Client(base_url=server.url, cookies=cookies, timeout=30.0) as client:
                response = client.post("/portal/api/quiz/answer", json=body, headers=headers)
                if response.status_code == 200 and response.json()["request_id"] == request_id:
                    with lock:
                        acks.add(request_id)
                        if len(acks) >= KILL_AFTER:
                            enough.set()
        except httpx.TransportError:
            pass  # cut off by the kill: not acknowledged

    with ThreadPoolExecutor(WORKERS) as pool:
        futures = [pool.submit(answer, i) for i in range(BURST)]
        enough.wait(timeout=60)
        server.proc.send_signal(signal.SIGKILL)
        for future in futures:
            future.result()
    with lock:
        return set(acks)
