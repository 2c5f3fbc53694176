"""Helpers of the observability tests: traces built span by span, written to real trace stores."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

from corrige.obs import spans as names
from corrige.obs.store import SpanRecord, TraceStore

MS = 1_000_000  # ns
T0 = 1_700_000_000_000_000_000
_ids = itertools.count(1)


def make_trace(
    stages: Sequence[tuple[str, float, float] | tuple[str, float, float, dict]],
    root_ms: float | None = None,
    start_ns: int = T0,
    root_attributes: dict | None = None,
    status: str = "OK",
) -> list[SpanRecord]:
    """One trace: `stages` are (name, start ms after the root's start, duration ms[, attributes]),
    children of an `http.request` root lasting `root_ms` (default: up to the last stage's end)."""
    n = next(_ids)
    trace_id, root_id = f"{n:032x}", f"{n:016x}"
    records = []
    end_ms = 0.0
    for i, stage in enumerate(stages):
        name, at, duration = stage[:3]
        attributes = stage[3] if len(stage) > 3 else {}
        records.append(
            SpanRecord(
                trace_id,
                f"{n:08x}{i + 1:08x}",
                root_id,
                name,
                start_ns + round(at * MS),
                start_ns + round((at + duration) * MS),
                f"req-{n}",
                "OK",
                {names.REQUEST_ID: f"req-{n}", **attributes},
            )
        )
        end_ms = max(end_ms, at + duration)
    root_ms = end_ms if root_ms is None else root_ms
    records.append(
        SpanRecord(
            trace_id,
            root_id,
            None,
            names.ROOT,
            start_ns,
            start_ns + round(root_ms * MS),
            f"req-{n}",
            status,
            {names.REQUEST_ID: f"req-{n}", **(root_attributes or {})},
        )
    )
    return records


def sequential(stages: Sequence[tuple[str, float] | tuple[str, float, dict]]) -> list[tuple]:
    """(name, ms[, attributes]) back to back from 0 → `make_trace`'s (name, start, ms[, attributes])."""
    out, at = [], 0.0
    for stage in stages:
        out.append((stage[0], at, stage[1], *(stage[2:])))
        at += stage[1]
    return out


def orphan(name: str = "tool.check", parent_id: str | None = "dead00000000beef") -> SpanRecord:
    """A span whose parent never arrived (e.g. a subprocess that lost TRACEPARENT)."""
    n = next(_ids)
    return SpanRecord(f"{n:032x}", f"{n:016x}", parent_id, name, T0, T0 + MS, None, "OK", {})


def fill(store: TraceStore, records: Iterable[SpanRecord], chunk: int = 5_000) -> None:
    batch: list[SpanRecord] = []
    for record in records:
        batch.append(record)
        if len(batch) >= chunk:
            store.write(batch)
            batch = []
    store.write(batch)
