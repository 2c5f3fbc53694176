"""Shared fixtures. Torch and NumPy share the process in some tests: keep OpenMP passive
(torch's spinning worker threads otherwise slow small NumPy calls many times over)."""

import fcntl
import os
from pathlib import Path

import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def pytest_configure(config):
    """A pytest-xdist worker starts with COLUMNS=80 and LINES=24 in its environment, which a serial
    run does not have: the CLI's console (`corrige.cli.console`, made at import) would take them
    as its fixed size, and the commands' tables would wrap at 80 columns under -n 2 only."""
    if hasattr(config, "workerinput"):
        for name in ("COLUMNS", "LINES"):
            os.environ.pop(name, None)


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


SERVING_PATH = Path(__file__).resolve().parent / "serving_path"


@pytest.fixture(scope="session", autouse=True)
def serving_install():
    """The processes the tests start (servers, `corrige` commands) import no torch, as in a serving
    install: tests/serving_path, first on their PYTHONPATH, makes `import torch` fail, which spares
    each server start the seconds spaCy (thinc) would spend importing it. This process keeps torch."""
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SERVING_PATH), before]))
    yield
    if before is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = before


@pytest.fixture
def with_torch(monkeypatch):
    """For a test whose subprocess needs torch (the transformers peer server): the environment's own path."""
    path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(SERVING_PATH)]
    if path:
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(path))
    else:
        monkeypatch.delenv("PYTHONPATH", raising=False)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    """Settings come from each test, never from the developer's CORRIGE_* variables."""
    for name in list(os.environ):
        if name.startswith("CORRIGE_"):
            monkeypatch.delenv(name)


@pytest.fixture(scope="session", autouse=True)
def one_blas_thread():
    """NumPy on one BLAS thread in the test processes, as `corrige serve`, `corrige correct` and the
    engine run it (`corrige.model.blas`): the tests that run a model here (the bundled tutor over a
    dev set, apps in a TestClient) otherwise split each small matrix product over two threads, and
    on this 2-core machine, with the other pytest worker busy, each waits for a time slice: the
    same corrections took 15 times as long. A test of the limit itself sets its own around it."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1, user_api="blas"):
        yield


@pytest.fixture(scope="session", autouse=True)
def checked_quiz_bank():
    """A server says ready once its quiz bank is checked, which takes seconds of CPU where the
    machine has no cached bank (a fresh clone's first run): check it once, here, so that the
    first server started by a test does not spend its readiness wait on it."""
    from corrige.portal.quiz import QuestionBank
    from corrige.tutor.retrieval import default_cache_dir

    QuestionBank.cached(default_cache_dir())


# Running in parallel (`pytest -n 2 --dist loadscope --no-loadscope-reorder`, see pyproject): a
# test marked `exclusive` runs with no other test running. Its worker takes the run's lock file
# exclusively, every other test takes it shared, so an exclusive test waits for the test the other
# worker is running to end, and the other worker waits for it before its next test. A second lock
# file (the gate) gives a waiting exclusive test its turn before the other worker's next test. Setup
# (a module's server start included) and teardown are inside the turn. Without xdist there is no lock.
@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    basetemp = item.config.option.basetemp
    if not hasattr(item.config, "workerinput") or not basetemp:
        return (yield)
    run_dir = Path(basetemp).parent  # xdist gives each worker <the run's basetemp>/<worker id>
    exclusive = item.get_closest_marker("exclusive") is not None
    with open(run_dir / "exclusive.gate", "a") as gate, open(run_dir / "exclusive.lock", "a") as lock:
        fcntl.flock(gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        finally:
            if not exclusive:
                fcntl.flock(gate, fcntl.LOCK_UN)
        try:
            return (yield)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
            if exclusive:
                fcntl.flock(gate, fcntl.LOCK_UN)


def pytest_collection_modifyitems(config, items):
    """Modules with a test marked `slow` run first (their order, and each module's, kept): under
    -n 2 each worker takes whole modules in this order (`--dist loadscope --no-loadscope-reorder`),
    so the run does not end with one worker on a long module while the other has nothing left.
    A serial run keeps the collection's order."""
    if not (hasattr(config, "workerinput") or getattr(config.option, "numprocesses", None)):
        return
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)
