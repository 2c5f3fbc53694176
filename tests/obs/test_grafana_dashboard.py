"""deploy/: the Grafana dashboard and the Prometheus config query only metrics corrige exports
(the names in corrige/obs/metric_names.py), and every exported metric has a panel."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from corrige.obs.metric_names import HISTOGRAMS, METRIC_NAMES, METRICS, base_metric_name

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
# a PromQL metric name with a colon (recording-rule style, as ours); functions, labels and
# durations never have one. Quoted strings are removed first (label values may hold anything).
SERIES = re.compile(r"[A-Za-z_][A-Za-z0-9_]*:[A-Za-z0-9_:]*")
QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')


def series_in(expr: str) -> set[str]:
    return set(SERIES.findall(QUOTED.sub('""', expr)))


def panels(dashboard: dict) -> list[dict]:
    out = []
    for panel in dashboard["panels"]:
        out.append(panel)
        out.extend(panel.get("panels", []))  # a collapsed row holds its panels
    return out


def load_dashboard() -> dict:
    return json.loads((DEPLOY / "grafana-dashboard.json").read_text(encoding="utf-8"))


def test_the_series_pattern_finds_names_and_skips_the_rest():
    expr = 'sum by (le, stage) (rate(corrige:stage_latency_seconds_bucket{stage="a:b"}[$__rate_interval]))'
    assert series_in(expr) == {"corrige:stage_latency_seconds_bucket"}
    assert base_metric_name("corrige:stage_latency_seconds_bucket") == "corrige:stage_latency_seconds"
    assert base_metric_name("corrige:requests_total") == "corrige:requests_total"
    assert base_metric_name("corrige:orphan_spans_count") == "corrige:orphan_spans_count"  # not a histogram


def test_every_panel_query_names_a_known_metric_and_every_metric_has_a_panel():
    dashboard = load_dashboard()
    used: set[str] = set()
    for panel in panels(dashboard):
        if panel["type"] == "row":
            continue
        assert panel["targets"], f"panel {panel['title']!r} has no query"
        for target in panel["targets"]:
            names = series_in(target["expr"])
            assert names, f"panel {panel['title']!r}: no corrige metric in {target['expr']!r}"
            for series in names:
                metric = base_metric_name(series)
                assert metric in METRIC_NAMES, f"panel {panel['title']!r} queries unknown {series!r}"
                if series.endswith("_bucket"):
                    assert metric in HISTOGRAMS
                used.add(metric)
    assert used == set(METRIC_NAMES), f"metrics without a panel: {sorted(set(METRIC_NAMES) - used)}"


def test_counters_are_only_read_as_rates_and_histograms_by_their_series():
    counters = {m.name for m in METRICS if m.kind == "counter"}
    for panel in panels(load_dashboard()):
        for target in panel.get("targets", []):
            expr = target["expr"]
            for series in series_in(expr):
                if series in counters:
                    assert re.search(rf"rate\({re.escape(series)}[{{\[]", expr), f"{series} not under rate(): {expr}"
                if series in HISTOGRAMS:  # a bare histogram name is no series at all
                    raise AssertionError(f"histogram {series} queried without _bucket/_sum/_count: {expr}")


def test_panels_do_not_overlap_and_share_one_datasource():
    dashboard = load_dashboard()
    taken: dict[tuple[int, int], str] = {}
    for panel in panels(dashboard):
        pos = panel["gridPos"]
        assert pos["x"] + pos["w"] <= 24
        for x in range(pos["x"], pos["x"] + pos["w"]):
            for y in range(pos["y"], pos["y"] + pos["h"]):
                assert (x, y) not in taken, f"{panel['title']!r} overlaps {taken[(x, y)]!r}"
                taken[(x, y)] = panel["title"]
        if panel["type"] != "row":
            assert panel["datasource"]["uid"] == "${DS_PROMETHEUS}"
    assert [i["name"] for i in dashboard["__inputs"]] == ["DS_PROMETHEUS"]
    assert len({p["id"] for p in panels(dashboard)}) == len(panels(dashboard))


def test_prometheus_scrapes_metrics_and_its_alerts_use_known_metrics():
    config = yaml.safe_load((DEPLOY / "prometheus.yml").read_text(encoding="utf-8"))
    one, replicas = config["scrape_configs"]
    assert one["metrics_path"] == replicas["metrics_path"] == "/metrics"
    assert one["static_configs"][0]["targets"] == ["127.0.0.1:8000"]  # `corrige serve`'s default
    # `corrige serve --replicas N`: each replica's own metrics port, the first free from 9100
    assert replicas["static_configs"][0]["targets"] == [f"127.0.0.1:{port}" for port in range(9100, 9104)]
    for rule_file in config["rule_files"]:
        rules = yaml.safe_load((DEPLOY / rule_file).read_text(encoding="utf-8"))
        exprs = [rule["expr"] for group in rules["groups"] for rule in group["rules"]]
        assert exprs
        for expr in exprs:
            for series in series_in(expr):
                assert base_metric_name(series) in METRIC_NAMES, series


AGGREGATED = re.compile(r"^(sum|max|avg|min)( by \([a-z, ]+\))? ?\(|^histogram_quantile\([0-9.]+, sum by \(")


def test_every_panel_aggregates_over_replicas():
    """With N replicas each series comes once per replica (its `instance`): every query sums
    (or takes the max / mean) across them, so one server and N replicas read the same."""
    for panel in panels(load_dashboard()):
        for target in panel.get("targets", []):
            for part in re.split(r" / ", target["expr"]):
                assert AGGREGATED.match(part.strip()), f"{panel['title']!r} does not aggregate: {part}"
