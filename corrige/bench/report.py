"""Tables for the serving lab: rich tables for the terminal and Markdown for docs/BENCHMARKS.md.

Nothing here prints; the CLI does.
"""

from __future__ import annotations

import math
from typing import Any

from rich.table import Table

from corrige.bench.sweep import PEER, cell


def _fmt(value: float | None, digits: int = 0) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:,.{digits}f}"


def _servers(result: dict[str, Any]) -> list[str]:
    return list(result["config"]["policies"]) + ([PEER] if result["config"]["peer"] else [])


def _clients(result: dict[str, Any]) -> list[int]:
    return sorted(set(result["config"]["clients"]))


def _metric(point: dict[str, Any] | None, metric: str) -> float | None:
    if point is None:
        return None
    s = point["summary"]
    if metric == "req_per_s":
        return s["req_per_s"]
    return s["latency_ms"][metric] if s["latency_ms"] else None


def grid(result: dict[str, Any], metric: str) -> tuple[list[str], list[list[str]]]:
    """Header and rows: one row per client count, one column per server."""
    servers = _servers(result)
    header = ["clients", *servers]
    digits = 0
    rows = []
    for c in _clients(result):
        rows.append([str(c), *(_fmt(_metric(cell(result["points"], s, c), metric), digits) for s in servers)])
    return header, rows


TITLES = {
    "p50": "p50 latency, ms (the seed's table)",
    "p95": "p95 latency, ms",
    "req_per_s": "throughput, corrections/s",
}


def _table(title: str, header: list[str], rows: list[list[str]]) -> Table:
    """A table whose first column is a label (left) and the others figures (right)."""
    table = Table(title=title)
    for i, name in enumerate(header):
        table.add_column(name, justify="right" if i else "left")
    for row in rows:
        table.add_row(*row)
    return table


def grid_table(result: dict[str, Any], metric: str) -> Table:
    return _table(TITLES[metric], *grid(result, metric))


def _errors(result: dict[str, Any]) -> list[str]:
    out = []
    for p in result["points"]:
        if p["summary"]["errors"]:
            out.append(f"{p['server']} x {p['clients']}: {p['summary']['errors']}")
    return out


def peer_rows(result: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Per client count: the peer's own figures, each policy's throughput as a multiple of the peer's,
    and how many times lower the continuous p50 is than the peer's."""
    servers = list(result["config"]["policies"])
    header = ["clients", "peer req/s", "peer p50 ms", *(f"{s} ÷ peer" for s in servers)]
    header += ["peer p50 ÷ continuous p50"] if "continuous" in servers else []
    rows = []
    for c in _clients(result):
        theirs = cell(result["points"], PEER, c)
        ratios = [result["peer_ratios"].get(s, {}).get(str(c)) for s in servers]
        row = [str(c), _fmt(_metric(theirs, "req_per_s"), 1), _fmt(_metric(theirs, "p50"))]
        row += [f"{r['throughput']:.1f}x" if r else "–" for r in ratios]
        if "continuous" in servers:
            r = result["peer_ratios"].get("continuous", {}).get(str(c))
            row.append(f"{r['p50_speedup']:.1f}x" if r else "–")
        rows.append(row)
    return header, rows


def peer_table(result: dict[str, Any]) -> Table:
    header, rows = peer_rows(result)
    table = Table(title="against the peer (transformers generate), same run: throughput as a multiple of the peer's")
    for i, name in enumerate(header):
        table.add_column(name, justify="right" if i else "left")
    for row in rows:
        table.add_row(*row)
    return table


def _describe_target(value: Any) -> str:
    if value is None:
        return "not measured"
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, dict) and "req_per_s" in value:
        return f"{value['req_per_s']:.0f} req/s, p95 {value['p95_ms']:.0f} ms, {value['errors']} errors"
    if isinstance(value, dict) and "none_loglog_slope" in value:
        slope = value["none_loglog_slope"]
        flat = ", ".join(f"{k} {v if v is not None else '–'}" for k, v in value["flat_until_clients"].items())
        return f"none slope {slope:.2f}; flat up to: {flat}" if slope is not None else f"flat up to: {flat}"
    return str(value)


def _status(met: bool | None) -> str:
    return "not measured" if met is None else ("met" if met else "not met")


def target_rows(result: dict[str, Any]) -> list[list[str]]:
    rows = [
        [name, t["target"], _describe_target(t["value"]), _status(t["met"])] for name, t in result["targets"].items()
    ]
    dod = result["dod"]
    for server, d in dod["servers"].items():
        rows.append(
            [
                f"seed's done: {server}, {dod['clients']} clients",
                f"p95 < {dod['p95_ms_limit'] / 1e3:g} s",
                f"p95 {d['p95_ms']:.0f} ms, {d['errors']} errors",
                "pass" if d["met"] else "FAIL",
            ]
        )
    return rows


def targets_table(result: dict[str, Any]) -> Table:
    table = Table(title="targets")
    for name in ("target", "goal", "this run", "status"):
        table.add_column(name)
    for row in target_rows(result):
        table.add_row(*row)
    return table


STAGES = ("ingress", "queue", "prefill", "decode", "rules", "total")  # the server's, less the small ones (in the JSON)


def breakdown_rows(result: dict[str, Any], clients: int) -> tuple[list[str], list[list[str]]]:
    """Where the time goes at `clients`: server stage medians, outside-the-handler time, CPU shares, engine."""
    present = {stage for p in result["points"] for stage in p["summary"]["server_ms_p50"]}
    stages = [s for s in STAGES if s in present]
    header = ["server", *(f"{s} ms" for s in stages), "outside ms", "server CPU", "client CPU"]
    header += ["CPU ms/req: server", "engine", "model", "client", "tok/step", "busy"]
    rows = []
    for server in _servers(result):
        p = cell(result["points"], server, clients)
        if not p or not p["summary"]["latency_ms"]:
            continue
        medians = p["summary"]["server_ms_p50"]
        outside = p["summary"]["latency_ms"]["p50"] - medians.get("total", math.nan)
        engine = p.get("engine") or {}
        rows.append(
            [
                server,
                *(_fmt(medians.get(s), 1) for s in stages),
                _fmt(outside, 1),
                f"{p['server_cpu_share']:.0%}" if p.get("server_cpu_share") is not None else "–",
                f"{p['client_cpu_share']:.0%}",
                _fmt(_per_request_ms(p, p.get("server_cpu_s")), 1),
                _fmt(_per_request_ms(p, engine.get("busy_cpu_s")), 1),
                _fmt(_per_request_ms(p, engine.get("model_cpu_s")), 1),
                _fmt(_per_request_ms(p, p.get("client_cpu_s")), 1),
                _fmt(engine.get("tokens_per_step"), 1),
                f"{engine['busy_share']:.0%}" if engine else "–",
            ]
        )
    return header, rows


def _per_request_ms(point: dict[str, Any], cpu_s: float | None) -> float | None:
    """CPU milliseconds per request over the whole point (warm-up, measured and tail requests)."""
    n = point.get("requests_total")
    return 1e3 * cpu_s / n if cpu_s is not None and n else None


def breakdown_table(result: dict[str, Any], clients: int) -> Table:
    header, rows = breakdown_rows(result, clients)
    title = (
        f"where the time goes at {clients} clients: server stage medians, client latency outside the handler, "
        "CPU as a share of one core and per request (engine loop thread, of which forward passes)"
    )
    return _table(title, header, rows)


def sweep_tables(result: dict[str, Any]) -> list[Table]:
    tables = [grid_table(result, "p50"), grid_table(result, "p95"), grid_table(result, "req_per_s")]
    if result["config"]["peer"]:
        tables.append(peer_table(result))
    tables.append(breakdown_table(result, max(_clients(result))))
    tables.append(targets_table(result))
    return tables


def sweep_notes(result: dict[str, Any]) -> list[str]:
    m = result["machine"]
    notes = [
        f"{m.get('cores')} cores ({m.get('cpu')}), Python {m.get('python')}, load average "
        f"{m.get('load_average_1min_start')} at the start and {m.get('load_average_1min')} at the end; "
        f"{result['seconds']:.0f} s in all",
        "workload: " + ", ".join(f"{k} {v}" for k, v in result["workload"].items()),
    ]
    by_clients: dict[int, list[float]] = {}
    for p in result["points"]:
        if p.get("load_average_1min") is not None:
            by_clients.setdefault(p["clients"], []).append(p["load_average_1min"])
    if by_clients:
        notes.append(
            "1-minute load average after each client count (2 cores; the server and the load generator alone "
            "keep it near 2-3 under load, more means other work shared the cores): "
            + ", ".join(f"{c}: {max(v):.1f}" for c, v in sorted(by_clients.items()))
        )
    errors = _errors(result)
    notes.append("errors: " + ("; ".join(errors) if errors else "none"))
    return notes


def _md_table(header: list[str], rows: list[list[str]], numbers: bool = True) -> list[str]:
    align = ["---"] + ["--:" if numbers else "---"] * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def sweep_markdown(result: dict[str, Any]) -> str:
    """The sweep's tables in Markdown (what docs/BENCHMARKS.md quotes)."""
    lines: list[str] = []
    for metric in ("p50", "p95", "req_per_s"):
        lines += [f"**{TITLES[metric]}**", "", *_md_table(*grid(result, metric)), ""]
    if result["config"]["peer"]:
        lines += ["**against the peer (same run)**", "", *_md_table(*peer_rows(result)), ""]
    top = max(_clients(result))
    lines += [f"**where the time goes at {top} clients**", "", *_md_table(*breakdown_rows(result, top)), ""]
    lines += [
        "**targets**",
        "",
        *_md_table(["target", "goal", "this run", "status"], target_rows(result), numbers=False),
        "",
    ]
    lines += [f"* {note}" for note in sweep_notes(result)]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ load and capacity


def load_table(summary: dict[str, Any], title: str) -> Table:
    table = Table(title=title)
    table.add_column("")
    for name in ("p50", "p95", "p99", "mean"):
        table.add_column(f"{name} ms", justify="right")
    for key, label in (("latency_ms", "latency"), ("ttft_ms", "time to first token"), ("itl_ms", "inter-token")):
        dist = summary.get(key)
        if dist:
            table.add_row(label, *(f"{dist[q]:.1f}" for q in ("p50", "p95", "p99", "mean")))
    return table


def rate_limit_advice(limited: int, requests: int) -> str:
    """What a load test that ran into the server's rate limit measured, and how to lift the limit."""
    return (
        f"rate limited: {limited} of {requests} requests were refused with 429 rate_limited, so this run measured "
        "the server's per-client rate limit, not the server. Start the server with `corrige serve --rate-limit 0` "
        "(or CORRIGE_RATE_LIMIT=0) for a load test."
    )


def load_lines(summary: dict[str, Any]) -> list[str]:
    g = summary["goodput"]
    slo = f"latency <= {g['slo_ms']:g} ms" + (f", TTFT <= {g['slo_ttft_ms']:g} ms" if g["slo_ttft_ms"] else "")
    lines = [
        f"{summary['ok']}/{summary['requests']} ok over {summary['window_s']:.1f} s: "
        f"{summary['req_per_s']:.1f} req/s, {summary['tokens_per_s']:.0f} tokens/s "
        f"({summary['completion_tokens_mean']:.1f} tokens per answer)",
        f"goodput ({slo}): {g['req_per_s']:.1f} req/s, {g['share']:.1%} of requests",
        "errors: " + (", ".join(f"{k} x{v}" for k, v in summary["errors"].items()) or "none"),
        f"load generator CPU: {summary['client_cpu_share']:.0%} of one core",
    ]
    if summary.get("server_ms_p50"):
        stages = summary["server_ms_p50"]
        lines.append("server stages (p50 ms): " + ", ".join(f"{k} {v:.2f}" for k, v in stages.items()))
    little = summary.get("little")
    if summary.get("send_lag_ms_p99") is not None:
        lines.append(f"arrival lag p99 {summary['send_lag_ms_p99']:.1f} ms (how late the generator sent)")
    if little:
        lines.append(
            f"Little's law: L = {little['L']:.2f} in flight (time average) vs λ·W = {little['lambda_per_s']:.1f}/s x "
            f"{little['W_ms']:.1f} ms = {little['lambda_W']:.2f} → {little['relative_error']:.1%} apart "
            f"({'agree' if little['agree'] else 'DISAGREE: not stationary'})"
        )
        server = little.get("server")
        if server:
            lines.append(
                f"  server side: sampled in-flight {server['L']:.2f} ({server['samples']} samples) vs λ·W_server = "
                f"{server['lambda_W']:.2f} → {server['relative_error']:.1%} apart "
                f"({'agree' if server['agree'] else 'DISAGREE'})"
            )
    if summary.get("rate_limited"):  # last, where it is seen
        lines.append(rate_limit_advice(summary["rate_limited"], summary["requests"]))
    return lines


def capacity_table(report: dict[str, Any]) -> Table:
    table = Table(title=f"{report['policy']}: queue bound for p95 <= {report['target_p95_ms']:g} ms (Poisson arrivals)")
    for name in ("rate req/s", "utilisation", "L", "W ms", "p95 ms (no bound)", "bound K", "server setting"):
        table.add_column(name, justify="right")
    for name in ("p95 ms at K", "refused at K"):
        table.add_column(name, justify="right")
    for row in report["rates"]:
        u, b = row["unbounded"], row["bounded"]
        if not row["bound_needed"]:
            bound, setting = "not needed", "as is"
        elif row["bound"] is None:
            bound, setting = "none fits", "–"
        else:
            bound, setting = str(row["bound"]), row["setting"]
        table.add_row(
            f"{row['rate']:.0f}",
            f"{row['utilisation']:.0%}",
            _fmt(u["L"], 2) if u else "∞",
            _fmt(u["W_ms"], 1) if u else "∞",
            _fmt(u["p95_ms"], 1) if u else "∞",
            bound,
            setting,
            _fmt(b["p95_ms"], 1) if b else "–",
            f"{b['refused']:.2%}" if b else "–",
        )
    return table
