"""A replica's own `/metrics` listener.

Through Ray Serve's proxy, `GET /metrics` reaches whichever replica the proxy picks, so a
scrape there sees one replica's counters at random. Each replica therefore also answers
`GET /metrics` on a port of its own, the first free one from `first_port`; Prometheus scrapes
that range and tells replicas apart by its `instance` label, and the dashboard sums over them.
The listener runs on the app's event loop and serves the same exposition as the app's route.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from prometheus_client import CONTENT_TYPE_LATEST

logger = logging.getLogger(__name__)


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, exposition: Callable[[], bytes]) -> None:
    try:
        request_line = await asyncio.wait_for(reader.readline(), timeout=5.0)
        while (await asyncio.wait_for(reader.readline(), timeout=5.0)) not in (b"\r\n", b"\n", b""):
            pass  # headers: none matter
        parts = request_line.split()
        if len(parts) >= 2 and parts[0] == b"GET" and parts[1].split(b"?")[0] == b"/metrics":
            status, body, kind = b"200 OK", exposition(), CONTENT_TYPE_LATEST.encode()
        else:
            status, body, kind = b"404 Not Found", b"only GET /metrics here\n", b"text/plain"
        writer.write(
            b"HTTP/1.1 "
            + status
            + b"\r\nContent-Type: "
            + kind
            + b"\r\nContent-Length: "
            + str(len(body)).encode()
            + b"\r\nConnection: close\r\n\r\n"
            + body
        )
        await writer.drain()
    except (TimeoutError, ConnectionError):
        pass
    finally:
        writer.close()


async def start_metrics_listener(
    exposition: Callable[[], bytes], host: str, first_port: int, span: int
) -> tuple[asyncio.Server, int]:
    """Listen on the first free port in [first_port, first_port + span); (server, port)."""
    last_error: OSError | None = None
    for port in range(first_port, first_port + span):
        try:
            server = await asyncio.start_server(lambda r, w: _answer(r, w, exposition), host, port)
        except OSError as exc:  # taken by another replica
            last_error = exc
            continue
        logger.info("replica metrics on http://%s:%d/metrics", host, port)
        return server, port
    raise OSError(f"no free metrics port in {first_port}..{first_port + span - 1}") from last_error
