"""The local trace store: finished spans in a bounded SQLite file.

With no collector running, every span still lands somewhere `corrige budget`, `corrige traces
report`, `corrige traces audit` and the dashboard can read it. Several processes may write the
same file (the server and the subprocess tools it runs): WAL mode and a busy timeout let them.
The store keeps at most `max_spans` rows; the oldest go first.

    store = TraceStore(Path("traces.sqlite"))
    store.write([SpanRecord(...)])
    for trace in store.traces(last=1000): ...
"""

from __future__ import annotations

import gc
import json
import sqlite3
import threading
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from corrige.obs.spans import ENTRY_SPANS

_SCHEMA = """
CREATE TABLE IF NOT EXISTS spans (
    trace_id      TEXT    NOT NULL,  -- 32 hex digits
    span_id       TEXT    NOT NULL,  -- 16 hex digits
    parent_id     TEXT,              -- NULL for a root
    parent_remote INTEGER NOT NULL DEFAULT 0,  -- the parent lives in another process
    name          TEXT    NOT NULL,
    start_ns      INTEGER NOT NULL,  -- Unix epoch nanoseconds
    end_ns        INTEGER NOT NULL,
    request_id    TEXT,
    status        TEXT    NOT NULL DEFAULT 'UNSET',
    attributes    TEXT    NOT NULL DEFAULT '{}'  -- JSON object
);
CREATE INDEX IF NOT EXISTS spans_by_trace ON spans (trace_id, span_id);
"""

# one encoder for every row: json.dumps with arguments builds a new one per call (half its cost here)
_ENCODE = json.JSONEncoder(separators=(",", ":")).encode

_COLUMNS = "trace_id, span_id, parent_id, parent_remote, name, start_ns, end_ns, request_id, status, attributes"


@dataclass(slots=True)
class SpanRecord:
    """One finished span, as stored. Not frozen, because a frozen dataclass's `__init__` sets each
    field through `object.__setattr__` (five times slower here, ten spans a request); treat it
    as read-only all the same."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    request_id: str | None = None
    status: str = "UNSET"
    attributes: dict = field(default_factory=dict)
    parent_remote: bool = False

    @property
    def duration_ms(self) -> float:
        return (self.end_ns - self.start_ns) / 1e6


@dataclass(frozen=True, slots=True)
class Trace:
    """The spans of one trace; `root` is its entry span (None when it never arrived)."""

    trace_id: str
    spans: tuple[SpanRecord, ...]

    @property
    def root(self) -> SpanRecord | None:
        return next((s for s in self.spans if s.name in ENTRY_SPANS), None)

    def by_name(self, name: str) -> list[SpanRecord]:
        return [s for s in self.spans if s.name == name]


def group_traces(spans: Iterable[SpanRecord]) -> list[Trace]:
    """Spans grouped by trace id, in order of each trace's first span."""
    grouped: dict[str, list[SpanRecord]] = defaultdict(list)
    for span in spans:
        grouped[span.trace_id].append(span)
    return [Trace(trace_id, tuple(group)) for trace_id, group in grouped.items()]


def orphans_in(spans: Iterable[SpanRecord]) -> list[SpanRecord]:
    """Spans that lost their context: not an entry span, and no parent in their trace (a root,
    or a child of a span that is absent)."""
    spans = list(spans)
    known = {(s.trace_id, s.span_id) for s in spans}
    return [
        s
        for s in spans
        if s.name not in ENTRY_SPANS and (s.parent_id is None or (s.trace_id, s.parent_id) not in known)
    ]


def _records(rows: list[tuple]) -> list[SpanRecord]:
    """Rows (in `_COLUMNS` order) as `SpanRecord`s. This is most of the time a read takes, so:
    one `json.loads` over all the attribute objects at once (a call per row costs about three
    times as much at 100,000 spans), positional arguments, and the cyclic garbage collector held
    off while the records are built (the new objects set off full collections that find nothing,
    none of them is in a cycle)."""
    if not rows:
        return []
    attributes = json.loads("[" + ",".join(row[9] for row in rows) + "]")
    collecting = gc.isenabled()
    gc.disable()
    try:
        return [
            SpanRecord(t, s, p, n, a, b, rid, st, attrs, remote != 0)
            for (t, s, p, remote, n, a, b, rid, st, _), attrs in zip(rows, attributes, strict=True)
        ]
    finally:
        if collecting:
            gc.enable()


class TraceStore:
    """A bounded SQLite file of spans. Thread-safe; one connection per store, guarded by a lock."""

    def __init__(self, path: Path | str, max_spans: int = 200_000) -> None:
        self.path = Path(path)
        self.max_spans = max_spans
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # traces may lose the last commit on power loss
        self._db.executescript(_SCHEMA)
        self._writes_since_trim = 0

    # ---- writing ----

    def write(self, records: Sequence[SpanRecord]) -> None:
        if not records:
            return
        rows = [
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
                _ENCODE(r.attributes),
            )
            for r in records
        ]
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(f"INSERT INTO spans ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
                self._writes_since_trim += len(rows)
                if self._writes_since_trim >= max(self.max_spans // 20, 1):
                    self._trim()
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def _trim(self) -> None:
        self._writes_since_trim = 0
        (count,) = self._db.execute("SELECT COUNT(*) FROM spans").fetchone()
        excess = count - self.max_spans
        if excess > 0:
            self._db.execute(
                "DELETE FROM spans WHERE rowid IN (SELECT rowid FROM spans ORDER BY rowid LIMIT ?)", (excess,)
            )

    def clear(self) -> None:
        with self._lock:
            self._db.execute("DELETE FROM spans")

    # ---- reading ----

    def count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM spans").fetchone()[0]

    def spans(self, last_traces: int | None = None, trace_id: str | None = None) -> list[SpanRecord]:
        """All stored spans; or those of the `last_traces` most recent traces (by their latest row);
        or those of one trace. In write order."""
        select = f"SELECT {_COLUMNS} FROM spans"
        with self._lock:
            if trace_id is not None:
                rows = self._db.execute(select + " WHERE trace_id = ? ORDER BY rowid", (trace_id,)).fetchall()
            elif last_traces is not None:
                rows = self._rows_of_last(last_traces)
            else:
                rows = self._db.execute(select + " ORDER BY rowid").fetchall()
        return _records(rows)

    def _rows_of_last(self, n: int) -> list[tuple]:
        """The rows of the `n` traces whose latest row is most recent. A trace's rows are written
        close together, so one range scan from the oldest first row of the chosen traces, filtered
        here, reads only a few rows more than needed; `trace_id IN (subquery)` made SQLite search
        the index once per trace and sort the result, about twice as slow at 10,000 traces."""
        if n < 0:  # what `LIMIT -1` meant: no limit
            return self._db.execute(f"SELECT {_COLUMNS} FROM spans ORDER BY rowid").fetchall()
        if n == 0:
            return []
        self._db.execute("BEGIN")  # one snapshot for both reads, whatever other processes write meanwhile
        try:
            picked = self._db.execute(
                "SELECT trace_id, MIN(rowid) FROM spans GROUP BY trace_id ORDER BY MAX(rowid) DESC LIMIT ?", (n,)
            ).fetchall()
            if not picked:
                return []
            wanted = {trace_id for trace_id, _ in picked}
            first = min(rowid for _, rowid in picked)
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM spans WHERE rowid >= ? ORDER BY rowid", (first,)
            ).fetchall()
        finally:
            self._db.execute("COMMIT")
        return [row for row in rows if row[0] in wanted]

    def traces(self, last: int | None = None) -> list[Trace]:
        """Spans grouped by trace, oldest trace first."""
        return group_traces(self.spans(last))

    def trace(self, trace_id: str) -> Trace | None:
        spans = self.spans(trace_id=trace_id)
        return Trace(trace_id, tuple(spans)) if spans else None

    def count_orphans(self) -> int:
        """`len(self.orphans())`, in SQL (cheap enough for every metrics scrape)."""
        entry = ",".join("?" * len(ENTRY_SPANS))
        query = (
            f"SELECT COUNT(*) FROM spans s WHERE s.name NOT IN ({entry}) AND (s.parent_id IS NULL OR NOT EXISTS "
            "(SELECT 1 FROM spans p WHERE p.trace_id = s.trace_id AND p.span_id = s.parent_id))"
        )
        with self._lock:
            return self._db.execute(query, tuple(ENTRY_SPANS)).fetchone()[0]

    def orphans(self, limit: int | None = None) -> list[SpanRecord]:
        """`orphans_in(self.spans())` (the first `limit` of them, oldest first, when given),
        answered by SQLite through the (trace_id, span_id) index without building a record for
        every span."""
        entry = ",".join("?" * len(ENTRY_SPANS))
        query = (
            f"SELECT {_COLUMNS} FROM spans AS s WHERE s.name NOT IN ({entry}) AND (s.parent_id IS NULL OR NOT EXISTS"
            " (SELECT 1 FROM spans AS p WHERE p.trace_id = s.trace_id AND p.span_id = s.parent_id)) ORDER BY s.rowid"
            " LIMIT ?"
        )
        with self._lock:
            rows = self._db.execute(query, (*sorted(ENTRY_SPANS), -1 if limit is None else limit)).fetchall()
        return _records(rows)

    def close(self) -> None:
        with self._lock:
            self._db.close()
