"""Real servers on loopback for the serving-lab tests; each fixture stops what it started."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))  # the shared fixture model

from server_support import build_fixture_model, bundled_model_available  # noqa: E402

from corrige.bench.servers import LabServer  # noqa: E402
from corrige.tutor.agent import BUNDLED_MODEL  # noqa: E402


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory) -> Path:
    """The bundled tutor when it is there (real corrections), else a random fixture model."""
    if bundled_model_available():
        return BUNDLED_MODEL
    return build_fixture_model(tmp_path_factory.mktemp("bench-model"))


@pytest.fixture(scope="module")
def continuous_server(model_dir):
    with LabServer.corrige("continuous", model_dir) as server:
        yield server
