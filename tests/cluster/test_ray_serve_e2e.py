"""`corrige serve --replicas 2` for real: a local Ray cluster, the proxy and two replicas.

The one Ray test of the suite (Ray's start and two model loads take a minute or more on two busy
cores), so one run checks the API through the proxy, the replicas' metrics, that every port of
Ray's is on the loopback address the server was given (`--host 127.0.0.1`), that a replica
killed under load costs no client a response outside the error model, and the drain on SIGTERM.
The load figures, answers compared over 100 sentences and the replacement's time are `corrige
bench replicas` (make bench, docs/BENCHMARKS.md)."""

from __future__ import annotations

import ipaddress
import json
import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import psutil
import pytest

from corrige.bench.replicas import metrics_ports_up, replica_pids, stop_gracefully, wait_for_replicas
from corrige.bench.servers import LabServer, free_port

pytest.importorskip("ray.serve", reason="the cluster extra (ray[serve]) is not installed")

READY_TIMEOUT_S = 240.0
SENTENCE = {"sentence": "She have two cats"}
LOAD_CLIENTS = 8  # of which every third streams: five send texts, so each replica nearly always holds two
# what the clients that do not stream send while a replica dies: a text of several sentences,
# read afresh (`no-cache`), so that a replica holds each request for a good share of its round
# trip through the proxy and the killed one is all but sure to hold some (those are sent again)
LOAD_TEXT = {"text": " ".join(["She have two cats.", "Yesterday I goed to the store.", "My sister go to school."] * 5)}
# what a client may get instead of its answer while a replica dies: the error model's codes of a
# replica or engine that went away
GONE_CODES = {"replica_unavailable", "engine_restarting", "engine_closed", "draining"}


def listening(pid: int) -> list[tuple[str, int, str]]:
    """(address, port, process name) of every TCP socket listening in `pid`'s process tree: the
    command, Ray's GCS, raylet, agents, the controller, the proxy and the replicas."""
    found = []
    root = psutil.Process(pid)
    for proc in [root, *root.children(recursive=True)]:
        try:
            name = " ".join(proc.cmdline())[:60]
            sockets = proc.net_connections(kind="tcp")
        except psutil.Error:
            continue  # exited meanwhile
        found += [(c.laddr.ip, c.laddr.port, name) for c in sockets if c.status == psutil.CONN_LISTEN]
    return found


def is_loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    mapped = getattr(ip, "ipv4_mapped", None)  # an IPv6 socket bound to ::ffff:127.0.0.1
    return (mapped or ip).is_loopback


def load_while_a_replica_dies(url: str, seconds_before: float, seconds_after: float) -> tuple[list[dict], int]:
    """`LOAD_CLIENTS` clients sending corrections back to back; after `seconds_before`, SIGKILL to
    one replica's process. Each outcome: status, content type, body (or the transport error)."""
    outcomes: list[dict] = []
    stop = threading.Event()

    def client(k: int) -> None:
        stream = k % 3 == 2
        with httpx.Client(base_url=url, timeout=60.0) as http:
            while not stop.is_set():
                try:
                    body = {**SENTENCE, "stream": True} if stream else LOAD_TEXT
                    response = http.post("/v1/grammar/correct", json=body, headers={"Cache-Control": "no-cache"})
                    outcomes.append(
                        {
                            "status": response.status_code,
                            "type": response.headers.get("content-type", ""),
                            "body": response.text,
                            "stream": stream,
                        }
                    )
                except httpx.TransportError as exc:
                    outcomes.append({"status": 0, "type": "", "body": repr(exc), "stream": stream})

    threads = [threading.Thread(target=client, args=(k,)) for k in range(LOAD_CLIENTS)]
    for thread in threads:
        thread.start()
    time.sleep(seconds_before)
    victim = replica_pids()[0]
    os.kill(victim, signal.SIGKILL)
    time.sleep(seconds_after)
    stop.set()
    for thread in threads:
        thread.join(timeout=90)
    return outcomes, victim


def wait_for_log(server: LabServer, line: str, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while line not in server.log_path.read_text(errors="replace"):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True


def error_code(outcome: dict) -> str | None:
    """The error model's code of a failed answer, or of the error event that ends a stream."""
    if outcome["stream"] and outcome["status"] == 200:
        last = [line for line in outcome["body"].splitlines() if line.startswith("data:")][-1]
        return json.loads(last[5:]).get("error", {}).get("code")
    return json.loads(outcome["body"])["error"]["code"]


@pytest.mark.slow
# Ray Serve's replicas are found machine-wide (`replica_pids`) and need the CPUs: alone under -n 2
@pytest.mark.exclusive
def test_two_replicas_behind_the_proxy() -> None:
    metrics_port = free_port()
    server = LabServer.corrige("continuous", extra=["--replicas", "2", "--metrics-port", str(metrics_port)])
    try:
        server.start().wait_ready(READY_TIMEOUT_S)
        wait_for_replicas(2, metrics_port, READY_TIMEOUT_S)
        assert len(replica_pids()) >= 2
        with httpx.Client(base_url=server.url, timeout=30.0) as client:
            response = client.post("/v1/grammar/correct", json={"sentence": "Yesterday I goed to the store"})
            assert response.status_code == 200
            assert response.json()["corrected"] == "Yesterday I went to the store"
            assert len(response.headers.get_list("x-request-id")) == 1
            assert response.headers["x-request-id"] == response.json()["request_id"]
            # the error model, unchanged
            refused = client.post("/v1/grammar/correct", json={"sentence": ""})
            assert refused.status_code == 422 and "error" in refused.json()
            # a stream, event by event, ending with the result
            body = {"sentence": "She have two cats", "stream": True}
            with client.stream("POST", "/v1/grammar/correct", json=body) as s:
                assert s.status_code == 200 and s.headers["content-type"].startswith("text/event-stream")
                events = [line[6:].strip() for line in s.iter_lines() if line.startswith("event:")]
            assert "token" in events and events[-1] == "result"
            # /metrics: each replica on its own port, never through the proxy
            proxied = client.get("/metrics")
            assert proxied.status_code == 404 and proxied.json()["error"]["code"] == "metrics_disabled"
        ports = metrics_ports_up(metrics_port, 6)
        assert len(ports) == 2
        # the proxy may send a few requests all to one replica: send rounds of 8 at once until each
        # replica has counted some (bounded), then every replica's own /metrics must show its count
        for _ in range(10):
            totals = [httpx.get(f"http://127.0.0.1:{p}/metrics").text.count("corrige:requests_total{") for p in ports]
            if all(totals):
                break
            with ThreadPoolExecutor(8) as pool:
                list(
                    pool.map(
                        lambda _: httpx.post(f"{server.url}/v1/grammar/correct", json=SENTENCE, timeout=30), range(8)
                    )
                )
        assert all(totals), totals

        # Ray's ports (its GCS, raylet, agents, the controller, the proxy, each replica's gRPC
        # server) listen on the loopback address the server was given, none on every interface
        sockets = listening(server.pid)
        assert len({port for _, port, _ in sockets}) >= 8, sockets
        assert [s for s in sockets if not is_loopback(s[0])] == []
        assert server.port in {port for _, port, _ in sockets}

        # a replica killed under load: the requests it held are sent to the other one, and any
        # that fails answers in the error model (never the proxy's plain-text 500)
        outcomes, victim = load_while_a_replica_dies(server.url, seconds_before=4.0, seconds_after=8.0)
        assert victim not in replica_pids()
        assert len(outcomes) >= 20, outcomes
        assert [o for o in outcomes if o["status"] in (0, 500)] == []
        refused = [o for o in outcomes if o["status"] != 200]
        assert all(o["type"].startswith("application/json") for o in refused), refused
        ended = [error_code(o) for o in outcomes if o["status"] != 200 or o["stream"]]
        assert {code for code in ended if code is not None} <= GONE_CODES, ended
        streams = [o for o in outcomes if o["stream"]]
        assert all(error_code(o) in GONE_CODES or "event: result" in o["body"] for o in streams)
        # the requests in flight on the killed replica were sent again (the proxy logs each; Ray
        # forwards its actors' logs to the command's a few seconds late on busy cores)
        assert wait_for_log(server, "its replica stopped before answering; sent again", 30.0), server.log_tail()

        # SIGTERM: the replicas drain, Ray stops, the command exits 0
        assert server.proc is not None
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=120) == 0, server.log_tail()
        assert replica_pids() == []
    finally:
        stop_gracefully(server)


def test_config_is_json_serialisable_for_the_replicas() -> None:
    """What the CLI hands every replica (Ray pickles it; the YAML route passes plain data) is plain data."""
    from corrige.cluster.replica import ReplicaPlan
    from corrige.server.settings import Settings

    options = ReplicaPlan.from_settings(Settings(), 2, 4).deployment_options()
    assert json.loads(json.dumps(options)) == options
