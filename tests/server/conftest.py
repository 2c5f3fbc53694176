"""Fixtures of the server tests: apps built with `create_app(settings)` around the fixture model."""

from __future__ import annotations

import os
import threading
from contextlib import ExitStack
from pathlib import Path

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


def settings_for(fixture_model: Path, directory: Path, **overrides) -> Settings:
    """The tests' settings: the fixture model (unless `model_dir` is among the overrides), rate limit
    off, the engine on a thread, files in `directory`."""
    values = {
        "model_dir": fixture_model,
        "rate_limit": 0,
        "access_log": False,
        "blas_threads": 0,
        "engine_process": False,  # a thread: the tests swap its model runner (tests/engine covers the process)
        "trace_store": directory / "traces.sqlite",
        **overrides,
    }
    return Settings(**values)


@pytest.fixture
def make_settings(model_dir, tmp_path):
    def make(**overrides) -> Settings:
        return settings_for(model_dir, tmp_path, **overrides)

    return make


@pytest.fixture
def client(make_settings):
    with TestClient(create_app(make_settings())) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def shared_app(model_dir, tmp_path_factory):
    """`shared_app(**overrides)`: a started app (its TestClient) for a whole module, for tests that
    only send requests the server answers or refuses without keeping anything a later test could
    see (an app start is seconds of CPU: the tutor, the portal, the rule cards, the warm-up). Its
    files (traces; the portal's database with `own_portal_db=True`) in a directory of its own, its
    settings without the developer's CORRIGE_* variables, as a test's own app."""
    with pytest.MonkeyPatch.context() as env, ExitStack() as stack:
        for name in list(os.environ):
            if name.startswith("CORRIGE_"):
                env.delenv(name)

        def start(own_portal_db: bool = False, **overrides) -> TestClient:
            directory = tmp_path_factory.mktemp("shared-app")
            if own_portal_db:
                overrides["portal_db"] = directory / "portal.sqlite"
            return stack.enter_context(TestClient(create_app(settings_for(model_dir, directory, **overrides))))

        yield start


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
