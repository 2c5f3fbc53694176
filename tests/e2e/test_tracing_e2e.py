"""Traces through a real server: rule cards on the retrieve span, a subprocess tool that continues
the request's trace, and an un-propagated tool call reported as an orphan."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
from e2e_support import wait_for

from corrige.obs import spans as S
from corrige.obs.store import Trace, TraceStore

CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c"
CALLER_SPAN = "b7ad6b7169203331"


def store_of(server) -> TraceStore:
    return TraceStore(Path(server.env["CORRIGE_TRACE_STORE"]))


def written_trace(server, request_id: str, needs: tuple[str, ...] = (S.ROOT,)) -> Trace:
    """The request's trace once the server's writer has stored it (it writes in batches)."""
    store = store_of(server)

    def ready():
        for trace in store.traces():
            names = {s.name for s in trace.spans}
            if any(s.request_id == request_id for s in trace.spans) and set(needs) <= names:
                return trace
        return None

    try:
        return wait_for(ready, f"the trace of {request_id}", timeout=20.0, interval=0.1)
    finally:
        store.close()


def audit(server_or_path) -> subprocess.CompletedProcess:
    path = server_or_path if isinstance(server_or_path, Path) else Path(server_or_path.env["CORRIGE_TRACE_STORE"])
    command = [sys.executable, "-m", "corrige.cli", "traces", "audit", "--store", str(path), "--json"]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def test_a_correction_returns_rule_cards_and_its_retrieve_span_names_them(server):
    response = httpx.post(f"{server.url}/v1/grammar/correct", json={"sentence": "Yesterday I goed to the store."})
    body = response.json()
    assert response.status_code == 200, body
    trace = written_trace(server, body["request_id"], (S.ROOT, S.RETRIEVE, S.COST))
    (retrieve,) = trace.by_name(S.RETRIEVE)
    if body["edits"]:
        assert body["rules"] and {"id", "title", "explanation", "example"} <= set(body["rules"][0])
        assert retrieve.attributes[S.CARD_IDS] == [r["id"] for r in body["rules"]]
        assert len(retrieve.attributes[S.CARD_SCORES]) == len(body["rules"])
    else:  # a fixture model without the bundled weights may leave the sentence alone
        assert body["rules"] == [] and retrieve.attributes["retrieve.skipped"] == "no_edits"
    without = httpx.post(f"{server.url}/v1/grammar/correct", json={"sentence": "I goed home.", "rules": False}).json()
    assert without["rules"] == []


def test_a_subprocess_tool_continues_the_requests_trace(server):
    headers = {"traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01", "tracestate": "lab=1"}
    response = httpx.post(
        f"{server.url}/v1/tools/rules", json={"query": "I have 20 years"}, headers=headers, timeout=60
    )
    body = response.json()
    assert response.status_code == 200, body
    assert body["trace_id"] == CALLER_TRACE and body["rules"][0]["id"]
    trace = written_trace(server, body["request_id"], (S.ROOT, "tool.call", "tool.rules"))
    root, (call,), (tool,) = trace.root, trace.by_name("tool.call"), trace.by_name("tool.rules")
    assert root.parent_id == CALLER_SPAN  # the caller's span, in another process
    assert call.parent_id == root.span_id
    assert tool.parent_id == call.span_id and tool.parent_remote  # across the process boundary
    assert tool.request_id == body["request_id"]
    assert tool.attributes["retrieve.card_ids"] == [r["id"] for r in body["rules"]]
    report = json.loads(audit(server).stdout)
    assert report["orphans"] == 0


def test_a_tool_run_without_traceparent_is_reported_as_an_orphan(server, tmp_path):
    store = tmp_path / "traces.sqlite"
    env = {k: v for k, v in os.environ.items() if k not in ("TRACEPARENT", "TRACESTATE")}
    env["CORRIGE_TRACE_STORE"] = str(store)
    env["CORRIGE_REQUEST_ID"] = "lost-context"
    tool = subprocess.run(
        [sys.executable, "-m", "corrige.cli", "tool", "rules", "married with"], env=env, capture_output=True, timeout=60
    )
    assert tool.returncode == 0, tool.stderr
    result = audit(store)
    assert result.returncode == 1  # orphans found
    report = json.loads(result.stdout)
    assert report["orphans"] == 1
    assert report["examples"][0]["name"] == "tool.rules" and report["examples"][0]["request_id"] == "lost-context"


def test_metrics_count_orphans_in_the_servers_store(server):
    store = store_of(server)
    try:
        orphans = store.count_orphans()
    finally:
        store.close()
    text = httpx.get(f"{server.url}/metrics").text
    line = next(x for x in text.splitlines() if x.startswith("corrige:orphan_spans "))
    assert float(line.split()[1]) == orphans
