"""Real `uvicorn` servers in subprocesses on free loopback ports; each fixture kills its server.

The servers run the seed model (`model_dir`), which starts and answers faster than the bundled
reader: these tests are of serving (routes, streams, limits, restarts), which any model shows.
The reader is what `reader_server`'s tests test.

* `server`: plain `uvicorn --factory corrige.server.app:app_from_env`, rate limit off; one for
  the session (its tests only send requests; none changes the server or its settings).
* `reader_server`: the same on the bundled reader model, whose answers end the corrected sentence
  with the `<|gloss|>` token (skipped without that model); one for the session too.
* `slow_server`: `corrige serve`, one request at a time (batching none, 1 slot, 4 waiting),
  every model step slowed by 20 ms, so requests overlap long enough to queue and to be cut off.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))  # the shared fixture model

from e2e_support import ServerProcess  # noqa: E402

from corrige.tutor.agent import BUNDLED_MODEL, SEED_MODEL  # noqa: E402

READER_MODEL = BUNDLED_MODEL.parent / "reader"

UVICORN = ["-m", "uvicorn", "--factory", "corrige.server.app:app_from_env", "--no-access-log", "--log-level", "warning"]
SERVE = ["-m", "corrige.cli", "serve"]


@pytest.fixture(scope="session")
def model_dir() -> Path:
    """The seed model (it ships with the package): real corrections, which the tests check."""
    assert (SEED_MODEL / "model.safetensors").is_file(), f"no model in {SEED_MODEL}"
    return SEED_MODEL


def base_env(model_dir: Path, **extra: str) -> dict[str, str]:
    """A server's environment: the model, no rate limit, its own trace store in a fresh temp dir."""
    store = Path(tempfile.mkdtemp(prefix="corrige-e2e-")) / "traces.sqlite"
    return {
        "CORRIGE_MODEL_DIR": str(model_dir),
        "CORRIGE_RATE_LIMIT": "0",
        "CORRIGE_ACCESS_LOG": "false",
        "CORRIGE_TRACE_STORE": str(store),
        **extra,
    }


@pytest.fixture(scope="session")
def server(model_dir, tmp_path_factory):
    process = ServerProcess(UVICORN, base_env(model_dir), tmp_path_factory.mktemp("logs") / "server.log")
    try:
        yield process.start()
    finally:
        process.stop()


@pytest.fixture(scope="session")
def reader_server(tmp_path_factory):
    if not (READER_MODEL / "model.safetensors").is_file():
        pytest.skip("the reader model is not in corrige/models/reader")
    process = ServerProcess(UVICORN, base_env(READER_MODEL), tmp_path_factory.mktemp("logs") / "reader.log")
    try:
        yield process.start()
    finally:
        process.stop()


@pytest.fixture(scope="module")
def slow_server(model_dir, tmp_path_factory):
    env = base_env(
        model_dir,
        CORRIGE_BATCHING="none",
        CORRIGE_N_SLOTS="1",
        CORRIGE_MAX_BATCH="1",
        CORRIGE_MAX_WAITING="4",
        # each answer holds its slot for a few hundred ms: long enough to watch, even on a loaded machine
        CORRIGE_DEBUG_STEP_DELAY_MS="60",
    )
    process = ServerProcess(SERVE, env, tmp_path_factory.mktemp("logs") / "slow.log")
    try:
        yield process.start()
    finally:
        process.stop()


@pytest.fixture
def draining_server(model_dir, tmp_path):
    """A fresh `corrige serve` per test (the test stops it); each model step takes 40 ms more."""
    env = base_env(model_dir, CORRIGE_DEBUG_STEP_DELAY_MS="40", CORRIGE_DRAIN_GRACE_S="20")
    process = ServerProcess(SERVE, env, tmp_path / "draining.log")
    try:
        yield process.start()
    finally:
        process.stop()


@pytest.fixture
def make_server(model_dir, tmp_path):
    """`make_server("uvicorn" | "serve", **CORRIGE_settings)` starts a fresh server for this test
    (plain uvicorn, or `corrige serve`); every one started is stopped at the end."""
    started: list[ServerProcess] = []

    def start(command: str, **env: str) -> ServerProcess:
        args = {"uvicorn": UVICORN, "serve": SERVE}[command]
        process = ServerProcess(args, base_env(model_dir, **env), tmp_path / f"server-{len(started)}.log")
        started.append(process)
        return process.start()

    yield start
    for process in started:
        process.stop()
