"""The trace store's writes in a process of their own.

Encoding a batch of spans as JSON and inserting it into SQLite, on a thread of the server, was
half of what tracing and metrics cost the server's process, and that thread took the
interpreter lock from the event loop: with it, tracing and metrics cost about 8% of throughput at
32 clients, with this process under 1% (`corrige bench observability`, and the same with
`CORRIGE_TRACE_WRITER_PROCESS=false`; see docs/BENCHMARKS.md). Here the server's writer thread
only turns each batch into plain tuples and pickles it (one C call); a spawned child unpickles,
encodes and inserts, with its own interpreter, on whichever core has time. The child answers
every batch once it is committed, so `Tracing.flush` still means "on disk", and a batch is never
dropped: if the child dies, the batch it was given and everything after are written in this
process instead (and logged).

    writer = StoreWriterProcess(Path("traces.sqlite"), max_spans=200_000)
    writer.write(records)  # returns once they are committed
    writer.close()
"""

from __future__ import annotations

import logging
import multiprocessing
import pickle
import signal
import threading
from collections.abc import Sequence
from multiprocessing.connection import Connection
from pathlib import Path

from corrige.obs.store import SpanRecord, TraceStore

logger = logging.getLogger(__name__)

_STOP = b""  # the message that ends the child

# The most spans sent to the child in one message. A slow disk or a busy machine lets batches pile
# up; unpickling and inserting tens of thousands of spans at once raised the child's RSS by as much
# each time, and the allocator kept it (the 30-minute soak's steps). Chunks keep its peak flat.
MAX_SPANS_PER_MESSAGE = 1_000


def chunks(records: Sequence[SpanRecord], size: int = MAX_SPANS_PER_MESSAGE) -> list[Sequence[SpanRecord]]:
    """`records` cut into runs of about `size`, each cut between two traces where one comes soon
    after `size` (a trace split over two writes is indexed right, only more slowly)."""
    out: list[Sequence[SpanRecord]] = []
    start = 0
    while start < len(records):
        end = min(start + size, len(records))
        stretch = min(end + size // 4, len(records))
        while end < stretch and records[end].trace_id == records[end - 1].trace_id:
            end += 1
        out.append(records[start:end])
        start = end
    return out


def _as_rows(records: Sequence[SpanRecord]) -> list[tuple]:
    """Records as tuples in `SpanRecord`'s field order: cheaper to pickle than dataclasses."""
    return [
        (
            r.trace_id,
            r.span_id,
            r.parent_id,
            r.name,
            r.start_ns,
            r.end_ns,
            r.request_id,
            r.status,
            r.attributes,
            r.parent_remote,
        )  # fmt: skip
        for r in records
    ]


def _writer_main(path: str, max_spans: int, conn: Connection) -> None:
    """The child: write each batch it is sent, and answer how it went."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the process group: the server stops us
    store = TraceStore(path, max_spans)
    try:
        while True:
            try:
                message = conn.recv_bytes()
            except (EOFError, OSError):  # the server is gone
                return
            if message == _STOP:
                return
            try:
                store.write([SpanRecord(*row) for row in pickle.loads(message)])
                conn.send(None)
            except Exception as exc:  # a full disk must not end the writer; these spans are lost
                logger.exception("could not write spans to %s", path)
                conn.send(f"{type(exc).__name__}: {exc}")
    finally:
        store.close()


class StoreWriterProcess:
    """`TraceStore.write` and `close`, done by a child process. Used from one thread at a time
    (the tracing writer thread); `write` returns once the child has committed the batch."""

    def __init__(self, path: Path | str, max_spans: int = 200_000) -> None:
        self.path = Path(path)
        self.max_spans = max_spans
        self._fallback: TraceStore | None = None
        self._lock = threading.Lock()
        ctx = multiprocessing.get_context("spawn")  # never fork a process that runs threads
        self._conn, child = ctx.Pipe(duplex=True)
        self._process = ctx.Process(
            target=_writer_main, args=(str(self.path), max_spans, child), name="corrige-trace-writer", daemon=True
        )
        self._process.start()
        child.close()

    @property
    def in_process(self) -> bool:
        """Whether writes happen here now (the child died)."""
        return self._fallback is not None

    def write(self, records: Sequence[SpanRecord]) -> None:
        with self._lock:
            for chunk in chunks(records):
                if self._fallback is None:
                    try:
                        self._conn.send_bytes(pickle.dumps(_as_rows(chunk), pickle.HIGHEST_PROTOCOL))
                        failure = self._conn.recv()
                    except (EOFError, OSError):
                        self._process.join(0.5)  # its exit code says how it went
                        logger.error(
                            "the trace writer process exited (exit code %s); writing spans in the server's process",
                            self._process.exitcode,
                        )
                        self._fallback = TraceStore(self.path, self.max_spans)
                    else:
                        if failure is not None:
                            raise OSError(f"the trace writer could not write {len(chunk)} spans: {failure}")
                        continue
                self._fallback.write(chunk)  # this chunk and every later one: the child is gone

    def close(self, timeout_s: float = 5.0) -> None:
        with self._lock:
            if self._fallback is None:
                try:
                    self._conn.send_bytes(_STOP)
                except (BrokenPipeError, OSError):
                    pass
            else:
                self._fallback.close()
            self._process.join(timeout_s)
            if self._process.is_alive():
                self._process.kill()
            self._conn.close()
