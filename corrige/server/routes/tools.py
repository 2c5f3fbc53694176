"""Subprocess tools behind the API: `POST /v1/tools/rules` runs `corrige tool rules` in a child
process that continues the request's trace across the process boundary.

A process per call is costly (an interpreter start and an index load, a core's worth for a
second or more), so calls are bounded three ways: the route has a rate limit of its own
(`tool_rate_limit`, app.py), at most `max_tool_processes` run at once (past that 503
`tools_busy` at once, no queue), and the learner's text goes after `--`, so it is always the
query argument and never an option of the tool (`--store=…`, `--help`)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys

from fastapi import APIRouter, Request
from pydantic import Field

from corrige.obs.tool import REQUEST_ID_ENV
from corrige.server.deps import SettingsDep, meta_of
from corrige.server.errors import ApiError
from corrige.server.guards import check_text
from corrige.server.schemas import JsonInt, RuleOut, StrictModel, text_field
from corrige.server.settings import Settings

router = APIRouter(prefix="/v1/tools", tags=["tools"])
logger = logging.getLogger(__name__)

TOOL_TIMEOUT_S = 30.0


def tool_slots(request: Request, settings: Settings) -> asyncio.Semaphore:
    """The app's bound on tool processes running at once (made on first use, on the event loop)."""
    state = request.app.state
    slots = getattr(state, "tool_slots", None)
    if slots is None:
        slots = state.tool_slots = asyncio.Semaphore(settings.max_tool_processes)
    return slots


def rules_command(query: str, k: int) -> list[str]:
    """`corrige tool rules`: options first, then `--`, then the learner's text as the one argument."""
    return [sys.executable, "-m", "corrige.cli", "tool", "rules", "--k", str(k), "--", query]


class RulesToolRequest(StrictModel):
    query: str = text_field(
        "query", min_length=1, max_length=500, description="A learner sentence or a question about a rule."
    )
    k: JsonInt = Field(3, ge=1, le=10)


class RulesToolResponse(StrictModel):
    request_id: str
    trace_id: str | None = Field(description="The trace the tool's span joined (None when tracing is off).")
    rules: list[RuleOut]


@router.post("/rules", response_model=RulesToolResponse)
async def rules_tool(body: RulesToolRequest, settings: SettingsDep, request: Request) -> RulesToolResponse:
    """Rule cards by BM25, looked up by a subprocess tool (slower than `/v1/grammar/correct`'s own
    retrieval: this endpoint exists to show and test tracing across a process boundary)."""
    check_text(body.query, "query")
    slots = tool_slots(request, settings)
    if slots.locked():  # refused at once: a queue of waiting calls would hold connections instead
        message = f"{settings.max_tool_processes} tool processes are already running; retry shortly"
        raise ApiError(503, "tools_busy", message, {"Retry-After": str(settings.retry_after_s)})
    async with slots:
        return await _rules(body, settings, request)


async def _rules(body: RulesToolRequest, settings: Settings, request: Request) -> RulesToolResponse:
    meta = meta_of(request)
    command = rules_command(body.query, body.k)
    env = {**os.environ, REQUEST_ID_ENV: meta.request_id}
    env.pop("TRACEPARENT", None)
    env.pop("TRACESTATE", None)
    if meta.trace is None:
        out = await _run(command, env)
    else:
        env["CORRIGE_TRACE_STORE"] = str(settings.trace_store)
        with meta.trace.child("tool.call", **{"tool.name": "rules"}) as trace_env:
            out = await _run(command, {**env, **trace_env})
    try:
        rules = json.loads(out)["rules"]
    except (ValueError, KeyError) as exc:
        logger.warning("request %s: the rules tool answered %r", meta.request_id, out[:200])
        raise ApiError(502, "tool_failed", "the rules tool answered something that is not its JSON") from exc
    trace_id = meta.trace.trace_id if meta.trace is not None else None
    return RulesToolResponse(request_id=meta.request_id, trace_id=trace_id, rules=rules)


async def _run(command: list[str], env: dict[str, str]) -> bytes:
    process = await asyncio.create_subprocess_exec(
        *command, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), TOOL_TIMEOUT_S)
    except (TimeoutError, asyncio.CancelledError):
        process.kill()
        await process.wait()
        raise
    if process.returncode != 0:
        # its stderr goes to the log, not the client: a traceback names the server's files
        tail = err.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        logger.warning("the rules tool failed (exit %d): %s", process.returncode, tail[0])
        raise ApiError(502, "tool_failed", f"the rules tool failed (exit {process.returncode})")
    return out
