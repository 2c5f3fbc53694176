"""`ReplicaRetry`, the middleware Ray's proxy runs in front of the replicas (corrige.cluster.proxy).

Ray's proxy is an ASGI app that, when the replica serving a request dies, returns without sending
anything (its HTTP server then answers a plain-text 500), and with no replica to route to answers
a plain-text 503 itself. The inner apps here do what the proxy does in each case, so that every
branch (the body sent again, the portal's POSTs not sent twice, `/v2/`'s plain-text errors, a cut
stream) runs in milliseconds; `test_ray_serve_e2e.py` kills a real replica behind the real proxy.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from corrige.cluster.proxy import CODE, CODE_HEADER, LANGUAGETOOL_PREFIX, RETRY_BODY_BYTES, ReplicaRetry, error_body
from corrige.cluster.replica import node_ip_address
from corrige.server import errors, languagetool

REQUEST_ID = "req-1"


class ProxyStandIn:
    """Ray's proxy app as the middleware sees it: the first `fail` requests get nothing (their
    replica died), later ones are echoed by a live replica; `refuse`: the proxy's own 503."""

    def __init__(self, fail: int = 1, refuse: bool = False, stream_cut: bool = False) -> None:
        self.fail = fail
        self.refuse = refuse
        self.stream_cut = stream_cut
        self.bodies: list[bytes] = []

    async def __call__(self, scope, receive, send) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        self.bodies.append(body)
        if self.refuse:
            text = b"Deployment 'corrige' is unavailable."
            headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(text)).encode())]
            await send({"type": "http.response.start", "status": 503, "headers": headers})
            await send({"type": "http.response.body", "body": text})
            return
        if self.stream_cut:
            headers = [(b"content-type", b"text/event-stream; charset=utf-8")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send(
                {"type": "http.response.body", "body": b'event: token\ndata: {"text":"She"}\n\n', "more_body": True}
            )
            return  # the replica died mid-stream
        if len(self.bodies) <= self.fail:
            return
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps({"echo": body.decode()}).encode()})


def call(inner, method: str, path: str, **kwargs) -> httpx.Response:
    """One request through `ReplicaRetry` around `inner`."""

    async def send() -> httpx.Response:
        transport = httpx.ASGITransport(app=ReplicaRetry(inner))
        headers = {"X-Request-ID": REQUEST_ID}
        async with httpx.AsyncClient(transport=transport, base_url="http://proxy", headers=headers) as client:
            return await client.request(method, path, **kwargs)

    return asyncio.run(send())


def assert_unavailable(response: httpx.Response) -> None:
    assert response.status_code == 503
    assert response.headers["retry-after"] == "1"
    assert response.headers["x-request-id"] == REQUEST_ID
    assert response.json()["error"]["code"] == CODE
    assert response.json()["error"]["request_id"] == REQUEST_ID


def test_a_correction_whose_replica_died_is_sent_again_with_its_body():
    inner = ProxyStandIn(fail=1)
    response = call(inner, "POST", "/v1/grammar/correct", json={"sentence": "She have two cats"})
    assert response.status_code == 200
    assert json.loads(response.json()["echo"]) == {"sentence": "She have two cats"}
    assert len(inner.bodies) == 2 and inner.bodies[0] == inner.bodies[1]


def test_a_second_death_is_503_replica_unavailable_in_the_error_model():
    inner = ProxyStandIn(fail=2)
    response = call(inner, "POST", "/v1/completions", json={"prompt": "She have two cats"})
    assert_unavailable(response)
    assert len(inner.bodies) == 2  # once more, not more


def test_a_portal_post_is_not_sent_twice():
    inner = ProxyStandIn(fail=1)
    response = call(inner, "POST", "/portal/api/quiz/answer", json={"question_id": 1, "answer": "went"})
    assert_unavailable(response)
    assert len(inner.bodies) == 1
    assert call(ProxyStandIn(fail=1), "GET", "/portal/api/quiz/question").status_code == 200  # reading one is


def test_a_body_too_large_to_keep_is_not_sent_again():
    inner = ProxyStandIn(fail=1)
    response = call(inner, "POST", "/v1/grammar/correct", content=b"x" * (RETRY_BODY_BYTES + 1))
    assert_unavailable(response)
    assert len(inner.bodies) == 1


def test_the_proxys_own_503_becomes_the_error_model():
    inner = ProxyStandIn(refuse=True)
    response = call(inner, "POST", "/v1/grammar/correct", json={"sentence": "She have two cats"})
    assert_unavailable(response)
    assert len(inner.bodies) == 1  # no replica to route to: not sent again


def test_languagetool_routes_get_their_plain_text_error():
    response = call(
        ProxyStandIn(fail=2),
        "POST",
        f"{LANGUAGETOOL_PREFIX}check",
        data={"text": "She have two cats", "language": "en"},
    )
    assert response.status_code == 503 and response.headers["retry-after"] == "1"
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text.startswith("Error: ")
    assert response.headers[CODE_HEADER.decode()] == CODE


def test_the_servers_own_plain_text_503_passes_unchanged():
    """`/v2/`'s `overloaded` is plain text too, but carries the code header: not the proxy's."""

    async def overloaded(scope, receive, send) -> None:
        await receive()
        headers = [(b"content-type", b"text/plain; charset=utf-8"), (CODE_HEADER, b"overloaded")]
        await send({"type": "http.response.start", "status": 503, "headers": headers})
        await send({"type": "http.response.body", "body": b"Error: busy"})

    response = call(overloaded, "POST", "/v2/check", data={"text": "x", "language": "en"})
    assert response.status_code == 503 and response.text == "Error: busy"


def test_a_stream_cut_by_its_replicas_death_ends_with_an_error_event():
    response = call(
        ProxyStandIn(stream_cut=True),
        "POST",
        "/v1/grammar/correct",
        json={"sentence": "She have two cats", "stream": True},
    )
    assert response.status_code == 200
    events = [block for block in response.text.split("\n\n") if block]
    assert events[0].startswith("event: token")
    name, data = events[-1].split("\n")
    assert name == "event: error"
    assert json.loads(data.removeprefix("data: "))["error"]["code"] == CODE


def test_the_error_body_and_the_languagetool_names_are_the_servers():
    assert json.loads(error_body(CODE, "m", "r")) == errors.error_body(CODE, "m", "r")
    assert LANGUAGETOOL_PREFIX == languagetool.PREFIX
    assert CODE_HEADER.decode() == languagetool.CODE_HEADER.lower()


@pytest.mark.parametrize(
    ("host", "node_ip"),
    [("127.0.0.1", "127.0.0.1"), ("localhost", "127.0.0.1"), ("127.0.0.2", "127.0.0.1"), ("::1", "127.0.0.1")]
    + [("0.0.0.0", None), ("::", None), ("192.0.2.7", "192.0.2.7"), ("tutor.internal", None)],
)
def test_rays_node_address_follows_the_host(host, node_ip):
    assert node_ip_address(host) == node_ip
