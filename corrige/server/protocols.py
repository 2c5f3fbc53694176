"""uvicorn's HTTP protocol with a timeout for the request line and headers.

uvicorn closes an idle keep-alive connection (`timeout_keep_alive`) but has no timeout for
headers that are still arriving: a client that sends its request a byte every few seconds, or
connects and sends nothing, holds a connection (a file descriptor and a protocol object) for as
long as it likes, and a few hundred such clients hold the server. `HeaderTimeoutProtocol` is
uvicorn's httptools protocol (the one it picks by itself, httptools being installed) with one
timer more: a request's line and headers must all arrive within `header_timeout_s`, counted
from the connection's opening for its first request and from the first byte of each later
request on a keep-alive connection (the keep-alive timeout covers the idle gap before it).
Past that the connection is closed without an answer: the request never reached the app, so
there is nothing to answer for, as with uvicorn's own keep-alive timeout. Once the headers are
in, the body guard's `body_timeout_s` takes over (408 `body_timeout`).

`corrige serve` passes `with_header_timeout(settings.header_timeout_s)` as uvicorn's `http`;
a plain uvicorn takes `--http corrige.server.protocols:HeaderTimeoutProtocol` (10 s).
"""

from __future__ import annotations

import asyncio
import logging

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

logger = logging.getLogger(__name__)

DEFAULT_HEADER_TIMEOUT_S = 10.0


class HeaderTimeoutProtocol(HttpToolsProtocol):
    """`HttpToolsProtocol` that closes a connection whose request headers are not all in within `header_timeout_s`."""

    header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_timer()  # a new connection owes its first request's headers

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._header_timer is None:  # a later request on a keep-alive connection: its first byte is in
            self._arm_header_timer()

    def on_headers_complete(self) -> None:
        self._cancel_header_timer()
        super().on_headers_complete()

    def _arm_header_timer(self) -> None:
        self._cancel_header_timer()
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._header_timeout)

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timeout(self) -> None:
        self._header_timer = None
        if self.transport is not None and not self.transport.is_closing():
            client = f"{self.client[0]}:{self.client[1]}" if self.client else "a client"
            logger.info(
                "closing the connection of %s: no complete request headers within %g s", client, self.header_timeout_s
            )
            self.transport.close()


def with_header_timeout(seconds: float) -> type[HeaderTimeoutProtocol]:
    """`HeaderTimeoutProtocol` with its timeout set to `seconds` (uvicorn builds the protocol per connection)."""
    if seconds <= 0:
        raise ValueError("the header timeout must be positive")
    return type("HeaderTimeoutProtocol", (HeaderTimeoutProtocol,), {"header_timeout_s": float(seconds)})
