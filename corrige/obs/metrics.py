"""Prometheus metrics in vLLM's style, with a `corrige:` prefix.

One `ServerMetrics` per server, on its own `CollectorRegistry` (tests run several servers in
one process). It is fed from three places, all cheap:

* the request middleware: e2e latency, outcome and error code, and each finished trace's stage
  spans (per-stage latency, and the budget burn rate per stage);
* the engine's listeners (on its loop thread, or for an engine process on the event loop that
  reads its results): batch size and speculative tokens per step; per request the time to first
  token, inter-token latencies, queue time, prompt and generated tokens;
* at scrape time: running and waiting requests and KV slot usage from `Engine.snapshot()`, and
  the orphan-span count from the trace store (cached a few seconds: it scans the store).
"""

from __future__ import annotations

import threading
import time
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import accumulate

import numpy as np
from prometheus_client import CollectorRegistry, Counter, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from corrige.obs import spans as S
from corrige.obs.records import EngineSnapshot, FinishedRecord, StepStats
from corrige.obs.store import SpanRecord

PREFIX = "corrige:"
# request latencies of a CPU tutor: from a millisecond to the seed's 5 s target and past it
LATENCY_BUCKETS = (0.001, 0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.03, 0.05, 0.075, 0.1, 0.2, 0.5, 1, 2, 5, 10)
STAGE_BUCKETS = (0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.004, 0.008, 0.015, 0.03, 0.06, 0.12, 0.25, 0.5, 1, 2.5, 5)
TOKEN_BUCKETS = (0.0002, 0.0005, 0.001, 0.002, 0.004, 0.008, 0.015, 0.03, 0.06, 0.12, 0.25, 0.5, 1)
BATCH_BUCKETS = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128)
BURN_ALPHA = 0.05  # weight of the newest observation in the burn-rate moving average (~ the last 20 requests)


_NUMPY_FROM = 256  # values per call from which one NumPy pass beats bisecting each


class FastHistogram(Collector):
    """A Prometheus histogram (optionally labelled) that costs less to feed than prometheus-client's.

    Its `Histogram.observe` takes three locks and scans the buckets in Python for every value, and
    a request feeds about a dozen values (its stages, latency, time to first token, queue time)
    plus its inter-token gaps. Here a value is one `bisect` into plain lists under one lock, and
    `observe_many` takes a request's ~27 gaps in one call. The exposition is the same.
    """

    def __init__(
        self,
        name: str,
        documentation: str,
        buckets: Iterable[float],
        registry: CollectorRegistry,
        labelnames: Sequence[str] = (),
    ) -> None:
        self.name, self.documentation = name, documentation
        self.labelnames = tuple(labelnames)
        self.bounds = tuple(sorted(float(b) for b in buckets))
        self._np_bounds = np.asarray(self.bounds, dtype=np.float64)
        # per label values: counts per bucket (the last: above every bound), then the sum
        self._series: dict[tuple[str, ...], list] = {}
        self._lock = threading.Lock()
        registry.register(self)

    def _row(self, labels: tuple[str, ...]) -> list:
        row = self._series.get(labels)
        if row is None:
            if len(labels) != len(self.labelnames):
                raise ValueError(f"{self.name} takes labels {self.labelnames}, got {labels}")
            row = self._series[labels] = [[0] * (len(self.bounds) + 1), 0.0]
        return row

    def observe(self, value: float, *labels: str) -> None:
        # bucket i counts values <= bounds[i] (Prometheus' `le`): the first bound not below the value
        i = bisect_left(self.bounds, value)
        with self._lock:
            row = self._row(labels)
            row[0][i] += 1
            row[1] += value

    def observe_each(self, pairs: Iterable[tuple[str, float]]) -> None:
        """Several values of a one-label histogram, (label value, value) each, under one lock."""
        bounds = self.bounds
        with self._lock:
            for label, value in pairs:
                row = self._row((label,))
                row[0][bisect_left(bounds, value)] += 1
                row[1] += value

    def observe_many(self, values: Sequence[float], *labels: str) -> None:
        """Many values of one series: a Python loop for a request's worth, NumPy past that."""
        if len(values) < _NUMPY_FROM:
            bounds = self.bounds
            at = [bisect_left(bounds, v) for v in values]
            with self._lock:
                row = self._row(labels)
                counts = row[0]
                for i in at:
                    counts[i] += 1
                row[1] += sum(values)
            return
        array = np.asarray(values, dtype=np.float64)
        counts = np.bincount(np.searchsorted(self._np_bounds, array, side="left"), minlength=len(self.bounds) + 1)
        total = float(array.sum())
        with self._lock:
            row = self._row(labels)
            row[0] = [a + b for a, b in zip(row[0], counts.tolist(), strict=True)]
            row[1] += total

    def collect(self) -> Iterable[HistogramMetricFamily]:
        with self._lock:
            series = [(labels, list(accumulate(counts)), total) for labels, (counts, total) in self._series.items()]
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)
        les = [floatToGoString(b) for b in self.bounds] + ["+Inf"]
        for labels, cumulative, total in series:
            family.add_metric(list(labels), list(zip(les, cumulative, strict=True)), total)
        yield family


class _ScrapeTime(Collector):
    """Series read when Prometheus scrapes: engine state, burn rates, orphan spans, the answer cache."""

    def __init__(self, metrics: ServerMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterable[Metric]:
        m = self.metrics
        snapshot = m.snapshot() if m.snapshot is not None else None
        if snapshot is not None:
            yield GaugeMetricFamily(f"{PREFIX}num_requests_running", "Requests being decoded.", snapshot.running)
            yield GaugeMetricFamily(f"{PREFIX}num_requests_waiting", "Requests queued for a slot.", snapshot.waiting)
            usage = snapshot.slots_used / snapshot.slots_total if snapshot.slots_total else 0.0
            yield GaugeMetricFamily(f"{PREFIX}kv_cache_usage_perc", "KV cache slots in use (0-1).", usage)
        burn = GaugeMetricFamily(
            f"{PREFIX}budget_burn_rate",
            "Stage time over its latency-budget allocation (moving average; > 1.5 sustained is flagged).",
            labels=["stage"],
        )
        for stage, rate in m.burn_rates().items():
            burn.add_metric([stage], rate)
        yield burn
        yield GaugeMetricFamily(
            f"{PREFIX}orphan_spans", "Spans in the trace store whose parent is missing.", m.orphan_count()
        )
        if m.answer_cache is not None:
            hits, misses, size = m.answer_cache()
            lookups = CounterMetricFamily(
                f"{PREFIX}answer_cache_lookups",
                "Sentences of texts looked up in the answer cache: hit (no model step) or miss.",
                labels=["result"],
            )
            lookups.add_metric(["hit"], hits)
            lookups.add_metric(["miss"], misses)
            yield lookups
            yield GaugeMetricFamily(f"{PREFIX}answer_cache_size", "Answers kept in the answer cache.", size)


SELF = "http.request:self"  # the root's time no child span covers (the budget's pseudo-span)


class ServerMetrics:
    """The server's collectors. `allocations`: the latency budget, stage name → (seconds, span
    names it covers); the burn rate of a stage is the time of its spans over its allocation."""

    def __init__(
        self,
        snapshot: Callable[[], EngineSnapshot] | None = None,
        orphans: Callable[[], int] | None = None,
        allocations: Mapping[str, tuple[float, tuple[str, ...]]] | None = None,
        orphan_cache_s: float = 5.0,
    ) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.snapshot = snapshot
        self._orphans = orphans
        self._orphan_cache_s = orphan_cache_s
        self._orphan_value = (0, -float("inf"))  # (count, when)
        self.allocations = dict(allocations or {})
        # () -> (hits, misses, answers kept) of the server's answer cache; set once the cache exists
        self.answer_cache: Callable[[], tuple[int, int, int]] | None = None
        self._stage_of_span = {span: name for name, (_, spans) in self.allocations.items() for span in spans}
        self._burn: dict[str, float] = {}
        self._children: dict[tuple, object] = {}  # labelled series, by (metric, label values)
        self._lock = threading.Lock()
        r = self.registry
        self.e2e = FastHistogram(
            f"{PREFIX}e2e_request_latency_seconds",
            "Arrival to last byte of an API request.",
            LATENCY_BUCKETS,
            r,
            ["route"],
        )
        self.stage = FastHistogram(
            f"{PREFIX}stage_latency_seconds", "Per-stage latency (the request's spans).", STAGE_BUCKETS, r, ["stage"]
        )
        self.ttft = FastHistogram(f"{PREFIX}time_to_first_token_seconds", "Arrival to first token.", LATENCY_BUCKETS, r)
        self.itl = FastHistogram(
            f"{PREFIX}inter_token_latency_seconds", "Gap between consecutive tokens.", TOKEN_BUCKETS, r
        )
        self.queue = FastHistogram(f"{PREFIX}request_queue_time_seconds", "Waiting for a KV slot.", LATENCY_BUCKETS, r)
        self.batch = FastHistogram(
            f"{PREFIX}batch_size", "Requests through the model per engine step.", BATCH_BUCKETS, r
        )
        self.prompt_tokens = Counter(f"{PREFIX}prompt_tokens", "Prompt tokens prefilled.", registry=r)
        self.generation_tokens = Counter(f"{PREFIX}generation_tokens", "Tokens generated.", registry=r)
        self.draft_tokens = Counter(
            f"{PREFIX}spec_decode_num_draft_tokens", "Guessed tokens checked (speculative decoding).", registry=r
        )
        self.accepted_tokens = Counter(
            f"{PREFIX}spec_decode_num_accepted_tokens", "Guessed tokens kept (speculative decoding).", registry=r
        )
        self.requests = Counter(
            f"{PREFIX}requests", "API requests by outcome and error code.", ["outcome", "code"], registry=r
        )
        r.register(_ScrapeTime(self))

    # ---- feeding ----

    def on_request_done(self, route: str, seconds: float, status: int, code: str | None) -> None:
        self.e2e.observe(seconds, route)
        self._child(self.requests, "error" if status >= 400 else "success", code or "").inc()

    def on_trace(self, spans: Iterable[SpanRecord]) -> None:
        """Stage latencies and budget burn rates from a finished request's spans."""
        stages: list[tuple[str, float]] = []
        root_s = 0.0
        for span in spans:
            seconds = (span.end_ns - span.start_ns) / 1e9
            if span.name == S.ROOT:
                root_s = seconds
            else:
                stages.append((span.name, seconds))
        self.stage.observe_each(stages)
        if not self.allocations:
            return
        per_stage: dict[str, float] = {}
        for name, seconds in stages:
            stage = self._stage_of_span.get(name)
            if stage is not None:
                per_stage[stage] = per_stage.get(stage, 0.0) + seconds
        stage = self._stage_of_span.get(SELF)
        if stage is not None and root_s:
            per_stage[stage] = per_stage.get(stage, 0.0) + max(root_s - sum(s for _, s in stages), 0.0)
        if not per_stage:
            return
        with self._lock:
            for stage, seconds in per_stage.items():
                rate = seconds / self.allocations[stage][0]
                old = self._burn.get(stage)
                self._burn[stage] = rate if old is None else old + BURN_ALPHA * (rate - old)

    def _child(self, metric, *labels: str):
        """`metric.labels(*labels)`, remembered: the lookup takes a lock and builds keys every call."""
        key = (id(metric), labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)
        return child

    def on_step(self, step: StepStats) -> None:  # the engine's side
        self.batch.observe(step.batch_size)
        if step.num_draft_tokens:
            self.draft_tokens.inc(step.num_draft_tokens)
            self.accepted_tokens.inc(step.num_accepted_tokens)

    def on_engine_request(self, output: FinishedRecord) -> None:  # the engine's side
        stats = output.stats
        if stats.ttft_s is not None:
            self.ttft.observe(stats.ttft_s)
        if stats.queue_s is not None:
            self.queue.observe(stats.queue_s)
        self.itl.observe_many(stats.inter_token_s)
        if stats.prefill_s is not None:
            self.prompt_tokens.inc(stats.num_prompt_tokens)
        self.generation_tokens.inc(stats.num_output_tokens)

    # ---- reading ----

    def burn_rates(self) -> dict[str, float]:
        with self._lock:
            return dict(self._burn)

    def orphan_count(self) -> int:
        if self._orphans is None:
            return 0
        count, when = self._orphan_value
        now = time.monotonic()
        if now - when >= self._orphan_cache_s:
            count = self._orphans()
            self._orphan_value = (count, now)
        return count

    def exposition(self) -> bytes:
        """The text format Prometheus scrapes."""
        return generate_latest(self.registry)
