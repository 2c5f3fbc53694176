"""The local trace store: finished spans in a bounded SQLite file.

With no collector running, every span still lands somewhere `corrige budget`, `corrige traces
report`, `corrige traces audit` and the dashboard can read it. Several processes may write the
same file (the server and the subprocess tools it runs): WAL mode and a busy timeout let them.
The store keeps at most `max_spans` rows; the oldest go first.

Spans have no index of their own: inserting ten random `(trace_id, span_id)` keys a request into
a B-tree of 200,000 rows rewrote a page for nearly every key, and that was most of what tracing
cost the server. Instead each trace has one row in `traces`: the range of `spans` rowids that
holds its spans (a trace's spans are written close together) and how many of them are orphans
(no parent in the store), kept up to date on every write and trim. Finding a trace's spans is a
range scan, and counting orphans for every metrics scrape is a sum over traces. Files written
with the older per-span index are converted when opened.

    store = TraceStore(Path("traces.sqlite"))
    store.write([SpanRecord(...)])
    for trace in store.traces(last=1000): ...
"""

from __future__ import annotations

import gc
import json
import sqlite3
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from json import encoder as _json_encoder
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
"""
_TRACES = """
CREATE TABLE traces (
    trace_id  TEXT    PRIMARY KEY,
    first_row INTEGER NOT NULL,  -- every span of the trace has a spans.rowid in first_row..last_row
    last_row  INTEGER NOT NULL,
    orphans   INTEGER NOT NULL   -- its spans whose parent is not in the store (see `orphans_in`)
) WITHOUT ROWID;
"""


def _make_encoder() -> Callable[[object], str]:
    """Compact JSON for the attributes. `JSONEncoder.encode` builds a new C encoder on every call,
    which costs about as much as encoding a span's attributes; this one is built once (and falls
    back to the plain encoder where the C one is missing or answers differently)."""
    plain = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode
    make = getattr(_json_encoder, "c_make_encoder", None)
    if make is None:
        return plain

    def default(obj: object) -> object:
        raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")

    try:
        c_encode = make(None, default, _json_encoder.encode_basestring_ascii, None, ":", ",", False, False, True)
        probe = {"a": None, "b": [1, 2.5, "é"], "c": {"d": True}}
        if "".join(c_encode(probe, 0)) != plain(probe):
            return plain
    except TypeError:  # another signature
        return plain
    return lambda obj: "".join(c_encode(obj, 0))


_ENCODE = _make_encoder()

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


def _count_orphans(spans: Iterable[tuple[str, str | None, str]]) -> int:
    """`len(orphans_in(..))` for one trace's spans given as (span_id, parent_id, name)."""
    spans = list(spans)
    ids = {span_id for span_id, _, _ in spans}
    return sum(1 for _, parent, name in spans if name not in ENTRY_SPANS and (parent is None or parent not in ids))


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


def journal_mode_wal(conn: sqlite3.Connection, deadline: float) -> str:
    """Switch the file to WAL. Another connection opening the same new file at that moment makes
    SQLite answer "database is locked" at once, without waiting its busy timeout (two servers
    starting together, on the portal's file or the trace store): try again until `deadline`."""
    while True:
        try:
            return conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


class TraceStore:
    """A bounded SQLite file of spans. Thread-safe; one connection per store, guarded by a lock."""

    def __init__(self, path: Path | str, max_spans: int = 200_000) -> None:
        self.path = Path(path)
        self.max_spans = max_spans
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False, isolation_level=None)
        journal_mode_wal(self._db, deadline=time.monotonic() + 10.0)  # replicas may open a new file together
        self._db.execute("PRAGMA synchronous=NORMAL")  # traces may lose the last commit on power loss
        self._db.executescript(_SCHEMA)
        self._convert()
        self._writes_since_trim = 0

    def _convert(self) -> None:
        """Give a file without the `traces` table one (new, or written with the per-span index)."""

        def has(kind: str, name: str) -> bool:
            query = "SELECT 1 FROM sqlite_master WHERE type = ? AND name = ?"
            return self._db.execute(query, (kind, name)).fetchone() is not None

        if has("table", "traces"):
            return
        self._db.execute("BEGIN IMMEDIATE")  # another process may be converting the same file
        try:
            if not has("table", "traces"):
                self._db.execute(_TRACES)  # not executescript: that would commit
                rows = self._db.execute("SELECT rowid, trace_id, span_id, parent_id, name FROM spans").fetchall()
                by_trace: dict[str, list[tuple]] = defaultdict(list)
                for row in rows:
                    by_trace[row[1]].append(row)
                self._db.executemany(
                    "INSERT INTO traces VALUES (?, ?, ?, ?)",
                    [
                        (trace_id, group[0][0], group[-1][0], _count_orphans((r[2], r[3], r[4]) for r in group))
                        for trace_id, group in by_trace.items()
                    ],
                )
                self._db.execute("DROP INDEX IF EXISTS spans_by_trace")
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

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
                (before,) = self._db.execute("SELECT COALESCE(MAX(rowid), 0) FROM spans").fetchone()
                self._db.executemany(f"INSERT INTO spans ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
                self._index(records, before)
                self._writes_since_trim += len(rows)
                if self._writes_since_trim >= max(self.max_spans // 20, 1):
                    self._trim()
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def _index(self, records: Sequence[SpanRecord], before: int) -> None:
        """The `traces` rows of the records just inserted after rowid `before`."""
        (last,) = self._db.execute("SELECT last_insert_rowid()").fetchone()
        if last == before + len(records):  # SQLite's usual rowids: one past the largest, in order
            rowids: Sequence[int] = range(before + 1, last + 1)
        else:
            query = "SELECT rowid FROM spans WHERE rowid > ? ORDER BY rowid"
            rowids = [r for (r,) in self._db.execute(query, (before,))]
        new: dict[str, list[tuple]] = {}  # trace -> (rowid, span_id, parent_id, name) of this write
        for rowid, r in zip(rowids, records, strict=True):
            new.setdefault(r.trace_id, []).append((rowid, r.span_id, r.parent_id, r.name))
        known: dict[str, tuple[int, int]] = {}  # trace -> (first_row, last_row) already stored
        ids = list(new)
        for i in range(0, len(ids), 500):  # below SQLite's limit on bound parameters
            chunk = ids[i : i + 500]
            query = f"SELECT trace_id, first_row, last_row FROM traces WHERE trace_id IN ({','.join('?' * len(chunk))})"
            known.update((t, (a, b)) for t, a, b in self._db.execute(query, chunk))
        updates = []
        for trace_id, spans in new.items():
            first, last = spans[0][0], spans[-1][0]
            if trace_id in known:  # more spans of a trace already stored (a tool's, its root's)
                old_first, _ = known[trace_id]
                spans = self._trace_rows(trace_id, old_first, last)
                first = old_first
            updates.append((trace_id, first, last, _count_orphans((s, p, n) for _, s, p, n in spans)))
        self._db.executemany("INSERT OR REPLACE INTO traces VALUES (?, ?, ?, ?)", updates)

    def _trace_rows(self, trace_id: str, first: int, last: int) -> list[tuple]:
        """(rowid, span_id, parent_id, name) of a trace's stored spans."""
        query = "SELECT rowid, span_id, parent_id, name FROM spans WHERE rowid BETWEEN ? AND ? AND trace_id = ?"
        return self._db.execute(query, (first, last, trace_id)).fetchall()

    def _trim(self) -> None:
        """Drop the oldest rows past `max_spans`, and the traces they leave empty; a trace that
        loses some of its spans gets its range and orphan count again."""
        self._writes_since_trim = 0
        # Rowids are consecutive (each insert takes the largest plus one, and rows only ever go from
        # the oldest end), so the newest `max_spans` rows start here; no COUNT(*), a scan of the table.
        (newest,) = self._db.execute("SELECT MAX(rowid) FROM spans").fetchone()
        cutoff = (newest or 0) - self.max_spans + 1
        if self._db.execute("SELECT 1 FROM spans WHERE rowid < ? LIMIT 1", (cutoff,)).fetchone() is None:
            return
        self._db.execute("DELETE FROM spans WHERE rowid < ?", (cutoff,))
        self._db.execute("DELETE FROM traces WHERE last_row < ?", (cutoff,))
        cut = self._db.execute("SELECT trace_id, last_row FROM traces WHERE first_row < ?", (cutoff,)).fetchall()
        updates = []
        for trace_id, last in cut:
            spans = self._trace_rows(trace_id, cutoff, last)
            if spans:
                updates.append((trace_id, spans[0][0], last, _count_orphans((s, p, n) for _, s, p, n in spans)))
            else:
                self._db.execute("DELETE FROM traces WHERE trace_id = ?", (trace_id,))
        self._db.executemany("INSERT OR REPLACE INTO traces VALUES (?, ?, ?, ?)", updates)

    def clear(self) -> None:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute("DELETE FROM spans")
                self._db.execute("DELETE FROM traces")
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

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
                rows = self._rows_of_trace(trace_id)
            elif last_traces is not None:
                rows = self._rows_of_last(last_traces)
            else:
                rows = self._db.execute(select + " ORDER BY rowid").fetchall()
        return _records(rows)

    def _rows_of_trace(self, trace_id: str) -> list[tuple]:
        self._db.execute("BEGIN")
        try:
            query = "SELECT first_row, last_row FROM traces WHERE trace_id = ?"
            found = self._db.execute(query, (trace_id,)).fetchone()
            if found is None:
                return []
            query = f"SELECT {_COLUMNS} FROM spans WHERE rowid BETWEEN ? AND ? AND trace_id = ? ORDER BY rowid"
            return self._db.execute(query, (*found, trace_id)).fetchall()
        finally:
            self._db.execute("COMMIT")

    def _rows_of_last(self, n: int) -> list[tuple]:
        """The rows of the `n` traces whose latest row is most recent. A trace's rows are written
        close together, so one range scan from the oldest first row of the chosen traces, filtered
        here, reads only a few rows more than needed."""
        if n < 0:  # what `LIMIT -1` meant: no limit
            return self._db.execute(f"SELECT {_COLUMNS} FROM spans ORDER BY rowid").fetchall()
        if n == 0:
            return []
        self._db.execute("BEGIN")  # one snapshot for both reads, whatever other processes write meanwhile
        try:
            picked = self._db.execute(
                "SELECT trace_id, first_row FROM traces ORDER BY last_row DESC LIMIT ?", (n,)
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
        """`len(self.orphans())`, kept per trace by every write (cheap enough for every metrics scrape)."""
        with self._lock:
            return self._db.execute("SELECT COALESCE(SUM(orphans), 0) FROM traces").fetchone()[0]

    def orphans(self, limit: int | None = None) -> list[SpanRecord]:
        """`orphans_in(self.spans())` (the first `limit` of them, oldest first, when given), read
        from the traces that have any, without building a record for every span."""
        with self._lock:
            self._db.execute("BEGIN")
            try:
                traces = self._db.execute(
                    "SELECT trace_id, first_row, last_row FROM traces WHERE orphans > 0 ORDER BY first_row"
                ).fetchall()
                query = f"SELECT rowid, {_COLUMNS} FROM spans WHERE rowid BETWEEN ? AND ? AND trace_id = ?"
                found: list[tuple] = []
                for trace_id, first, last in traces:
                    rows = self._db.execute(query, (first, last, trace_id)).fetchall()
                    ids = {row[2] for row in rows}
                    found += [r for r in rows if r[5] not in ENTRY_SPANS and (r[3] is None or r[3] not in ids)]
            finally:
                self._db.execute("COMMIT")
        found.sort()  # by rowid: oldest first
        if limit is not None:
            found = found[:limit]
        return _records([row[1:] for row in found])

    def close(self) -> None:
        with self._lock:
            self._db.close()
