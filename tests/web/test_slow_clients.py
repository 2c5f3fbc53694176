"""Slow clients against a real `corrige serve`: a request whose body stops arriving is answered
408 (`body_timeout`; a page for a form post) and its connection closed, instead of holding it
open; an idle keep-alive connection is closed by the server. Raw sockets, so the client can
stall mid-request; the socket timeout is only a safety net, nothing is timed. `corrige serve`,
not a plain uvicorn: the keep-alive timeout is one of its settings."""

from __future__ import annotations

import json
import socket

import pytest
from conftest import portal_env
from e2e_support import HOST, ServerProcess

SAFETY_S = 60.0
SERVE = ["-m", "corrige.cli", "serve"]


@pytest.fixture(scope="module")
def strict_server(model_dir, tmp_path_factory):
    state = tmp_path_factory.mktemp("slow-clients")
    env = portal_env(
        model_dir, state, CORRIGE_WARMUP="false", CORRIGE_BODY_TIMEOUT_S="1", CORRIGE_TIMEOUT_KEEP_ALIVE_S="1"
    )
    process = ServerProcess(SERVE, env, state / "server.log")
    try:
        yield process.start()
    finally:
        process.stop()


def read_all(sock: socket.socket) -> bytes:
    """Everything until the server closes the connection."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def half_a_request(server, path: str, content_type: str, body: bytes) -> bytes:
    with socket.create_connection((HOST, server.port), timeout=SAFETY_S) as sock:
        head = f"POST {path} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: {content_type}\r\n"
        sock.sendall(f"{head}Content-Length: {2 * len(body)}\r\n\r\n".encode() + body)
        return read_all(sock)  # the server answers and closes, though the body never ended


def test_a_json_body_that_stops_arriving_gets_408_and_the_connection_closes(strict_server):
    answer = half_a_request(strict_server, "/v1/grammar/correct", "application/json", b'{"sentence": "I go')
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), answer[:200]
    assert json.loads(body)["error"]["code"] == "body_timeout"


def test_a_form_post_that_stops_arriving_gets_a_408_page(strict_server):
    answer = half_a_request(strict_server, "/quiz", "application/x-www-form-urlencoded", b"answer=She%20is")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b"text/html" in head.lower() and b'data-code="body_timeout"' in body
    assert "El envío ha tardado demasiado".encode() in body


def test_an_idle_keep_alive_connection_is_closed_by_the_server(strict_server):
    with socket.create_connection((HOST, strict_server.port), timeout=SAFETY_S) as sock:
        sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode())
        answer = read_all(sock)  # returns only once the server closes the idle connection
    assert answer.startswith(b"HTTP/1.1 200") and b'{"status":"ok"}' in answer
