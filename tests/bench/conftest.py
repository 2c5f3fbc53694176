"""Real servers on loopback for the serving-lab tests; each fixture stops what it started."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))  # the shared fixture model

from server_support import build_fixture_model, bundled_model_available  # noqa: E402

from corrige.bench.servers import LabServer  # noqa: E402
from corrige.tutor.agent import BUNDLED_MODEL, SEED_MODEL  # noqa: E402


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory) -> Path:
    """The bundled tutor when it is there (real corrections), else a random fixture model."""
    if bundled_model_available():
        return BUNDLED_MODEL
    return build_fixture_model(tmp_path_factory.mktemp("bench-model"))


@pytest.fixture(scope="session")
def seed_model_dir(model_dir) -> Path:
    """The seed model when it is there, else `model_dir`: for the lab's own mechanics (what a run
    measures and reports), which any model shows, it starts and answers faster than the reader."""
    return SEED_MODEL if (SEED_MODEL / "model.safetensors").is_file() else model_dir


@pytest.fixture(scope="module")
def continuous_server(seed_model_dir):
    with LabServer.corrige("continuous", seed_model_dir) as server:
        yield server
