"""Tracing inside a subprocess tool, with the OpenTelemetry SDK.

The server runs tools (`corrige tool …`) as child processes and hands them its trace context
in the environment (W3C `TRACEPARENT`/`TRACESTATE`, across the process boundary). The tool
continues that trace: its spans are children of the server's span that ran it, and land in
the same trace store (`CORRIGE_TRACE_STORE`). A tool started without `TRACEPARENT` still
records its span, as a root: `corrige traces audit` then reports it as an orphan.

    with tool_span("tool.rules", store_path) as span:
        span.set_attribute("tool.query", query)
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Span

from corrige.obs import spans as S
from corrige.obs.store import TraceStore
from corrige.obs.tracing import context_from_env, record_from_readable

REQUEST_ID_ENV = "CORRIGE_REQUEST_ID"  # the request a tool works for, as the `request_id` attribute


class StoreSpanExporter(SpanExporter):
    """The SDK's spans into the local trace store."""

    def __init__(self, store: TraceStore) -> None:
        self.store = store

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.store.write([record_from_readable(s) for s in spans])
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self.store.close()


@contextmanager
def tool_span(name: str, store_path: Path | None, **attributes: object) -> Iterator[Span]:
    """One span for the tool's work, child of the caller's span when `TRACEPARENT` is set."""
    provider = TracerProvider(resource=Resource.create({"service.name": "corrige-tool"}))
    if store_path is not None:
        provider.add_span_processor(SimpleSpanProcessor(StoreSpanExporter(TraceStore(store_path))))
    tracer = provider.get_tracer("corrige.tool")
    request_id = os.environ.get(REQUEST_ID_ENV)
    attrs = {**attributes, **({S.REQUEST_ID: request_id} if request_id else {})}
    try:
        with tracer.start_as_current_span(name, context=context_from_env(), attributes=attrs) as span:
            yield span
    finally:
        provider.shutdown()
