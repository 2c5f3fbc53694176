"""`corrige bench sweep`: closed-loop client counts against a real server per batching policy.

One `corrige serve` subprocess per policy (none, threads, static, continuous), and with `peer`
the transformers server of `corrige.bench.peer`, all started at once on free loopback ports
(an idle server costs about 0.2% of a core). For each client count the servers are measured
one after the other, so a slow spell on a shared machine hits every policy at that count, not
one policy's whole curve. Every point replays the same seeded sentence mix.

A point sends `max(min_requests, per_client x clients)` measured requests or runs for
`max_seconds`, whichever ends first, after one unmeasured request per client (see
`corrige.bench.load` for the closed loop). Besides the load generator's summary it records
the latency percentiles 1..99 (for `corrige capacity`), the server's and the load generator's
CPU use, and the engine's counters over the point (steps, tokens, busy and model time).

The seed's definition of done (p95 under 5 s with 10 concurrent requests) is one more point
per server at `dod_clients`.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from corrige.bench.load import LoadSpec, RequestResult, run_load
from corrige.bench.load_summary import latency_quantiles_ms
from corrige.bench.servers import LabServer
from corrige.bench.workload import build_workload

log = logging.getLogger(__name__)

POLICIES = ("none", "threads", "static", "continuous")
CLIENTS = (1, 2, 4, 8, 16, 32, 64)
PEER = "peer"

# targets of the serving lab (benchmark, 2-core machine, bundled model)
FLAT_FACTOR = 2.0  # "flat": p50 within 2x of the 1-client p50
THROUGHPUT_CLIENTS, THROUGHPUT_REQ_S, THROUGHPUT_P95_MS = 64, 300.0, 300.0
PEER_CLIENTS, PEER_RATIO = 8, 5.0
LINEAR_SLOPE = (0.75, 1.25)  # log-log slope of `none`'s p50 against clients that counts as linear


@dataclass(frozen=True)
class SweepConfig:
    policies: tuple[str, ...] = POLICIES
    clients: tuple[int, ...] = CLIENTS
    per_client: int = 8  # measured requests per client at each point...
    min_requests: int = 48  # ...but at least this many
    max_seconds: float = 6.0  # and at most this long (measured part)
    warmup: int = 1  # unmeasured requests per client first
    dod_clients: int = 10  # the seed's definition of done: p95 < dod_p95_ms at this many clients (0: skip)
    dod_p95_ms: float = 5000.0
    peer: bool = False
    model: Path | None = None
    seed: int = 0
    slo_ms: float = 300.0  # goodput counts successes within this
    stream: bool = False
    rules: bool | None = None  # ask for rule cards (None: the server's default; the peer never looks them up)

    def __post_init__(self) -> None:
        unknown = set(self.policies) - set(POLICIES)
        if unknown or not self.policies:
            raise ValueError(f"policies must be among {', '.join(POLICIES)}; got {', '.join(self.policies)}")
        if not self.clients or min(self.clients) < 1:
            raise ValueError("client counts must be positive")

    def requests_for(self, clients: int) -> int:
        return max(self.min_requests, self.per_client * clients)

    def client_counts(self) -> list[int]:
        extra = [self.dod_clients] if self.dod_clients and self.dod_clients not in self.clients else []
        return sorted(set(self.clients)) + extra


@dataclass
class SweepHooks:
    """Progress callbacks for a caller that shows progress (the CLI); all optional."""

    point_started: Callable[[str, int, int], None] | None = None  # server, clients, requests
    request_done: Callable[[RequestResult], None] | None = None
    point_done: Callable[[dict[str, Any]], None] | None = None
    servers_ready: Callable[[list[str]], None] | None = None


@dataclass
class _Counters:
    cpu_s: float | None
    engine: dict[str, Any] | None
    t: float = field(default_factory=time.perf_counter)


def _engine_delta(before: dict[str, Any] | None, after: dict[str, Any] | None, wall: float) -> dict[str, Any] | None:
    if not before or not after:
        return None
    keys = ("steps", "generated_tokens", "prompt_tokens", "busy_s", "model_s", "busy_cpu_s", "model_cpu_s")
    d = {k: after[k] - before[k] for k in keys if k in after and k in before}
    return {
        "steps": d["steps"],
        "busy_cpu_s": d.get("busy_cpu_s"),  # the engine loop thread's CPU time while working
        "model_cpu_s": d.get("model_cpu_s"),  # ... of which forward passes
        "tokens_per_step": d["generated_tokens"] / d["steps"] if d["steps"] else 0.0,
        "busy_share": d["busy_s"] / wall,  # engine loop working (not waiting for requests)
        "model_share": d["model_s"] / wall,  # forward passes
        "model_ms_per_step": 1e3 * d["model_s"] / d["steps"] if d["steps"] else 0.0,
        "busy_ms_per_step": 1e3 * d["busy_s"] / d["steps"] if d["steps"] else 0.0,
    }


def measure_point(server: LabServer, clients: int, config: SweepConfig, workload, hooks: SweepHooks) -> dict[str, Any]:
    """One closed-loop run of `clients` against `server`, with the server's CPU and engine counters around it."""
    requests = config.requests_for(clients)
    if hooks.point_started:
        hooks.point_started(server.name, clients, requests)
    spec = LoadSpec(
        server.url,
        mode="closed",
        clients=clients,
        requests=requests,
        duration=config.max_seconds,
        warmup=config.warmup,
        stream=config.stream,
        rules=config.rules,
        slo_ms=config.slo_ms,
        seed=config.seed,
    )
    before = _Counters(server.cpu_seconds(), server.engine_stats())
    run = run_load(spec, workload, hooks.request_done)
    after = _Counters(server.cpu_seconds(), server.engine_stats())
    wall = after.t - before.t
    server_cpu_s = after.cpu_s - before.cpu_s if before.cpu_s is not None and after.cpu_s is not None else None
    point = {
        "server": server.name,
        "clients": clients,
        "summary": run.summary(),
        "latency_quantiles_ms": latency_quantiles_ms(run.measured),
        "requests_total": len(run.results),  # warm-up, measured and tail: what the CPU times below paid for
        "server_cpu_s": server_cpu_s,
        "client_cpu_s": run.client_cpu_s,
        "server_cpu_share": server_cpu_s / wall if server_cpu_s is not None else None,
        "client_cpu_share": run.client_cpu_s / run.wall_s,
        "engine": _engine_delta(before.engine, after.engine, wall),
        # the machine is shared: a high figure here marks a point other work disturbed
        "load_average_1min": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
    }
    if hooks.point_done:
        hooks.point_done(point)
    return point


def _log_problems(servers: list[LabServer], points: list[dict[str, Any]]) -> dict[str, list[str]]:
    """The warnings and errors in the logs of servers that failed requests (their logs are removed
    with them), and logged here, so a failed point can be diagnosed from the result file."""
    failed = {p["server"] for p in points if sum(p["summary"]["errors"].values())}
    problems = {s.name: s.log_problems() for s in servers if s.name in failed}
    for name, lines in problems.items():
        log.warning("%s failed requests; its log says:\n%s", name, "\n".join(lines) or "(nothing)")
    return problems


def run_sweep(config: SweepConfig, hooks: SweepHooks | None = None) -> dict[str, Any]:
    """Start the servers, measure every (client count, server) point, evaluate the targets."""
    hooks = hooks or SweepHooks()
    if config.peer:
        from corrige.bench.peer import require_peer_deps

        require_peer_deps()  # fail before starting anything
    counts = config.client_counts()
    workload = build_workload(max(config.requests_for(max(counts)) * 2, 4096), seed=config.seed, model=config.model)
    servers = [LabServer.corrige(policy, config.model) for policy in config.policies]
    if config.peer:
        servers.append(LabServer.peer(config.model))
    started = time.perf_counter()
    load_start = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    points: list[dict[str, Any]] = []
    try:
        for server in servers:  # all load at once: start-up is mostly imports, on both cores
            server.start()
        for server in servers:
            server.wait_ready()
        if hooks.servers_ready:
            hooks.servers_ready([s.name for s in servers])
        for clients in counts:
            for server in servers:
                points.append(measure_point(server, clients, config, workload, hooks))
                log.debug("%s x %d clients done", server.name, clients)
    finally:
        problems = _log_problems(servers, points)
        for server in servers:
            server.stop()
    from corrige.bench.machine import machine_info

    machine = machine_info("client process (each corrige serve holds BLAS to 1 thread)")
    machine["load_average_1min_start"] = round(load_start, 2) if load_start is not None else None
    if config.peer:
        from importlib.metadata import version

        machine["torch"] = version("torch")  # the peer's; not imported here, this process only sends requests
        machine["transformers"] = version("transformers")
    result = {
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(config).items()},
        "machine": machine,
        "workload": workload.describe(),
        "servers": {s.name: s.command[1:-4] for s in servers},
        "environment": {k: v for k, v in os.environ.items() if k.startswith("CORRIGE_")},  # reaches the servers
        "points": points,
        "seconds": time.perf_counter() - started,
        "server_log_problems": problems,
    }
    result |= evaluate(points, config)
    return result


# ------------------------------------------------------------------------------------------ evaluation


def cell(points: list[dict[str, Any]], server: str, clients: int) -> dict[str, Any] | None:
    return next((p for p in points if p["server"] == server and p["clients"] == clients), None)


def p50(point: dict[str, Any] | None) -> float:
    lat = point["summary"]["latency_ms"] if point else None
    return lat["p50"] if lat else math.nan


def flat_until(points: list[dict[str, Any]], server: str, clients: list[int]) -> int | None:
    """The largest client count up to which the p50 stays within FLAT_FACTOR x the 1-client p50."""
    base = p50(cell(points, server, 1))
    last = None
    for c in sorted(clients):
        value = p50(cell(points, server, c))
        if math.isnan(base) or math.isnan(value) or value > FLAT_FACTOR * base:
            break
        last = c
    return last


def loglog_slope(points: list[dict[str, Any]], server: str, clients: list[int]) -> float | None:
    """Least-squares slope of log p50 against log clients over clients >= 2 (1 = linear growth)."""
    xy = [(math.log(c), math.log(p50(cell(points, server, c)))) for c in clients if c >= 2]
    xy = [(x, y) for x, y in xy if not math.isnan(y)]
    if len(xy) < 2:
        return None
    mx, my = sum(x for x, _ in xy) / len(xy), sum(y for _, y in xy) / len(xy)
    sxx = sum((x - mx) ** 2 for x, _ in xy)
    return sum((x - mx) * (y - my) for x, y in xy) / sxx if sxx else None


def evaluate(points: list[dict[str, Any]], config: SweepConfig) -> dict[str, Any]:
    """The lab's targets, the seed's definition of done, and the ratios to the peer."""
    clients = sorted(set(config.clients))
    servers = list(config.policies) + ([PEER] if config.peer else [])
    targets: dict[str, Any] = {}

    def target(name: str, value: Any, goal: str, met: bool | None) -> None:
        targets[name] = {"value": value, "target": goal, "met": met}

    c1, c8 = cell(points, "continuous", 1), cell(points, "continuous", 8)
    ratio = p50(c8) / p50(c1) if c1 and c8 else None
    target("continuous p50 at 8 clients / at 1", ratio, f"<= {FLAT_FACTOR:g}", None if ratio is None else ratio <= 2)

    c64 = cell(points, "continuous", THROUGHPUT_CLIENTS)
    if c64:
        s = c64["summary"]
        p95 = s["latency_ms"]["p95"] if s["latency_ms"] else math.nan
        errors = sum(s["errors"].values())
        met = s["req_per_s"] >= THROUGHPUT_REQ_S and p95 <= THROUGHPUT_P95_MS and errors == 0
        value = {"req_per_s": s["req_per_s"], "p95_ms": p95, "errors": errors}
    else:
        value, met = None, None
    goal = f">= {THROUGHPUT_REQ_S:g} req/s with p95 <= {THROUGHPUT_P95_MS:g} ms, no errors"
    target(f"continuous at {THROUGHPUT_CLIENTS} clients", value, goal, met)

    ours, theirs = cell(points, "continuous", PEER_CLIENTS), cell(points, PEER, PEER_CLIENTS)
    peer_ratio = ours["summary"]["req_per_s"] / theirs["summary"]["req_per_s"] if ours and theirs else None
    target(
        f"continuous throughput / peer at {PEER_CLIENTS} clients",
        peer_ratio,
        f">= {PEER_RATIO:g}x",
        None if peer_ratio is None else peer_ratio >= PEER_RATIO,
    )

    flat = {s: flat_until(points, s, clients) for s in servers}
    slope = loglog_slope(points, "none", clients) if "none" in servers else None
    linear = slope is not None and LINEAR_SLOPE[0] <= slope <= LINEAR_SLOPE[1]
    ours_flat = {s: v for s, v in flat.items() if s != PEER}
    longest = "continuous" in ours_flat and all((ours_flat["continuous"] or 0) >= (v or 0) for v in ours_flat.values())
    target(
        "seed's shape: none linear, continuous flat the longest",
        {"none_loglog_slope": slope, "flat_until_clients": flat},
        f"none slope in [{LINEAR_SLOPE[0]}, {LINEAR_SLOPE[1]}]; continuous flat (p50 <= {FLAT_FACTOR:g}x) the longest",
        linear and longest if "none" in servers and "continuous" in servers else None,
    )

    dod = {}
    if config.dod_clients:
        for s in servers:
            point = cell(points, s, config.dod_clients)
            if point and point["summary"]["latency_ms"]:
                p95 = point["summary"]["latency_ms"]["p95"]
                errors = sum(point["summary"]["errors"].values())
                dod[s] = {"p95_ms": p95, "errors": errors, "met": p95 < config.dod_p95_ms and errors == 0}

    peer_ratios: dict[str, dict[str, dict[str, float]]] = {}
    if config.peer:
        for s in config.policies:
            peer_ratios[s] = {}
            for c in clients:
                ours, theirs = cell(points, s, c), cell(points, PEER, c)
                if ours and theirs and theirs["summary"]["req_per_s"] > 0 and ours["summary"]["latency_ms"]:
                    peer_ratios[s][str(c)] = {
                        "throughput": ours["summary"]["req_per_s"] / theirs["summary"]["req_per_s"],
                        "p50_speedup": p50(theirs) / p50(ours),
                        "p95_speedup": theirs["summary"]["latency_ms"]["p95"] / ours["summary"]["latency_ms"]["p95"],
                    }
    return {
        "targets": targets,
        "dod": {"clients": config.dod_clients, "p95_ms_limit": config.dod_p95_ms} | {"servers": dod},
        "peer_ratios": peer_ratios,
    }
