"""The Prometheus metrics corrige exports at /metrics, named in one place.

`corrige.obs.metrics` registers them under these names; deploy/grafana-dashboard.json queries
them, and a test checks that every name a panel queries is one of these. Names follow vLLM's
`vllm:` style (`corrige:` prefix); histograms are in seconds unless the name says otherwise.
"""

from __future__ import annotations

from typing import NamedTuple


class MetricName(NamedTuple):
    name: str
    kind: str  # "histogram" | "gauge" | "counter"
    labels: tuple[str, ...]
    help: str


METRICS: tuple[MetricName, ...] = (
    # ---- histograms ----
    MetricName(
        "corrige:e2e_request_latency_seconds", "histogram", ("route",), "Arrival to last byte of a POST request."
    ),
    MetricName("corrige:stage_latency_seconds", "histogram", ("stage",), "Time per request stage (stage = span name)."),
    MetricName("corrige:time_to_first_token_seconds", "histogram", (), "Arrival to the first generated token."),
    MetricName("corrige:inter_token_latency_seconds", "histogram", (), "Gap between consecutive generated tokens."),
    MetricName("corrige:request_queue_time_seconds", "histogram", (), "Arrival to admission into a KV slot."),
    MetricName("corrige:batch_size", "histogram", (), "Requests through the model per engine step."),
    # ---- gauges ----
    MetricName("corrige:num_requests_running", "gauge", (), "Requests holding a KV slot."),
    MetricName("corrige:num_requests_waiting", "gauge", (), "Requests waiting for a KV slot."),
    MetricName("corrige:kv_cache_usage_perc", "gauge", (), "Share of KV slots in use, 0..1."),
    MetricName("corrige:budget_burn_rate", "gauge", ("stage",), "Stage time / its latency-budget allocation."),
    MetricName("corrige:orphan_spans", "gauge", (), "Spans in the trace store whose parent is missing."),
    MetricName("corrige:answer_cache_size", "gauge", (), "Answers kept in the answer cache."),
    # ---- counters ----
    MetricName("corrige:prompt_tokens_total", "counter", (), "Prompt tokens prefilled."),
    MetricName("corrige:generation_tokens_total", "counter", (), "Tokens generated."),
    MetricName(
        "corrige:spec_decode_num_draft_tokens_total", "counter", (), "Guessed tokens checked (speculative decoding)."
    ),
    MetricName(
        "corrige:spec_decode_num_accepted_tokens_total", "counter", (), "Guessed tokens kept (speculative decoding)."
    ),
    MetricName("corrige:requests_total", "counter", ("outcome", "code"), "Finished requests (outcome, error code)."),
    MetricName(
        "corrige:answer_cache_lookups_total",
        "counter",
        ("result",),
        "Sentences of texts looked up in the answer cache (hit: no model step; miss).",
    ),
)

METRIC_NAMES: tuple[str, ...] = tuple(m.name for m in METRICS)
HISTOGRAMS = frozenset(m.name for m in METRICS if m.kind == "histogram")

_HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


def base_metric_name(series: str) -> str:
    """The metric a series belongs to: `corrige:batch_size_bucket` -> `corrige:batch_size`."""
    for suffix in _HISTOGRAM_SUFFIXES:
        if series.endswith(suffix) and series[: -len(suffix)] in HISTOGRAMS:
            return series[: -len(suffix)]
    return series
