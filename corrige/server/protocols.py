"""uvicorn's HTTP protocols with the bounds uvicorn leaves out.

`GuardedProtocol` is uvicorn's httptools protocol (the one it picks by itself, httptools being
installed, and the one `corrige serve` runs) with three things more:

* **A header timeout.** uvicorn closes an idle keep-alive connection (`timeout_keep_alive`) but
  has no timeout for headers that are still arriving: a client that sends its request a byte
  every few seconds, or connects and sends nothing, holds a connection (a file descriptor and a
  protocol object) for as long as it likes, and a few hundred such clients hold the server.
  Here a request's line and headers must all arrive within `header_timeout_s`, counted from the
  connection's opening for its first request and from the first byte of each later request on
  a keep-alive connection (the keep-alive timeout covers the idle gap before it). Past that the
  connection is closed without an answer: the request never reached the app, so there is nothing
  to answer for, as with uvicorn's own keep-alive timeout. Once the headers are in, the body
  guard's `body_timeout_s` takes over (408 `body_timeout`).
* **A bound on the request line and headers.** httptools has none: one request of 100 headers
  of 1 MiB was kept whole (about 106 MB) and answered 200. Here the bytes of a request's line and
  headers are counted as they arrive, before the parser sees them; past `max_header_bytes` the
  request is answered 431 `headers_too_large` in the error model with `Connection: close`, and
  whatever the client still sends is read and dropped for `LINGER_S` (so that it reads the answer
  rather than a reset), then the connection closes. What is kept meanwhile is at most
  `max_header_bytes` plus one read (256 KiB).
* **Pipelined clients that leave.** When the client closes, uvicorn marks only the last request
  it parsed as disconnected; with requests pipelined, the one being answered is another, which
  then wrote to the closed transport (uvloop raises) and logged "ASGI callable returned without
  completing response" and a traceback. Here every request of the connection is marked, and the
  close is one INFO line.

`GuardedH11Protocol` is the same refusal for uvicorn's h11 protocol, whose parser bounds what it
holds of a request still arriving (`h11_max_incomplete_event_size`, 16 KiB unless told; a whole
request read at once may be larger, up to one read of the socket): it answers as above instead
of uvicorn's plain-text 400.

`corrige serve` passes `guarded_protocol(settings.header_timeout_s, settings.max_header_bytes)`
as uvicorn's `http`; a plain uvicorn takes `--http corrige.server.protocols:GuardedProtocol`
(10 s, 32 KiB), or `--http corrige.server.protocols:GuardedH11Protocol`.
"""

from __future__ import annotations

import asyncio
import logging
from http import HTTPStatus

from h11._connection import DEFAULT_MAX_INCOMPLETE_EVENT_SIZE
from uvicorn._types import ASGI3Application
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from corrige.server.context import new_request_id
from corrige.server.errors import error_bytes

logger = logging.getLogger(__name__)

DEFAULT_HEADER_TIMEOUT_S = 10.0
DEFAULT_MAX_HEADER_BYTES = 32 * 1024
LINGER_S = 2.0  # after a refusal, what the client still sends is dropped this long before the connection closes


def refusal_bytes(status: int, code: str, message: str) -> bytes:
    """A whole HTTP/1.1 response in the error model, for answers given before the app runs."""
    request_id = new_request_id()
    body = error_bytes(code, message, request_id)
    head = (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        "x-content-type-options: nosniff\r\n"
        f"x-request-id: {request_id}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


def headers_too_large(max_bytes: int) -> bytes:
    message = f"the request line and headers are larger than {max_bytes} bytes"
    return refusal_bytes(431, "headers_too_large", message)


def answer_and_linger(transport: asyncio.Transport, loop: asyncio.AbstractEventLoop, answer: bytes) -> None:
    """Send `answer` and end the connection's sending side; the caller drops what the client still
    sends for `LINGER_S`, then the connection closes. Closing at once, with the client's bytes
    unread, would reset the connection, and the client might never read the answer."""
    transport.write(answer)
    if transport.can_write_eof():
        transport.write_eof()
    loop.call_later(LINGER_S, transport.close)


def _peer(client: tuple[str, int] | None) -> str:
    return f"{client[0]}:{client[1]}" if client else "a client"


class GuardedProtocol(HttpToolsProtocol):
    """`HttpToolsProtocol` with a header timeout, a bound on the request line and headers, and
    clean disconnects of pipelined connections (see the module's docstring)."""

    header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self._header_bytes: int | None = 0  # bytes of the request line and headers so far; None: past them
        self._refused = False  # answered 431: what still comes is dropped
        self._running: RequestResponseCycle | None = None  # the request being answered

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_timer()  # a new connection owes its first request's headers

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        unanswered = [cycle for cycle in self._cycles() if not cycle.response_complete]
        for cycle in unanswered:  # uvicorn marks only the last request parsed (`self.cycle`)
            cycle.disconnected = True
            cycle.message_event.set()
        if unanswered:
            logger.info("%s closed the connection with %d request(s) unanswered", _peer(self.client), len(unanswered))
        super().connection_lost(exc)

    def _cycles(self) -> list[RequestResponseCycle]:
        queued = [cycle for cycle, _ in self.pipeline]
        return [c for c in dict.fromkeys([self._running, self.cycle, *queued]) if c is not None]

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: ASGI3Application) -> None:
        self._running = cycle
        super()._start_asgi_task(cycle, app)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return  # lingering after a 431: read and dropped
        while data:
            if self._header_bytes is None:  # in a body: its own guard bounds it
                super().data_received(data)
                return
            room = self.max_header_bytes - self._header_bytes
            piece, data = data[:room], data[room:]
            self._header_bytes += len(piece)
            super().data_received(piece)
            if self.transport.is_closing():
                return
            if self._header_bytes is not None and self._header_bytes >= self.max_header_bytes:
                self._refuse_headers()
                return

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._header_timer is None:  # a later request on a keep-alive connection: its first byte is in
            self._arm_header_timer()

    def on_headers_complete(self) -> None:
        self._cancel_header_timer()
        self._header_bytes = None
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._header_bytes = 0  # the next request's line and headers start here

    def _refuse_headers(self) -> None:
        self._cancel_header_timer()
        self._unset_keepalive_if_required()
        busy = any(not cycle.response_complete for cycle in self._cycles())
        limit = self.max_header_bytes
        logger.info("refusing a request from %s: line and headers over %d bytes", _peer(self.client), limit)
        if busy:  # an earlier request of the connection is being answered: no room for another answer
            self.transport.close()
            return
        self._refused = True
        answer_and_linger(self.transport, self.loop, headers_too_large(self.max_header_bytes))

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
            logger.info(
                "closing the connection of %s: no complete request headers within %g s",
                _peer(self.client),
                self.header_timeout_s,
            )
            self.transport.close()


HeaderTimeoutProtocol = GuardedProtocol  # its former name, which deployments may pass to `uvicorn --http`


class GuardedH11Protocol(H11Protocol):
    """`H11Protocol` whose refusal of a request line and headers past h11's bound
    (`h11_max_incomplete_event_size`) is 431 `headers_too_large` in the error model."""

    _refused = False

    def data_received(self, data: bytes) -> None:
        if not self._refused:  # lingering after a 431: read and dropped
            super().data_received(data)

    def send_400_response(self, msg: str) -> None:
        limit = self.config.h11_max_incomplete_event_size or DEFAULT_MAX_INCOMPLETE_EVENT_SIZE
        if len(self.conn.trailing_data[0]) <= limit:  # h11 refused something else than the size
            super().send_400_response(msg)  # uvicorn's plain-text 400
            return
        logger.info("refusing a request from %s: line and headers over %d bytes", _peer(self.client), limit)
        self._refused = True
        answer_and_linger(self.transport, self.loop, headers_too_large(limit))


def guarded_protocol(
    header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S, max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
) -> type[GuardedProtocol]:
    """`GuardedProtocol` with these bounds (uvicorn builds the protocol per connection)."""
    if header_timeout_s <= 0 or max_header_bytes <= 0:
        raise ValueError("the header timeout and the header bound must be positive")
    bounds = {"header_timeout_s": float(header_timeout_s), "max_header_bytes": int(max_header_bytes)}
    return type("GuardedProtocol", (GuardedProtocol,), bounds)
