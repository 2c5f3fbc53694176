"""Fixtures of the observability tests: a model for the apps and servers, trace stores pre-filled
with synthetic traces (the dashboard reads whatever the store holds, however it got there)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TESTS / "server"))  # the shared fixture model
sys.path.insert(0, str(TESTS / "e2e"))  # the real-server helper

from server_support import build_fixture_model, bundled_model_available  # noqa: E402

from corrige.tutor.agent import BUNDLED_MODEL  # noqa: E402


@pytest.fixture(scope="session")
def fixture_model(tmp_path_factory) -> Path:
    """A small random model: quick to load, enough for apps whose corrections are not the point."""
    return build_fixture_model(tmp_path_factory.mktemp("obs-model"))


@pytest.fixture(scope="session")
def serving_model(fixture_model) -> Path:
    """The bundled tutor when it is there (real corrections on the dashboard), else the fixture model."""
    return BUNDLED_MODEL if bundled_model_available() else fixture_model
