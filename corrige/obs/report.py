"""The percentile report over whole traces: end-to-end p50/p95/p99 from the root spans,
the naive sum of per-stage p95s next to the true end-to-end p95, and the journey of the bytes.

Why both numbers: p95(A + B) ≠ p95(A) + p95(B). The slow requests of one stage are rarely the
slow requests of another, so the sum of stage p95s overstates the end-to-end tail; only the
percentiles of whole traces are load-bearing. The per-stage p95s say which stage is slow, not how
slow the tail of requests is.

    table = TraceTable.from_traces(store.traces(last=1000))
    report = percentile_report(table)
    report.naive_p95_sum_ms, report.e2e.p95_ms, report.delta_ms

The stages of a trace are the direct children of its `http.request` root, by span name. The time
inside the root that no child covers (middleware before `validate.body`, waiting for a KV slot,
writing the response) is the pseudo-stage `http.request:self`, so that the stages of a trace add
up to its root and the naive sum is comparable with the end-to-end figure.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from corrige.obs import spans as names
from corrige.obs.store import SpanRecord, Trace

UNNAMED = "unnamed"  # traces written before spans named their server
SELF = "http.request:self"
"""Pseudo-stage: the part of a trace's root that none of its children covers."""


def _ordered(stage_names: Iterable[str]) -> list[str]:
    """Contract stages in request order, then `http.request:self`, then anything else by name."""
    order = {name: i for i, name in enumerate((*names.STAGES, SELF))}
    return sorted(stage_names, key=lambda n: (order.get(n, len(order)), n))


def _covered_ns(intervals: list[tuple[int, int]]) -> int:
    """Length of the union of [start, end) intervals."""
    total = 0
    end_so_far = None
    for start, end in sorted(intervals):
        if end_so_far is None or start >= end_so_far:
            total += end - start
            end_so_far = end
        elif end > end_so_far:
            total += end - end_so_far
            end_so_far = end
    return total


@dataclass(frozen=True)
class TraceTable:
    """Whole traces as columns, one row per trace that has its root, oldest first.

    Stage times are the union of that stage's spans under the root (a batch call may run several
    `model.decode` spans at once); NaN where the trace has no span of that name (a refused request
    never reaches the model)."""

    trace_ids: tuple[str, ...]
    start_ns: np.ndarray  # (T,) int64, root start
    e2e_ms: np.ndarray  # (T,) root duration
    stage_ms: dict[str, np.ndarray]  # name -> (T,) float, NaN where absent
    decode_steps: np.ndarray  # (T,) `model.steps` summed over the trace's decode spans; NaN where none
    output_tokens: np.ndarray  # (T,) `tokens.output` likewise
    failed: np.ndarray  # (T,) bool: status ERROR or an HTTP status >= 400
    bytes_in: dict[str, tuple[int, float]]  # span name -> (spans carrying `bytes.in`, their sum)
    bytes_out: dict[str, tuple[int, float]]
    incomplete: int  # traces whose root never arrived (their spans are orphans)
    # traces per server that served them (`service.instance.id` of the root; several replicas, one store)
    instances: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.trace_ids)

    @property
    def stages(self) -> list[str]:
        return _ordered(self.stage_ms)

    @classmethod
    def from_traces(cls, traces: Sequence[Trace]) -> TraceTable:
        rows: list[tuple] = []  # (trace id, *_trace_row)
        bytes_in: dict[str, list] = {}
        bytes_out: dict[str, list] = {}
        incomplete = 0
        instances: Counter[str] = Counter()
        for trace in traces:
            for span in trace.spans:  # every span, at any depth, for the journey of the bytes
                attributes = span.attributes
                if names.BYTES_IN in attributes:
                    _add(bytes_in, span.name, attributes[names.BYTES_IN])
                if names.BYTES_OUT in attributes:
                    _add(bytes_out, span.name, attributes[names.BYTES_OUT])
            root = trace.root
            if root is None:
                incomplete += 1
                continue
            rows.append((trace.trace_id, *_trace_row(root, trace.spans)))
            instances[str(root.attributes.get(names.INSTANCE, UNNAMED))] += 1
        rows.sort(key=lambda row: row[1])
        stage_names = {name for row in rows for name in row[3]}
        n = len(rows)
        stage_ms = {name: np.full(n, np.nan) for name in stage_names}
        for i, row in enumerate(rows):
            for name, ms in row[3].items():
                stage_ms[name][i] = ms
        return cls(
            trace_ids=tuple(row[0] for row in rows),
            start_ns=np.array([row[1] for row in rows], dtype=np.int64),
            e2e_ms=np.array([row[2] for row in rows], dtype=float),
            stage_ms=stage_ms,
            decode_steps=np.array([row[4] for row in rows], dtype=float),
            output_tokens=np.array([row[5] for row in rows], dtype=float),
            failed=np.array([row[6] for row in rows], dtype=bool),
            bytes_in={k: (v[0], v[1]) for k, v in bytes_in.items()},
            bytes_out={k: (v[0], v[1]) for k, v in bytes_out.items()},
            incomplete=incomplete,
            instances=dict(sorted(instances.items())),
        )


def _add(sums: dict[str, list], name: str, value: object) -> None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        entry = sums.setdefault(name, [0, 0.0])
        entry[0] += 1
        entry[1] += value


def _trace_row(
    root: SpanRecord, spans: Sequence[SpanRecord]
) -> tuple[int, float, dict[str, float], float, float, bool]:
    """(root start, root ms, stage ms by name, decode steps, output tokens, failed) of one trace."""
    by_name: dict[str, list[tuple[int, int]]] = {}
    steps = tokens = math.nan
    for span in spans:
        if span.parent_id != root.span_id:
            continue
        # clipped to the root: a child that outlives it (a flush after the response) is not request time
        start, end = max(span.start_ns, root.start_ns), min(span.end_ns, root.end_ns)
        by_name.setdefault(span.name, []).append((start, max(end, start)))
        if span.name == names.DECODE:
            attributes = span.attributes
            if names.STEPS in attributes:
                steps = (0.0 if math.isnan(steps) else steps) + attributes[names.STEPS]
            if names.OUTPUT_TOKENS in attributes:
                tokens = (0.0 if math.isnan(tokens) else tokens) + attributes[names.OUTPUT_TOKENS]
    stage_ms = {}
    for name, intervals in by_name.items():
        covered = intervals[0][1] - intervals[0][0] if len(intervals) == 1 else _covered_ns(intervals)
        stage_ms[name] = covered / 1e6
    root_ns = root.end_ns - root.start_ns
    all_children = [interval for intervals in by_name.values() for interval in intervals]
    stage_ms[SELF] = max(root_ns - _covered_ns(all_children), 0) / 1e6
    status = root.attributes.get(names.HTTP_STATUS)
    failed = root.status == "ERROR" or (isinstance(status, int) and status >= 400)
    return root.start_ns, root_ns / 1e6, stage_ms, steps, tokens, failed


def _finite(values: np.ndarray) -> np.ndarray:
    return values[~np.isnan(values)]


def json_number(value: float | None, digits: int = 4) -> float | None:
    """JSON-safe rounding: NaN and infinities become None."""
    if value is None or not math.isfinite(value):
        return None
    return round(float(value), digits)


@dataclass(frozen=True)
class Distribution:
    """Mean and percentiles (linear interpolation between order statistics) of one stage, in ms."""

    name: str
    n: int
    mean_ms: float
    p50_ms: float
    p95_ms: float
    p99_ms: float

    @classmethod
    def of(cls, name: str, values: np.ndarray) -> Distribution:
        values = _finite(values)
        if values.size == 0:
            return cls(name, 0, math.nan, math.nan, math.nan, math.nan)
        p50, p95, p99 = np.percentile(values, (50, 95, 99))
        return cls(name, int(values.size), float(values.mean()), float(p50), float(p95), float(p99))

    def to_dict(self) -> dict:
        return {k: (json_number(v) if isinstance(v, float) else v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class BytesStats:
    """Mean `bytes.in` / `bytes.out` of the spans of one name (None where no span carried it)."""

    name: str
    n: int
    mean_in: float | None
    mean_out: float | None

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "n": self.n,
            "mean_in": json_number(self.mean_in, 1),
            "mean_out": json_number(self.mean_out, 1),
        }


@dataclass(frozen=True)
class PercentileReport:
    """End-to-end percentiles from whole traces, the naive sum of stage p95s, and the bytes."""

    traces: int  # complete traces (with their root)
    incomplete: int  # traces without a root
    failed: int  # complete traces that ended in an error
    e2e: Distribution
    stages: tuple[Distribution, ...]
    bytes: tuple[BytesStats, ...]
    instances: dict[str, int] = field(default_factory=dict)  # complete traces per server

    @property
    def naive_p95_sum_ms(self) -> float:
        """The fallacy: the per-stage p95s added up, as if the slow requests of every stage were the same."""
        return float(sum(s.p95_ms for s in self.stages if s.n))

    @property
    def delta_ms(self) -> float:
        return self.naive_p95_sum_ms - self.e2e.p95_ms

    @property
    def delta_pct(self) -> float:
        """How far the naive sum overstates (positive) the true end-to-end p95, in percent of it."""
        return 100.0 * self.delta_ms / self.e2e.p95_ms if self.e2e.n and self.e2e.p95_ms > 0 else math.nan

    def to_dict(self) -> dict:
        return {
            "traces": self.traces,
            "incomplete": self.incomplete,
            "failed": self.failed,
            "e2e": self.e2e.to_dict(),
            "naive_p95_sum_ms": json_number(self.naive_p95_sum_ms) if self.e2e.n else None,
            "true_p95_ms": json_number(self.e2e.p95_ms),
            "delta_ms": json_number(self.delta_ms) if self.e2e.n else None,
            "delta_pct": json_number(self.delta_pct, 2),
            "stages": [s.to_dict() for s in self.stages],
            "bytes": [b.to_dict() for b in self.bytes],
            "instances": self.instances,
        }


def percentile_report(table: TraceTable) -> PercentileReport:
    stages = tuple(Distribution.of(name, table.stage_ms[name]) for name in table.stages)
    span_names = _ordered((set(table.bytes_in) | set(table.bytes_out)) - {names.ROOT})
    if names.ROOT in table.bytes_in or names.ROOT in table.bytes_out:
        span_names.insert(0, names.ROOT)
    journey = []
    for name in span_names:
        n_in, sum_in = table.bytes_in.get(name, (0, 0.0))
        n_out, sum_out = table.bytes_out.get(name, (0, 0.0))
        journey.append(
            BytesStats(name, max(n_in, n_out), sum_in / n_in if n_in else None, sum_out / n_out if n_out else None)
        )
    return PercentileReport(
        traces=len(table),
        incomplete=table.incomplete,
        failed=int(table.failed.sum()),
        e2e=Distribution.of(names.ROOT, table.e2e_ms),
        stages=stages,
        bytes=tuple(journey),
        instances=table.instances,
    )
