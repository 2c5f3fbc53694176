"""uvicorn's HTTP protocols with corrige's bounds (corrige.server.protocols), each a real uvicorn
on 127.0.0.1 in a thread in front of a tiny ASGI app, over raw sockets: request lines and headers
past the bound are answered 431 `headers_too_large` in the error model and the connection closed,
under httptools and h11 alike, however much more the client sends; those within it are served, on
fresh and on keep-alive connections; a client that closes a pipelined connection early leaves no
error in the log. tests/e2e/test_http_bounds_e2e.py does the same against `corrige serve`."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import uvicorn

from corrige.server.protocols import GuardedH11Protocol, guarded_protocol

HOST = "127.0.0.1"
LIMIT = 8 * 1024
SAFETY_S = 30.0


async def app(scope, receive, send) -> None:
    """Answers every request "ok" after a moment (a client can leave meanwhile)."""
    if scope["type"] != "http":
        return
    await asyncio.sleep(0.02)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


PROTOCOLS = {
    "httptools": {"http": guarded_protocol(header_timeout_s=10.0, max_header_bytes=LIMIT)},
    "h11": {"http": GuardedH11Protocol, "h11_max_incomplete_event_size": LIMIT},
}


@contextmanager
def serving(protocol: str) -> Iterator[int]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, 0))
    config = uvicorn.Config(app, lifespan="off", log_config=None, loop="uvloop", **PROTOCOLS[protocol])
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(500):
            if server.started:
                break
            thread.join(0.01)
        assert server.started, "uvicorn did not start"
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(SAFETY_S)
        sock.close()


@pytest.fixture(params=sorted(PROTOCOLS))
def port(request) -> Iterator[int]:
    with serving(request.param) as bound:
        yield bound


def read_all(sock: socket.socket) -> bytes:
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except ConnectionResetError:
        pass
    return b"".join(chunks)


def request(name_value_pairs: list[tuple[str, str]], target: str = "/") -> bytes:
    lines = [f"GET {target} HTTP/1.1", f"Host: {HOST}", *(f"{n}: {v}" for n, v in name_value_pairs)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def assert_431(answer: bytes) -> None:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431 "), answer[:300]
    headers = dict(line.split(b": ", 1) for line in head.split(b"\r\n")[1:])
    assert headers[b"content-type"] == b"application/json" and headers[b"connection"] == b"close"
    error = json.loads(body)["error"]
    assert error["code"] == "headers_too_large" and f"{LIMIT} bytes" in error["message"]
    assert error["request_id"] == headers[b"x-request-id"].decode()


def test_headers_within_the_bound_are_served_on_fresh_and_keep_alive_connections(port):
    near = request([("X-Pad", "a" * (LIMIT - 200))])
    assert len(near) < LIMIT
    with socket.create_connection((HOST, port), timeout=SAFETY_S) as sock:
        sock.sendall(near + near + request([("Connection", "close")]))  # pipelined: each is counted anew
        answer = read_all(sock)
    assert answer.count(b"HTTP/1.1 200 OK") == 3, answer[:300]


@pytest.mark.parametrize("where", ["headers", "request line"])
def test_a_request_line_and_headers_past_the_bound_are_431_in_the_error_model(port, where):
    """Sent without their end: h11 bounds what it holds of a request still arriving (a whole one
    read at once may be larger: one read of the socket); httptools' guard counts every byte."""
    big = request([("X-Pad", "a" * LIMIT)]) if where == "headers" else request([], "/" + "a" * LIMIT)
    with socket.create_connection((HOST, port), timeout=SAFETY_S) as sock:
        sock.sendall(big[:-4])
        assert_431(read_all(sock))


def test_a_client_that_keeps_sending_headers_reads_the_431_and_is_cut_off(port):
    """20 headers of 1 MiB: the answer comes while the client is still sending, and the connection closes."""
    with socket.create_connection((HOST, port), timeout=SAFETY_S) as sock:
        answer: list[bytes] = []
        reader = threading.Thread(target=lambda: answer.append(read_all(sock)))
        reader.start()
        sent = 0
        try:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
            for i in range(20):
                sock.sendall(f"X-H{i}: ".encode() + b"a" * (1 << 20) + b"\r\n")
                sent += 1
        except OSError:  # BrokenPipe / ConnectionReset: the server closed after its linger
            pass
        reader.join(SAFETY_S)
    assert_431(answer[0])


def test_a_client_leaving_a_pipelined_connection_early_logs_no_error(caplog):
    """Three requests pipelined, the first answer read, then the client leaves while the second is
    being answered: uvicorn marked only the last request parsed (the third) as disconnected, so the
    second wrote to the closed transport (uvloop raises) and logged an error with a traceback, each
    time. Now it is one INFO line."""
    pipelined = request([]) * 3
    with caplog.at_level(logging.INFO), serving("httptools") as bound:
        for _ in range(40):
            with socket.create_connection((HOST, bound), timeout=SAFETY_S) as sock:
                sock.sendall(pipelined)
                assert sock.recv(65536).startswith(b"HTTP/1.1 200 OK")
        with socket.create_connection((HOST, bound), timeout=SAFETY_S) as sock:  # still serving
            sock.sendall(request([("Connection", "close")]))
            assert read_all(sock).startswith(b"HTTP/1.1 200 OK")
    errors = [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert errors == [], [r.getMessage() for r in errors]
    left = [r for r in caplog.records if "closed the connection" in r.getMessage()]
    assert 0 < len(left) <= 40 and all(r.levelno == logging.INFO for r in left)
