"""The app with its engine in a child process (`CORRIGE_ENGINE_PROCESS`, the default of `corrige serve`)."""

import os
import signal
import threading
import time

import numpy as np
from fastapi.testclient import TestClient
from server_support import error_of

from corrige.engine.process import EngineProcess
from corrige.server.app import create_app


def test_corrections_health_and_metrics_come_through_the_engine_process(make_settings):
    with TestClient(create_app(make_settings(engine_process=True))) as client:
        assert isinstance(client.app.state.engine, EngineProcess)
        # the server's event loop reads the results pipe itself: no reader thread in between
        assert not any(t.name == "engine-process-reader" for t in threading.enumerate())
        assert client.get("/readyz").status_code == 200
        answers = [client.post("/v1/grammar/correct", json={"sentence": f"I goed home {i}."}) for i in range(3)]
        assert all(a.status_code == 200 and a.json()["usage"]["completion_tokens"] > 0 for a in answers)
        stats = client.get("/v1/engine/stats").json()["engine"]
        assert stats["finished"] >= 4 and stats["slots_used"] == 0  # the warm-up and ours
        metrics = client.get("/metrics").text
        assert "corrige:generation_tokens_total" in metrics and "corrige:batch_size_count" in metrics
        engine = client.app.state.engine
    assert not engine.running  # the lifespan closed the child


def array_bytes(obj, seen: set[int] | None = None) -> int:
    """Bytes of the NumPy arrays reachable from `obj` through its attributes and containers."""
    seen = set() if seen is None else seen
    if id(obj) in seen or isinstance(obj, (type, str, bytes, int, float)):
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, dict):
        return sum(array_bytes(v, seen) for v in obj.values())
    if isinstance(obj, (list, tuple, set, frozenset)):
        return sum(array_bytes(v, seen) for v in obj)
    fields = dict(getattr(obj, "__dict__", {}))
    fields.update((s, getattr(obj, s)) for s in getattr(type(obj), "__slots__", ()) if hasattr(obj, s))
    return sum(array_bytes(v, seen) for v in fields.values())


def test_the_weights_are_loaded_in_the_engine_child_only(make_settings, model_dir):
    weights_bytes = (model_dir / "model.safetensors").stat().st_size
    with TestClient(create_app(make_settings(engine_process=True))) as client:
        tutor = client.app.state.tutor
        # the server reads the tokenizer and the model's configuration; the child holds the weights
        assert not hasattr(tutor, "weights") and not hasattr(tutor, "drafter")
        assert array_bytes(tutor) < weights_bytes // 10
        assert tutor.cfg == client.app.state.engine.model_config
        answer = client.post("/v1/grammar/correct", json={"sentence": "I goed home."})
        assert answer.status_code == 200 and answer.json()["usage"]["completion_tokens"] > 0
    with TestClient(create_app(make_settings(engine_process=False))) as client:
        # the engine on a thread of the server: the server's tutor holds the whole model
        assert array_bytes(client.app.state.tutor) >= weights_bytes // 2


def kill_engine_process(client) -> int:
    pid = client.get("/v1/engine/stats").json()["server"]["engine_pid"]
    os.kill(pid, signal.SIGKILL)
    return pid


def wait_for(condition, what: str, timeout: float = 30.0):
    give_up = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < give_up, f"never happened: {what}"
        time.sleep(0.01)
    return value


def test_a_killed_engine_process_is_replaced_and_health_stays_green(make_settings):
    with TestClient(create_app(make_settings(engine_process=True))) as client:
        dead = kill_engine_process(client)
        wait_for(lambda: client.get("/v1/engine/stats").json()["server"]["engine_restarts"] == 1, "a restart")
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code == 200
        answer = client.post("/v1/grammar/correct", json={"sentence": "I goed home."})
        assert answer.status_code == 200
        assert client.get("/v1/engine/stats").json()["server"]["engine_pid"] != dead


def test_an_engine_given_up_fails_liveness_and_readiness(make_settings):
    with TestClient(create_app(make_settings(engine_process=True, engine_max_restarts=0))) as client:
        kill_engine_process(client)
        dead = wait_for(lambda: (r := client.get("/healthz")).status_code == 503 and r, "liveness fails")
        assert error_of(dead)["code"] == "engine_failed"
        assert client.get("/readyz").status_code == 503
        refused = client.post("/v1/grammar/correct", json={"sentence": "I goed home."})
        assert refused.status_code == 503 and error_of(refused)["code"] == "engine_closed"


def test_a_given_up_engine_does_not_signal_a_host_that_is_not_uvicorn(make_settings):
    # a host process with its own SIGTERM handler (a test runner after ray.init, a notebook): the
    # app inside it must not send it SIGTERM when its engine is given up
    received: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: received.append(signum))
    try:
        with TestClient(create_app(make_settings(engine_process=True, engine_max_restarts=0))) as client:
            kill_engine_process(client)
            wait_for(lambda: client.get("/healthz").status_code == 503, "liveness fails")
            time.sleep(0.2)  # the signal, if any, is raised on the event loop right after
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert received == []
