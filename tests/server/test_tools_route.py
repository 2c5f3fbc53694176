"""`POST /v1/tools/rules` runs a real `corrige tool rules` process per call: the learner's text is
always the query (never an option of the tool), tool processes are bounded (503 `tools_busy`
past the bound, at once), and the route has a rate limit of its own."""

from __future__ import annotations

import asyncio

import pytest
from server_support import error_of, run, served

from corrige.server.app import create_app
from corrige.server.routes.tools import rules_command

URL = "/v1/tools/rules"


def test_the_query_goes_after_the_end_of_options():
    command = rules_command("--store=/tmp/elsewhere.sqlite", 2)
    assert command[-2:] == ["--", "--store=/tmp/elsewhere.sqlite"]
    assert command.index("--k") < command.index("--")


@pytest.mark.parametrize("query", ["--help", "--store={tmp}/elsewhere.sqlite", "-k"])
def test_text_that_looks_like_an_option_is_looked_up_as_text(make_settings, tmp_path, query):
    query = query.format(tmp=tmp_path)
    app = create_app(make_settings(tracing=False))

    async def scenario():
        async with served(app) as client:
            return await client.post(URL, json={"query": query, "k": 2}, timeout=60)

    response = run(scenario(), timeout=90)
    assert response.status_code == 200, response.text  # the tool's JSON, not its help text or a usage error
    body = response.json()
    assert isinstance(body["rules"], list) and len(body["rules"]) <= 2
    assert not (tmp_path / "elsewhere.sqlite").exists()  # the text never became the --store option


def test_past_the_bound_on_tool_processes_a_call_is_refused_at_once_with_503(make_settings):
    app = create_app(make_settings(max_tool_processes=1, tracing=False))

    async def scenario():
        async with served(app) as client:
            # a first call holds the only slot: the test takes it, as an in-flight call would
            slots = app.state.tool_slots = asyncio.Semaphore(1)
            async with slots:
                busy = await client.post(URL, json={"query": "I have 20 years"})
            after = await client.post(URL, json={"query": "I have 20 years"}, timeout=60)
            return busy, after

    busy, after = run(scenario(), timeout=90)
    assert busy.status_code == 503
    assert error_of(busy)["code"] == "tools_busy" and int(busy.headers["retry-after"]) >= 1
    assert after.status_code == 200, after.text  # the slot is free again
    assert after.json()["rules"]


def test_the_tools_have_a_rate_limit_of_their_own(make_settings):
    # the client's own budget has room; the tool bucket (burst 1, refilled in 1000 s) does not
    app = create_app(make_settings(rate_limit=1000, tool_rate_limit=0.001))

    async def scenario():
        async with served(app) as client:
            first = await client.post(URL, json={})  # 422: spends the token, starts no process
            second = await client.post(URL, json={"query": "I have 20 years"})
            other = await client.post("/v1/grammar/correct", json={"sentence": "She like cats."})
            return first, second, other

    first, second, other = run(scenario())
    assert first.status_code == 422 and error_of(first)["code"] == "validation_error"
    assert second.status_code == 429 and error_of(second)["code"] == "rate_limited"
    assert int(second.headers["retry-after"]) >= 1
    assert other.status_code == 200  # the rest of the API is not held back by the tools' limit
