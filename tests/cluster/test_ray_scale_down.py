"""Scale-down under Ray Serve drains: two replicas go to one while requests are in flight on
both, and every request is answered, those in flight on the replica that stops included.

The deployment is the one `corrige serve --replicas` runs (`corrige.cluster.ray_serve.app_builder`,
as deploy/ray/serve.yaml names it), started in this process on a local Ray with the fixture
model (its loads take seconds, not the bundled model's minute), each model step slowed
(`debug_step_delay_ms`) so that a request stays in flight for a second or two. Scaling down
is what `serve deploy` of deploy/ray/serve.yaml with a lower `num_replicas` does (the same
config with another replica count: Ray scales the deployment; a new `serve.run` would instead
replace every replica in turn). Which replica served which request is read from the trace
store both replicas share (`service.instance.id` is host:pid), so the test shows the stopped
replica's own requests answered, not only the survivor's. About 90 s on a busy 2-core machine,
most of it Ray's start.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

pytest.importorskip("ray.serve", reason="the cluster extra (ray[serve]) is not installed")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from server_support import build_fixture_model  # noqa: E402

from corrige.bench.replicas import replica_pids  # noqa: E402
from corrige.bench.servers import free_port  # noqa: E402

IN_FLIGHT = 12  # requests sent at once just before the scale-down: both replicas hold some
STEP_DELAY_MS = 40  # each model step slowed: a request of the fixture model lasts one to two seconds
START_TIMEOUT_S = 120.0


def running_replicas(serve) -> int:
    status = serve.status().applications.get("corrige")
    if status is None:
        return 0
    deployment = status.deployments.get("corrige")
    return 0 if deployment is None else deployment.replica_states.get("RUNNING", 0)


def wait_for(condition, what: str, timeout: float = START_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def served_by(trace_store: Path, request_ids: list[str]) -> dict[str, int]:
    """Each request's replica process id, from its root span's `service.instance.id` (host:pid)."""
    conn = sqlite3.connect(trace_store)
    try:
        marks = ",".join("?" * len(request_ids))
        rows = conn.execute(
            f"SELECT request_id, attributes FROM spans WHERE parent_id IS NULL AND request_id IN ({marks})",
            request_ids,
        ).fetchall()
    finally:
        conn.close()
    return {rid: int(json.loads(attrs)["service.instance.id"].rsplit(":", 1)[1]) for rid, attrs in rows}


@pytest.mark.slow
# Ray Serve's replicas are found machine-wide (`replica_pids`) and need the CPUs: alone under -n 2
@pytest.mark.exclusive
def test_scaling_from_two_replicas_to_one_answers_every_request_in_flight(tmp_path):
    import ray
    from ray import serve

    from corrige.cluster.ray_serve import APP_NAME

    trace_store = tmp_path / "traces.sqlite"
    overrides = {
        "model_dir": str(build_fixture_model(tmp_path / "model")),
        "warmup": False,
        "rules": "off",
        "rate_limit": 0,
        "access_log": False,
        "debug_step_delay_ms": STEP_DELAY_MS,
        "trace_store": str(trace_store),
        "portal_db": str(tmp_path / "portal.sqlite"),
    }
    metrics_port, port = free_port(), free_port()

    def deploy(replicas: int) -> None:
        """What `serve deploy` of deploy/ray/serve.yaml does (the CLI sends this config to Ray's
        dashboard, which is off here): the same application and arguments each time, so the
        replica count alone changes and the deployment scales instead of replacing its replicas."""
        from ray.serve.context import _get_global_client
        from ray.serve.schema import ServeDeploySchema

        app = {
            "name": APP_NAME,
            "route_prefix": "/",
            "import_path": "corrige.cluster.ray_serve:app_builder",
            "args": {"replicas": 2, "metrics_port": metrics_port, "settings": overrides},
            "deployments": [{"name": "corrige", "num_replicas": replicas}],
        }
        config = {"http_options": {"host": "127.0.0.1", "port": port}, "applications": [app]}
        _get_global_client().deploy_apps(ServeDeploySchema(**config))

    os.environ.setdefault("RAY_worker_niceness", "0")  # as `corrige serve --replicas` runs them
    # ray.init installs its own SIGTERM/SIGINT handlers in this (the test runner's) process; they
    # must not outlive the test, or a later in-process app that signals itself would end the run
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    ray.init(num_cpus=3, include_dashboard=False, logging_level="WARNING")
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        deploy(2)
        wait_for(lambda: running_replicas(serve) == 2 and len(replica_pids()) == 2, "two replicas")
        url = f"http://127.0.0.1:{port}/v1/grammar/correct"
        # the proxy routes once its replicas are known: the first answer says the application is up
        wait_for(lambda: httpx.post(url, json={"sentence": "She have two cats"}, timeout=30).status_code == 200, "it")
        before = replica_pids()

        answers: dict[str, int] = {}

        def ask(request_id: str) -> None:
            try:
                response = httpx.post(
                    url, json={"sentence": "She have two cats"}, headers={"X-Request-ID": request_id}, timeout=60
                )
                answers[request_id] = response.status_code
            except httpx.TransportError:
                answers[request_id] = 0  # no answer at all

        burst = [f"burst-{i}" for i in range(IN_FLIGHT)]
        threads = [threading.Thread(target=ask, args=(rid,)) for rid in burst]
        for thread in threads:
            thread.start()
        time.sleep(0.5)  # all sent, none finished (a request lasts a second or more)
        in_flight = IN_FLIGHT - len(answers)
        deploy(1)  # the scale-down: Ray stops routing to one replica and waits for its requests
        during = []  # new requests while it drains go to the other one
        while len(replica_pids()) > 1 and len(during) < 40:
            during.append(f"during-{len(during)}")
            ask(during[-1])
        for thread in threads:
            thread.join(timeout=90)
        wait_for(lambda: len(replica_pids()) == 1 and running_replicas(serve) == 1, "one replica")
        stopped = set(before) - set(replica_pids())
    finally:
        serve.shutdown()
        ray.shutdown()
        for sig, handler in handlers.items():
            signal.signal(sig, handler)

    assert in_flight >= IN_FLIGHT // 2, f"only {in_flight} requests were in flight at the scale-down"
    assert {rid: answers.get(rid) for rid in burst + during} == dict.fromkeys(burst + during, 200)
    assert len(stopped) == 1
    # the replica that stopped had requests of the burst in flight, and answered them
    servers = served_by(trace_store, burst)
    assert set(servers) == set(burst)
    assert stopped & set(servers.values()), f"the stopped replica {stopped} served none of {servers}"
