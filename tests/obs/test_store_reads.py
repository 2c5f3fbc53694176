"""The trace store's read path (a range scan for the last N traces, one JSON parse for all the
attributes, orphans in SQL) answers exactly what the straightforward reads did."""

from __future__ import annotations

import json
import random
import sqlite3
from dataclasses import replace

import pytest
from obs_support import T0, fill, make_trace, orphan, sequential

from corrige.obs import spans as names
from corrige.obs.store import TraceStore, orphans_in


def _interleaved_store(tmp_path, seed: int = 7) -> TraceStore:
    """Traces whose spans arrive interleaved with other traces' (several requests in flight), a
    long-lived trace whose root arrives last, and orphans."""
    rng = random.Random(seed)
    store = TraceStore(tmp_path / "traces.sqlite")
    traces = [
        make_trace(sequential([(names.VALIDATE, 0.3, {"n": i}), (names.DECODE, 5.0)]), start_ns=T0 + i)
        for i in range(60)
    ]
    pending = [list(t) for t in traces]
    order = []
    while any(pending):
        chosen = rng.choice([p for p in pending if p])
        order.append(chosen.pop(0))
    long_lived = make_trace(sequential([(names.VALIDATE, 1.0), (names.DECODE, 1.0)]))
    fill(store, [long_lived[0]], chunk=1)
    for i in range(0, len(order), 7):  # several small writes, as a writer thread does
        store.write(order[i : i + 7])
    store.write([orphan(), orphan(parent_id=None), *long_lived[1:]])
    return store


def _reference_last(path, n: int) -> list[tuple]:
    """The original query: the traces of the n most recent latest rows, all their rows by rowid."""
    db = sqlite3.connect(path)
    rows = db.execute(
        "SELECT trace_id, span_id, name, attributes FROM spans WHERE trace_id IN (SELECT trace_id FROM spans"
        " GROUP BY trace_id ORDER BY MAX(rowid) DESC LIMIT ?) ORDER BY rowid",
        (n,),
    ).fetchall()
    db.close()
    return rows


@pytest.mark.parametrize("n", [1, 3, 10, 25, 61, 1000])
def test_last_traces_match_the_reference_query(tmp_path, n):
    store = _interleaved_store(tmp_path)
    got = [(s.trace_id, s.span_id, s.name, s.attributes) for s in store.spans(last_traces=n)]
    want = [(t, s, name, json.loads(a)) for t, s, name, a in _reference_last(store.path, n)]
    assert got == want


def test_records_round_trip_every_field(tmp_path):
    store = TraceStore(tmp_path / "traces.sqlite")
    (child, root) = make_trace([(names.DECODE, 1.0, 2.0, {"x": [1, "é"], names.STEPS: 3})])
    remote_root = replace(root, parent_remote=True)
    store.write([child, remote_root])
    assert store.spans() == [child, remote_root]
    assert store.spans(last_traces=1) == [child, remote_root]
    assert store.spans(trace_id=child.trace_id) == [child, remote_root]
    assert store.spans(last_traces=0) == []


def test_orphans_in_sql_match_orphans_in_python(tmp_path):
    store = _interleaved_store(tmp_path)
    expected = orphans_in(store.spans())
    assert len(expected) == 2
    assert store.orphans() == expected
    assert store.orphans(limit=1) == expected[:1]
    assert store.count_orphans() == 2
