"""The trace store's per-trace table (rowid range and orphan count of each trace) stays exact
through writes in any order, trims, and the conversion of files written with the older per-span
index: every answer matches the straightforward computation over all spans."""

from __future__ import annotations

import json
import random
import sqlite3
from dataclasses import replace

import pytest
from obs_support import fill, make_trace, orphan, sequential

from corrige.obs import spans as names
from corrige.obs.store import _ENCODE, SpanRecord, TraceStore, group_traces, orphans_in


def _traces(rng: random.Random, n: int) -> list[list[SpanRecord]]:
    """Traces of a root and two stages, some with a tool span whose own child arrives apart."""
    traces = []
    for i in range(n):
        trace = make_trace(sequential([(names.VALIDATE, 0.3, {"n": i}), (names.DECODE, 2.0)]))
        if rng.random() < 0.3:  # a subprocess tool: a child of the root, and a grandchild
            root = trace[-1]
            tool = replace(trace[0], span_id=f"{i:08x}aaaaaaaa", name="tool.rules", attributes={})
            inner = replace(tool, span_id=f"{i:08x}bbbbbbbb", parent_id=tool.span_id, name="tool.lookup")
            trace = [inner, tool, *trace[:-1], root]
        if rng.random() < 0.3:  # the root first (a trim that cuts it leaves orphans behind)
            trace = [trace[-1], *trace[:-1]]
        traces.append(trace)
    return traces


def _shuffled_writes(store: TraceStore, rng: random.Random, traces: list[list[SpanRecord]]) -> None:
    """Spans of many traces interleaved (requests in flight together), in writes of 1-9 spans;
    some roots come last, so their children are orphans for a while; a few real orphans."""
    pending = [list(t) for t in traces] + [[orphan()] for _ in range(3)]
    order = []
    while any(pending):
        order.append(rng.choice([p for p in pending if p]).pop(0))
    while order:
        size = rng.randint(1, 9)
        store.write(order[:size])
        order = order[size:]


def _check(store: TraceStore) -> None:
    spans = store.spans()
    expected = orphans_in(spans)
    assert store.count_orphans() == len(expected)
    assert store.orphans() == expected
    assert store.orphans(limit=2) == expected[:2]
    for trace in group_traces(spans)[::7]:
        assert store.spans(trace_id=trace.trace_id) == list(trace.spans)
    assert store.spans(trace_id="f" * 32) == []


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_orphans_and_lookups_stay_exact_through_interleaved_writes(tmp_path, seed):
    rng = random.Random(seed)
    store = TraceStore(tmp_path / "traces.sqlite")
    traces = _traces(rng, 80)
    half = [t[:-1] for t in traces[:10]]  # roots not written yet: their children are orphans
    fill(store, [s for t in half for s in t], chunk=4)
    assert store.count_orphans() == len(orphans_in(store.spans())) > 0
    fill(store, [t[-1] for t in traces[:10]], chunk=3)  # the roots arrive: no orphans left among them
    _shuffled_writes(store, rng, traces[10:])
    _check(store)
    assert store.count_orphans() == 3  # only the three real orphans


def test_trims_keep_the_newest_spans_and_exact_orphan_counts(tmp_path):
    rng = random.Random(9)
    store = TraceStore(tmp_path / "traces.sqlite", max_spans=120)  # trims every 6 spans written
    _shuffled_writes(store, rng, _traces(rng, 60))
    count = store.count()
    assert 120 <= count < 120 + 15  # trimmed to the bound, give or take one write
    _check(store)  # traces cut by the trim lost their root: their children count as orphans now
    store.clear()
    assert store.count() == store.count_orphans() == 0 and store.orphans() == []


def _old_format_file(path, records: list[SpanRecord]) -> None:
    """A trace store as earlier versions wrote it: the spans table with a per-span index."""
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE spans (trace_id TEXT NOT NULL, span_id TEXT NOT NULL, parent_id TEXT,
            parent_remote INTEGER NOT NULL DEFAULT 0, name TEXT NOT NULL, start_ns INTEGER NOT NULL,
            end_ns INTEGER NOT NULL, request_id TEXT, status TEXT NOT NULL DEFAULT 'UNSET',
            attributes TEXT NOT NULL DEFAULT '{}');
        CREATE INDEX spans_by_trace ON spans (trace_id, span_id);
        """
    )
    db.executemany(
        "INSERT INTO spans VALUES (?,?,?,?,?,?,?,?,?,?)",
        [
            (
                r.trace_id,
                r.span_id,
                r.parent_id,
                int(r.parent_remote),
                r.name,
                r.start_ns,
                r.end_ns,
                r.request_id,
                r.status,
                '{"n": 1}',
            )  # fmt: skip
            for r in records
        ],
    )
    db.commit()
    db.close()


def test_a_file_with_the_older_per_span_index_is_converted_when_opened(tmp_path):
    rng = random.Random(4)
    traces = _traces(rng, 30)
    records = [s for t in traces for s in t] + [orphan(), orphan(parent_id=None)]
    path = tmp_path / "old.sqlite"
    _old_format_file(path, records)
    store = TraceStore(path)
    assert store.count() == len(records)
    assert store.count_orphans() == 2
    _check(store)
    store.write(make_trace(sequential([(names.VALIDATE, 1.0)])))  # and it takes new spans as before
    assert store.count() == len(records) + 2
    indexes = sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type = 'index'").fetchall()
    assert ("spans_by_trace",) not in indexes
    TraceStore(path).close()  # opening it again changes nothing
    assert TraceStore(path).count_orphans() == 2


def test_a_tools_spans_written_first_are_orphans_until_the_request_arrives(tmp_path):
    """The subprocess tool writes its span from its own process before the server writes the
    request's spans: two stores on one file, as in the server."""
    path = tmp_path / "traces.sqlite"
    server, tool = TraceStore(path), TraceStore(path)
    request = make_trace(sequential([(names.VALIDATE, 0.3), (names.RETRIEVE, 1.0)]))
    retrieve = request[1]
    tool_span = replace(retrieve, span_id="ab" * 8, parent_id=retrieve.span_id, name="tool.rules", attributes={})
    tool.write([tool_span])
    assert server.count_orphans() == 1 and server.orphans() == [tool_span]
    server.write(request)
    assert server.count_orphans() == 0 and tool.orphans() == []
    assert server.trace(retrieve.trace_id).spans == (tool_span, *request)


@pytest.mark.parametrize(
    "attributes",
    [{}, {"a": 1, "b": 2.5, "c": "é ✓", "d": None, "e": True}, {"ids": ["x", "y"], "nested": {"k": [1.0, -0.0]}}],
)
def test_attributes_are_stored_as_compact_json(attributes):
    assert _ENCODE(attributes) == json.dumps(attributes, separators=(",", ":"))


def test_attributes_that_are_not_json_fail_the_write_loudly(tmp_path):
    store = TraceStore(tmp_path / "traces.sqlite")
    (span,) = make_trace([])
    with pytest.raises(TypeError, match="not JSON serializable"):
        store.write([replace(span, attributes={"when": object()})])
    assert store.count() == 0
