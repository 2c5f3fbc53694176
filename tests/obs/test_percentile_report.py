"""The percentile report: end-to-end percentiles from whole traces vs the naive sum of stage p95s
(the percentile fallacy), stage times, the uncovered part of the root, and the journey of the bytes."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
from obs_support import MS, T0, fill, make_trace, orphan, sequential

from corrige.obs import spans as names
from corrige.obs.report import SELF, TraceTable, percentile_report
from corrige.obs.store import TraceStore, group_traces


def test_seed_example_two_uniform_stages_naive_sum_overstates_the_true_p95(tmp_path):
    """Two stages, each uniform on [100, 1000] ms. p95 of each is 955, so the naive sum
    is 1910 ms; the p95 of the sum is lower. The often quoted figure is ≈ 1690 ms from a simulation; the exact
    value for the sum of two independent uniforms (a triangular density on [200, 2000]) is
    2000 − sqrt(0.1 · 900²) ≈ 1715.4 ms. Traces go through a real store file and back."""
    rng = random.Random(20240601)
    store = TraceStore(tmp_path / "traces.sqlite")
    records = []
    for i in range(10_000):
        a, b = rng.uniform(100, 1000), rng.uniform(100, 1000)
        records += make_trace(sequential([(names.PREFILL, a), (names.DECODE, b)]), start_ns=T0 + i * 3000 * MS)
    fill(store, records)

    report = percentile_report(TraceTable.from_traces(store.traces(last=10_000)))

    assert report.traces == 10_000
    by_name = {s.name: s for s in report.stages}
    assert by_name[names.PREFILL].p95_ms == pytest.approx(955, abs=10)
    assert by_name[names.DECODE].p95_ms == pytest.approx(955, abs=10)
    assert by_name[SELF].p95_ms == pytest.approx(0, abs=1e-3)  # the root is exactly the two stages
    exact = 2000 - math.sqrt(0.1 * 900**2)
    assert report.naive_p95_sum_ms == pytest.approx(1910, abs=15)
    assert report.e2e.p95_ms == pytest.approx(exact, abs=20)
    assert report.e2e.p95_ms == pytest.approx(1690, rel=0.03)  # the seed's simulated figure
    assert report.delta_ms == pytest.approx(1910 - exact, abs=25)
    assert 8 < report.delta_pct < 15  # the seed: "overestimates the true p95 by ~13%"
    assert report.e2e.p50_ms == pytest.approx(1100, abs=20)  # the triangle's peak


def test_stage_times_self_time_and_percentiles_on_known_traces():
    traces = []
    for i in range(1, 101):  # e2e = i ms + 2 ms uncovered; decode = i ms
        spans = [(names.VALIDATE, 0.5, 0.5), (names.DECODE, 1.0, float(i))]
        traces.append(make_trace(spans, root_ms=i + 2.0, start_ns=T0 + i * 1000 * MS))
    table = TraceTable.from_traces(group_traces([s for t in traces for s in t]))
    report = percentile_report(table)

    assert table.stages == [names.VALIDATE, names.DECODE, SELF]
    decode = next(s for s in report.stages if s.name == names.DECODE)
    assert decode.p50_ms == pytest.approx(np.percentile(np.arange(1, 101), 50))
    assert decode.p95_ms == pytest.approx(np.percentile(np.arange(1, 101), 95))
    own = next(s for s in report.stages if s.name == SELF)
    assert own.mean_ms == pytest.approx(1.5)  # 0–0.5 before validate, 1.0 after decode
    assert report.e2e.p99_ms == pytest.approx(np.percentile(np.arange(1, 101) + 2.0, 99))
    assert report.e2e.mean_ms == pytest.approx(52.5)


def test_overlapping_spans_of_one_stage_count_once_and_children_are_clipped_to_the_root():
    # a batch call: two decodes overlapping (2–6 and 4–8 ms: 6 ms of decoding), a cost span
    # running 2 ms past the root's end
    spans = [(names.DECODE, 2, 4), (names.DECODE, 4, 4), (names.COST, 9, 3)]
    table = TraceTable.from_traces([_trace(make_trace(spans, root_ms=10))])
    assert table.stage_ms[names.DECODE][0] == pytest.approx(6)
    assert table.stage_ms[names.COST][0] == pytest.approx(1)
    assert table.stage_ms[SELF][0] == pytest.approx(10 - 6 - 1)


def test_absent_stages_failures_and_incomplete_traces():
    ok = make_trace(sequential([(names.VALIDATE, 1), (names.DECODE, 5)]), root_attributes={names.HTTP_STATUS: 200})
    refused = make_trace(
        sequential([(names.VALIDATE, 1), (names.SECURITY, 0.1)]),
        root_attributes={names.HTTP_STATUS: 429},
        start_ns=T0 + 10 * MS,
    )
    lost = [orphan(names.DECODE)]  # a trace whose root never arrived
    table = TraceTable.from_traces(group_traces([*ok, *refused, *lost]))
    report = percentile_report(table)
    assert report.traces == 2 and report.incomplete == 1 and report.failed == 1
    decode = next(s for s in report.stages if s.name == names.DECODE)
    assert decode.n == 1  # the refused request never reached the model: no decode time, not zero
    assert math.isnan(table.stage_ms[names.DECODE][1])


def test_journey_of_the_bytes_means_per_span_name():
    records = []
    for i, (body, out) in enumerate([(100, 500), (300, 700)]):
        stages = [
            (names.VALIDATE, 0, 1, {names.BYTES_IN: body, names.BYTES_OUT: body // 2}),
            (names.TOKENIZE, 1, 1, {names.BYTES_IN: body // 2, names.BYTES_OUT: 80}),
            (names.SECURITY, 2, 1, {}),  # carries neither
        ]
        records += make_trace(
            stages, root_attributes={names.BYTES_IN: body, names.BYTES_OUT: out}, start_ns=T0 + i * 10 * MS
        )
    report = percentile_report(TraceTable.from_traces(group_traces(records)))
    journey = {b.name: b for b in report.bytes}
    assert list(journey) == [names.ROOT, names.VALIDATE, names.TOKENIZE]
    assert journey[names.ROOT].mean_in == 200 and journey[names.ROOT].mean_out == 600
    assert journey[names.VALIDATE].mean_out == 100
    assert journey[names.TOKENIZE].mean_in == 100 and journey[names.TOKENIZE].mean_out == 80


def test_empty_report_is_json_safe():
    report = percentile_report(TraceTable.from_traces([]))
    data = report.to_dict()
    assert data["traces"] == 0 and data["e2e"]["p95_ms"] is None and data["naive_p95_sum_ms"] is None
    json.dumps(data, allow_nan=False)  # no NaN leaks into the API's JSON


def _trace(records):
    (trace,) = group_traces(records)
    return trace
