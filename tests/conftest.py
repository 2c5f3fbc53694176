"""Shared fixtures. Torch and NumPy share the process in some tests: keep OpenMP passive
(torch's spinning worker threads otherwise slow small NumPy calls many times over)."""

import os

import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    """Settings come from each test, never from the developer's CORRIGE_* variables."""
    for name in list(os.environ):
        if name.startswith("CORRIGE_"):
            monkeypatch.delenv(name)
