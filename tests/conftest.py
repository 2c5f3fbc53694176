"""Shared fixtures. Torch and NumPy share the process in some tests: keep OpenMP passive
(torch's spinning worker threads otherwise slow small NumPy calls many times over)."""

import os

import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@pytest.fixture(scope="session", autouse=True)
def state_home(tmp_path_factory):
    """The servers' default files (trace store, portal database) go to one temporary directory
    for the whole run, never to the user's ~/.local/state (the checked quiz bank, like the card
    embeddings, is a cache: ~/.cache/corrige, built once per machine). Session-wide
    and set before any other fixture, so module-scoped apps and subprocess servers see it too."""
    path = tmp_path_factory.mktemp("state-home")
    before = os.environ.get("XDG_STATE_HOME")
    os.environ["XDG_STATE_HOME"] = str(path)
    yield path
    if before is None:
        os.environ.pop("XDG_STATE_HOME", None)
    else:
        os.environ["XDG_STATE_HOME"] = before


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    """Settings come from each test, never from the developer's CORRIGE_* variables."""
    for name in list(os.environ):
        if name.startswith("CORRIGE_"):
            monkeypatch.delenv(name)


@pytest.fixture(scope="session", autouse=True)
def checked_quiz_bank():
    """A server says ready once its quiz bank is checked, which takes seconds of CPU where the
    machine has no cached bank (a fresh clone's first run): check it once, here, so that the
    first server started by a test does not spend its readiness wait on it."""
    from corrige.portal.quiz import QuestionBank
    from corrige.tutor.retrieval import default_cache_dir

    QuestionBank.cached(default_cache_dir())
