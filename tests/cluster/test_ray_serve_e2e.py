"""`corrige serve --replicas 2` for real: a local Ray cluster, the proxy and two replicas.

The one Ray test of the suite (Ray's start and two model loads take a minute or more on two busy
cores); the load figures, answers compared over 100 sentences and the killed replica are
`corrige bench replicas` (make bench, docs/BENCHMARKS.md)."""

from __future__ import annotations

import json
import signal
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from corrige.bench.replicas import metrics_ports_up, replica_pids, stop_gracefully, wait_for_replicas
from corrige.bench.servers import LabServer, free_port

pytest.importorskip("ray.serve", reason="the cluster extra (ray[serve]) is not installed")

READY_TIMEOUT_S = 240.0
SENTENCE = {"sentence": "She have two cats"}


@pytest.mark.slow
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
