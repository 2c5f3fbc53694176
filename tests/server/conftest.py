"""Fixtures of the server tests: apps built with `create_app(settings)` around the fixture model."""

from __future__ import annotations

import threading

import pytest
from fastapi.testclient import TestClient
from server_support import build_fixture_model

from corrige.engine import core as core_module
from corrige.engine import threads as threads_module
from corrige.engine.runner import ModelRunner
from corrige.server.app import create_app
from corrige.server.settings import Settings


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory):
    return build_fixture_model(tmp_path_factory.mktemp("fixture-model"))


@pytest.fixture
def make_settings(model_dir, tmp_path):
    def make(**overrides) -> Settings:
        values = {
            "model_dir": model_dir,
            "rate_limit": 0,
            "access_log": False,
            "blas_threads": 0,
            "engine_process": False,  # a thread: the tests swap its model runner (tests/engine covers the process)
            "trace_store": tmp_path / "traces.sqlite",
            **overrides,
        }
        return Settings(**values)

    return make


@pytest.fixture
def client(make_settings):
    with TestClient(create_app(make_settings())) as test_client:
        yield test_client


@pytest.fixture
def gate(monkeypatch):
    """Engines built in this test run a model step only when `gate.release()` is called."""
    semaphore = threading.Semaphore(0)

    class GatedRunner(ModelRunner):
        def execute(self, output, rows):
            semaphore.acquire()
            return super().execute(output, rows)

    monkeypatch.setattr(core_module, "ModelRunner", GatedRunner)
    monkeypatch.setattr(threads_module, "ModelRunner", GatedRunner)
    yield semaphore
    semaphore.release(100_000)  # let a still-running engine finish and close
