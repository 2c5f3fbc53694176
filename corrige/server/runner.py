"""Running the app under uvicorn, with graceful draining on SIGTERM / SIGINT.

uvicorn alone, on SIGTERM, stops listening at once: a load balancer's next request gets a
refused connection. `DrainingServer` instead keeps listening while it drains: `/readyz`
fails and new requests get 503 `draining` (so they are retried elsewhere), the requests in
flight get the grace period to finish, the rest are ended (503 `engine_closed`); then uvicorn
shuts down as usual. A second signal stops at once.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from types import FrameType

import uvicorn

from corrige.model.blas import limit_blas_threads
from corrige.server.app import create_app
from corrige.server.lifecycle import drain
from corrige.server.protocols import guarded_protocol
from corrige.server.settings import Settings
from corrige.tutor.agent import BUNDLED_MODEL

logger = logging.getLogger(__name__)


class DrainingServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, app_state: object, grace_s: float) -> None:
        super().__init__(config)
        self.app_state = app_state
        self.grace_s = grace_s
        self._drain_task: asyncio.Task | None = None
        self._drain_requested = False
        self.exit_status = 0

    def stop(self, exit_status: int, after_s: float = 0.0) -> None:
        """Stop, `after_s` from now (on the event loop's thread), and exit with `exit_status` (the engine
        was given up: `lifecycle.fail_server`); until then the server serves as it was."""
        self.exit_status = exit_status
        if after_s > 0:
            asyncio.get_running_loop().call_later(after_s, self._exit_now)
        else:
            self.should_exit = True

    def _exit_now(self) -> None:
        self.should_exit = True

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self._drain_requested or self.should_exit:
            super().handle_exit(sig, frame)  # a second signal: stop now
            return
        self._drain_requested = True
        self.app_state.drain.begin()  # a flag: safe inside a signal handler; refusals start at once

    async def on_tick(self, counter: int) -> bool:
        if self._drain_requested and self._drain_task is None:
            self._drain_task = asyncio.create_task(self._drain())
        return await super().on_tick(counter)

    async def _drain(self) -> None:
        try:
            await drain(self.app_state, self.grace_s)
        finally:
            self.should_exit = True


def check_model_dir(settings: Settings) -> Path:
    """The model directory to serve; a clear error now beats a traceback from the lifespan."""
    directory = settings.model_dir or BUNDLED_MODEL
    missing = [
        name for name in ("model.safetensors", "config.json", "tokenizer.json") if not (directory / name).is_file()
    ]
    if missing:
        raise FileNotFoundError(f"no model in {directory} (missing {', '.join(missing)}); pass --model DIR")
    return directory


def serve(settings: Settings) -> None:
    """Serve until a signal, then drain. Blocks."""
    check_model_dir(settings)
    limit_blas_threads(settings.blas_threads)
    app = create_app(settings)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        access_log=settings.access_log,
        lifespan="on",
        timeout_graceful_shutdown=5,  # after draining: connections still open get this long
        # an idle keep-alive connection is closed after this; uvicorn has no timeout for a body still
        # arriving, so the body guard bounds that (body_timeout_s: 408), and none for slow or large
        # headers: its httptools protocol with a header timeout and a bound (protocols.py) bounds those
        timeout_keep_alive=settings.timeout_keep_alive_s,
        http=guarded_protocol(settings.header_timeout_s, settings.max_header_bytes),
        # the app reads X-Forwarded-For from `forwarded_allow_ips` only (uvicorn's default trusts 127.0.0.1)
        proxy_headers=False,
        log_config=None,  # keep the process's logging set-up
    )
    server = DrainingServer(config, app.state, settings.drain_grace_s)
    app.state.stop_server = server.stop
    server.run()
    if server.exit_status:
        raise SystemExit(server.exit_status)
