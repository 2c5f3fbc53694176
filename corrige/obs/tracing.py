"""Request tracing: one OpenTelemetry trace per request, written to the local trace store
(and to an OTLP collector when configured).

The hot path stays lean. A request's stages are timed with `time.perf_counter()` while it
runs and recorded as finished spans with explicit start and end times (`RequestTrace.timed`):
a record appended to a list. Span ids are 64 random bits; a trace id is the Unix time in
seconds (32 bits) and 96 random bits, as AWS X-Ray's ids are, so the trace store's index by
trace id grows at its end instead of on a random page. When the request ends its spans go, in
one piece, to a writer thread that stores them (`TraceStore`; with `writer_process`, a child
process does, `StoreWriterProcess`) and, with `otlp_endpoint` set, turns them into the SDK's
`ReadableSpan`s for its OTLP exporter. The W3C `traceparent`/`tracestate` of a caller is read
with the SDK's propagator, and handed on the same way to a subprocess (`RequestTrace.child`),
whose own spans come back as children. Recording the nine spans of a correction this way takes
about 20 µs on the request's thread (a loop that records them), against about 360 µs for
opening and closing nine SDK spans.
"""

from __future__ import annotations

import logging
import os
import queue
import random
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode, TraceFlags
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from corrige.obs import spans as S
from corrige.obs.store import SpanRecord, TraceStore
from corrige.obs.writer import StoreWriterProcess

logger = logging.getLogger(__name__)

PROPAGATOR = TraceContextTextMapPropagator()
_random_bits = random.getrandbits
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
# perf_counter / monotonic seconds → Unix epoch nanoseconds (fixed at import: the spans of one
# process share one clock; a drift of a few µs per hour does not matter here)
_PERF_TO_EPOCH_NS = time.time_ns() - time.perf_counter_ns()
_MONO_TO_EPOCH_NS = time.time_ns() - time.monotonic_ns()


def _span_id() -> str:
    """16 hex digits, never all zero (an invalid id); what `RandomIdGenerator` draws, with less
    call overhead (ten of these a request)."""
    return "%016x" % (_random_bits(64) or 1)


def _trace_id() -> int:
    """128 bits: the Unix time in seconds, then 96 random bits (never zero, an invalid id)."""
    return (int(time.time()) & 0xFFFFFFFF) << 96 | (_random_bits(96) or 1)


def perf_ns(t: float) -> int:
    """A `time.perf_counter()` reading as epoch nanoseconds."""
    return int(t * 1e9) + _PERF_TO_EPOCH_NS


def mono_ns(t: float) -> int:
    """A `time.monotonic()` reading (the engine's clock) as epoch nanoseconds."""
    return int(t * 1e9) + _MONO_TO_EPOCH_NS


@dataclass(frozen=True, slots=True)
class TracingConfig:
    store_path: Path | None = None  # None: no local store (OTLP only, or nothing kept)
    max_spans: int = 200_000
    otlp_endpoint: str | None = None  # e.g. http://127.0.0.1:4318/v1/traces
    # store writes in a child process (`corrige.obs.writer`), off this process's interpreter lock
    writer_process: bool = False
    service_name: str = "corrige"
    # which server recorded the spans (several replicas may write one store); "": host:pid
    instance: str = ""
    flush_interval_s: float = 0.5  # finished traces wait at most this long to be written


class Tracing:
    """The process's trace sink: the store, the optional OTLP exporter, and the writer thread."""

    def __init__(self, config: TracingConfig) -> None:
        self.config = config
        self.store = TraceStore(config.store_path, config.max_spans) if config.store_path is not None else None
        # the writer has its own connection, so readers (dashboard, /metrics) never wait on a write
        self._writer_store: TraceStore | StoreWriterProcess | None = None
        if config.store_path is not None:
            sink = StoreWriterProcess if config.writer_process else TraceStore
            self._writer_store = sink(config.store_path, config.max_spans)
        self._otlp = None
        self.instance = config.instance or default_instance()
        self.resource = Resource.create({"service.name": config.service_name, S.INSTANCE: self.instance})
        if config.otlp_endpoint:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            self._otlp = OTLPSpanExporter(endpoint=config.otlp_endpoint)
            logger.info("exporting spans over OTLP/HTTP to %s", config.otlp_endpoint)
        self._queue: queue.SimpleQueue[list[SpanRecord] | None] = queue.SimpleQueue()
        self._pending = 0  # traces queued, not yet written (approximate; for flush)
        self._written = threading.Condition()
        self._wake = threading.Event()  # set by flush(): write now, do not wait for a batch
        self._thread = threading.Thread(target=self._run, name="trace-writer", daemon=True)
        self._thread.start()

    def request(
        self, request_id: str, started: float, headers: Mapping[str, str] | None = None, **attributes: object
    ) -> RequestTrace:
        """Open the `http.request` root of a request that arrived at `started` (perf_counter),
        continuing the caller's trace when `headers` carry a W3C `traceparent`."""
        parent = None
        if headers and "traceparent" in headers:
            parent = trace.get_current_span(PROPAGATOR.extract(headers)).get_span_context()
            if not parent.is_valid:
                parent = None
        return RequestTrace(self, request_id, perf_ns(started), parent, attributes)

    def submit(self, records: list[SpanRecord]) -> None:
        with self._written:
            self._pending += 1
        self._queue.put(records)

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Wait until every trace submitted so far is written (tests, shutdown)."""
        self._wake.set()
        self._queue.put([])  # wake the writer now
        deadline = time.monotonic() + timeout_s
        with self._written:
            while self._pending > 0:
                left = deadline - time.monotonic()
                if left <= 0 or not self._written.wait(left):
                    return False
        return True

    def shutdown(self) -> None:
        self.flush()
        self._queue.put(None)
        self._thread.join(5.0)
        for store in (self.store, self._writer_store):
            if store is not None:
                store.close()
        if self._otlp is not None:
            self._otlp.shutdown()

    # ---- the writer thread ----

    def _run(self) -> None:
        stop = False
        while not stop:
            items = [self._queue.get()]
            if items[0] and not self._wake.is_set():
                self._wake.wait(self.config.flush_interval_s)  # let a batch gather: one write for many traces
            self._wake.clear()
            while True:
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            batch: list[SpanRecord] = []
            done = 0
            for item in items:
                if item is None:
                    stop = True
                elif item:
                    batch.extend(item)
                    done += 1
            self._write(batch)
            with self._written:
                self._pending -= done
                self._written.notify_all()

    def _write(self, records: list[SpanRecord]) -> None:
        if not records:
            return
        if self._writer_store is not None:
            try:
                self._writer_store.write(records)
            except Exception:  # a full disk must not take the server down; these spans are lost
                logger.exception("could not write %d spans to %s", len(records), self._writer_store.path)
        if self._otlp is not None:
            try:
                self._otlp.export([to_readable(r, self.resource) for r in records])
            except Exception:
                logger.exception("OTLP export of %d spans failed", len(records))


class RequestTrace:
    """The spans of one request, all children of its `http.request` root."""

    __slots__ = ("tracing", "request_id", "trace_id", "span_id", "parent", "start_ns", "attributes", "spans")

    def __init__(
        self,
        tracing: Tracing,
        request_id: str,
        start_ns: int,
        parent: SpanContext | None,
        attributes: Mapping[str, object],
    ) -> None:
        self.tracing = tracing
        self.request_id = request_id
        self.parent = parent
        self.trace_id = format(parent.trace_id if parent else _trace_id(), "032x")
        self.span_id = _span_id()
        self.start_ns = start_ns
        self.attributes = dict(attributes)
        self.spans: list[SpanRecord] = []

    @property
    def recorded(self) -> set[str]:
        """Names of the stages recorded so far."""
        return {s.name for s in self.spans}

    def stage(
        self,
        name: str,
        start_ns: int,
        end_ns: int,
        error: str | None = None,
        span_id: str | None = None,
        **attributes: object,
    ) -> None:
        """Record a finished stage of this request (times in epoch ns)."""
        if error is not None:
            attributes["error.message"] = error
        attributes[S.INSTANCE] = self.tracing.instance
        self.spans.append(
            SpanRecord(
                self.trace_id,
                span_id or _span_id(),
                self.span_id,
                name,
                start_ns,
                end_ns if end_ns > start_ns else start_ns,
                self.request_id,
                "UNSET" if error is None else "ERROR",
                attributes,
            )
        )

    def timed(self, name: str, start: float, end: float, error: str | None = None, **attributes: object) -> None:
        """`stage` with perf_counter seconds."""
        self.stage(name, int(start * 1e9) + _PERF_TO_EPOCH_NS, int(end * 1e9) + _PERF_TO_EPOCH_NS, error, **attributes)

    @contextmanager
    def child(self, name: str, **attributes: object) -> Iterator[dict[str, str]]:
        """A live child span; yields the environment a subprocess needs to continue the trace under
        it (`TRACEPARENT`, and `TRACESTATE` when the caller sent one)."""
        span_id = _span_id()
        start = time.time_ns()
        error = None
        try:
            yield propagation_env(self.trace_id, span_id, self.parent)
        except BaseException as exc:
            error = type(exc).__name__
            raise
        finally:
            self.stage(name, start, time.time_ns(), error, span_id, **attributes)

    def finish(self, end: float, status_code: int, error_code: str | None = None, **attributes: object) -> None:
        """Close the root at `end` (perf_counter) and hand the whole trace to the writer."""
        attrs = {**self.attributes, **attributes, S.HTTP_STATUS: status_code, S.INSTANCE: self.tracing.instance}
        if error_code is not None:
            attrs[S.ERROR_CODE] = error_code
        root = SpanRecord(
            trace_id=self.trace_id,
            span_id=self.span_id,
            parent_id=format(self.parent.span_id, "016x") if self.parent else None,
            parent_remote=self.parent is not None,
            name=S.ROOT,
            start_ns=self.start_ns,
            end_ns=perf_ns(end),
            request_id=self.request_id,
            status="ERROR" if status_code >= 500 else "UNSET",
            attributes=attrs,
        )
        self.spans.append(root)
        self.tracing.submit(self.spans)


def default_instance() -> str:
    """This process's name in traces: host and process id (unique among the replicas of one
    machine, and across machines by their host names)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def traceparent(trace_id: str, span_id: str) -> str:
    return f"00-{trace_id}-{span_id}-01"


def propagation_env(trace_id: str, span_id: str, caller: SpanContext | None = None) -> dict[str, str]:
    """W3C trace context for a child process of span `span_id`, with the caller's tracestate."""
    ctx = SpanContext(
        int(trace_id, 16),
        int(span_id, 16),
        is_remote=False,
        trace_flags=_SAMPLED,
        trace_state=caller.trace_state if caller is not None else None,
    )
    carrier: dict[str, str] = {}
    PROPAGATOR.inject(carrier, context=trace.set_span_in_context(NonRecordingSpan(ctx)))
    env = {"TRACEPARENT": carrier["traceparent"]}
    if carrier.get("tracestate"):
        env["TRACESTATE"] = carrier["tracestate"]
    return env


def context_from_env(environ: Mapping[str, str] | None = None) -> otel_context.Context | None:
    """The parent context a subprocess inherited through `TRACEPARENT`/`TRACESTATE`, if any."""
    environ = os.environ if environ is None else environ
    if not environ.get("TRACEPARENT"):
        return None
    carrier = {"traceparent": environ["TRACEPARENT"]}
    if environ.get("TRACESTATE"):
        carrier["tracestate"] = environ["TRACESTATE"]
    return PROPAGATOR.extract(carrier)


def to_readable(record: SpanRecord, resource: Resource) -> ReadableSpan:
    """A stored span as the SDK's `ReadableSpan`, for its exporters."""
    parent = None
    if record.parent_id is not None:
        parent = SpanContext(
            int(record.trace_id, 16), int(record.parent_id, 16), is_remote=record.parent_remote, trace_flags=_SAMPLED
        )
    attributes = dict(record.attributes)
    if record.request_id is not None:
        attributes[S.REQUEST_ID] = record.request_id
    return ReadableSpan(
        name=record.name,
        context=SpanContext(int(record.trace_id, 16), int(record.span_id, 16), is_remote=False, trace_flags=_SAMPLED),
        parent=parent,
        resource=resource,
        attributes=attributes,
        kind=SpanKind.SERVER if record.name == S.ROOT else SpanKind.INTERNAL,
        status=Status(StatusCode.ERROR) if record.status == "ERROR" else Status(StatusCode.UNSET),
        start_time=record.start_ns,
        end_time=record.end_ns,
    )


def record_from_readable(span: ReadableSpan) -> SpanRecord:
    """An SDK span (e.g. from a subprocess tool's tracer) as a store record."""
    ctx, parent = span.context, span.parent
    attributes = dict(span.attributes or {})
    request_id = attributes.pop(S.REQUEST_ID, None)
    return SpanRecord(
        trace_id=format(ctx.trace_id, "032x"),
        span_id=format(ctx.span_id, "016x"),
        parent_id=format(parent.span_id, "016x") if parent is not None else None,
        parent_remote=bool(parent is not None and parent.is_remote),
        name=span.name,
        start_ns=span.start_time or 0,
        end_ns=span.end_time or span.start_time or 0,
        request_id=None if request_id is None else str(request_id),
        status=span.status.status_code.name,
        attributes={k: list(v) if isinstance(v, tuple) else v for k, v in attributes.items()},
    )
