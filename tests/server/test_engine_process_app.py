"""The app with its engine in a child process (`CORRIGE_ENGINE_PROCESS`, the default of `corrige serve`)."""

import threading

from fastapi.testclient import TestClient

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
