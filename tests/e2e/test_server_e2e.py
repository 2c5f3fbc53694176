"""End to end against real uvicorn subprocesses on loopback: the grammar API, streaming, the
OpenAI client, a client that leaves mid-stream, overload, and draining on SIGTERM.

Load is bounded (a few dozen requests, 127.0.0.1 only) and nothing asserts on elapsed time:
tests wait for states reported by `GET /v1/engine/stats`.
"""

from __future__ import annotations

import asyncio
import json
import threading

import httpx
import openai
from e2e_support import wait_for

SENTENCE = "Yesterday I goed to the store"
LONG_SENTENCE = "Yesterday we goed to the store and buyed apples."  # a long answer that fits every test model


def sse_events(lines) -> list[tuple[str, dict]]:
    events, name = [], None
    for line in lines:
        if line.startswith("event: "):
            name = line[len("event: ") :]
        elif line.startswith("data: "):
            events.append((name, json.loads(line[len("data: ") :])))
    return events


def test_grammar_api_over_http(server):
    headers = {"X-Request-ID": "e2e-1"}
    response = httpx.post(f"{server.url}/v1/grammar/correct", json={"sentence": SENTENCE}, headers=headers)
    assert response.status_code == 200
    assert response.headers["x-request-id"] == "e2e-1"
    body = response.json()
    assert body["request_id"] == "e2e-1" and body["sentence"] == SENTENCE
    assert body["timings_ms"]["total"] >= body["timings_ms"]["engine"] > 0
    assert body["corrected"] == "Yesterday I went to the store" and body["changed"] and not body["abstained"]
    assert [(e["original"], e["replacement"], e["category"]) for e in body["edits"]] == [
        ("goed", "went", "past_irregular")
    ]
    batch = httpx.post(f"{server.url}/v1/grammar/correct:batch", json={"sentences": [SENTENCE, "She like cats."]})
    assert batch.status_code == 200 and len(batch.json()["results"]) == 2
    error = httpx.post(f"{server.url}/correct", json={"sentence": "bad\x00"})
    assert error.status_code == 400 and error.json()["error"]["code"] == "invalid_characters"


def test_streaming_over_http(server):
    with httpx.stream("POST", f"{server.url}/v1/grammar/correct", json={"sentence": SENTENCE, "stream": True}) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = sse_events(r.iter_lines())
    assert [name for name, _ in events[-2:]] == ["gloss", "result"]
    assert {name for name, _ in events[:-2]} <= {"token", "replace"}
    plain = httpx.post(f"{server.url}/v1/grammar/correct", json={"sentence": SENTENCE}).json()
    assert events[-1][1]["corrected"] == plain["corrected"]


def test_the_openai_client_against_the_server(server):
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)
    assert [m.id for m in client.models.list().data] == ["corrige-tutor"]
    chat = client.chat.completions.create(model="corrige-tutor", messages=[{"role": "user", "content": SENTENCE}])
    answer = chat.choices[0].message.content
    stream = client.chat.completions.create(
        model="corrige-tutor", messages=[{"role": "user", "content": SENTENCE}], stream=True
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == answer
    kwargs = {"model": "corrige-tutor", "prompt": SENTENCE, "max_tokens": 10, "temperature": 0}
    text = client.completions.create(**kwargs).choices[0].text
    chunks = list(client.completions.create(**kwargs, stream=True, stream_options={"include_usage": True}))
    assert "".join(c.choices[0].text for c in chunks if c.choices) == text
    assert chunks[-1].usage is not None


def test_a_client_leaving_mid_stream_has_its_request_aborted_and_slot_freed(slow_server):
    before = slow_server.stats()["engine"]
    with httpx.Client(timeout=10.0) as client:
        with client.stream(
            "POST", f"{slow_server.url}/v1/grammar/correct", json={"sentence": LONG_SENTENCE, "stream": True}
        ) as response:
            assert response.status_code == 200
            wait_for(lambda: slow_server.stats()["engine"]["slots_used"] == 1, "the request holds the slot")
        # leaving the block closes the connection with the answer half sent
    after = wait_for(
        lambda: (s := slow_server.stats()["engine"])["running"] == 0 and s["slots_used"] == 0 and s,
        "the slot is freed",
    )
    assert after["aborted"] == before["aborted"] + 1
    assert after["slots_used"] == 0 and after["waiting"] == 0


def test_overload_gives_503s_with_retry_after_and_never_a_500(slow_server):
    async def main():
        limits = httpx.Limits(max_connections=30)
        async with httpx.AsyncClient(base_url=slow_server.url, timeout=60.0, limits=limits) as client:
            return await asyncio.gather(
                *(client.post("/v1/grammar/correct", json={"sentence": f"I goed home {i} times."}) for i in range(24))
            )

    responses = asyncio.run(main())
    statuses = [r.status_code for r in responses]
    assert set(statuses) <= {200, 503}, statuses
    refused = [r for r in responses if r.status_code == 503]
    assert refused and statuses.count(200) >= 1
    for r in refused:
        assert r.json()["error"]["code"] == "overloaded" and int(r.headers["retry-after"]) >= 1
    stats = slow_server.stats()["engine"]
    assert (stats["running"], stats["waiting"], stats["slots_used"]) == (0, 0, 0)


def test_sigterm_drains_in_flight_requests_finish_and_new_ones_are_refused(draining_server):
    server = draining_server
    results: list[httpx.Response] = []

    def call(i: int) -> None:
        results.append(httpx.post(f"{server.url}/v1/grammar/correct", json={"sentence": LONG_SENTENCE}, timeout=60))

    threads = [threading.Thread(target=call, args=(i,)) for i in range(3)]
    for thread in threads:
        thread.start()
    wait_for(lambda: server.stats()["engine"]["running"] == 3, "three requests in flight")
    server.terminate()
    ready = wait_for(
        lambda: (r := httpx.get(f"{server.url}/readyz", timeout=5)).status_code == 503 and r, "readiness fails"
    )
    assert ready.json()["error"]["code"] == "draining"
    refused = httpx.post(f"{server.url}/v1/grammar/correct", json={"sentence": SENTENCE}, timeout=5)
    assert refused.status_code == 503 and refused.json()["error"]["code"] == "draining"
    assert refused.headers["retry-after"]
    for thread in threads:
        thread.join(timeout=60)
    assert [r.status_code for r in results] == [200, 200, 200]
    assert server.proc.wait(timeout=30) == 0
    log = server.log()
    assert "draining: 3 requests in flight" in log
