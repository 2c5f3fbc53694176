"""What tracing and metrics cost: two real servers, one with both on and one with both off,
measured side by side in one run.

Both servers (`corrige serve`, same model, same policy) start once and stay up; each round
runs, for each server in turn (the order alternates between rounds, so neither always goes
first on a machine that warms up or gets busier), a closed loop at concurrency 1 (the p50
latency) and one at high concurrency (the throughput), on the same seeded workload. The
report gives the medians over rounds and the ratios on/off: the tracing + metrics overhead is
(p50 on / p50 off - 1) at concurrency 1 and (1 - throughput on / throughput off) under load.

Throughput on a small shared machine swings by ±20% from one round to the next, so the report
also gives what is steadier: the server's CPU time (its process and the engine process) per
correction under load, whose on/off ratio is the share of the server's work that tracing and
metrics add.
"""

from __future__ import annotations

import logging
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from corrige.bench.load import LoadSpec, run_load
from corrige.bench.servers import LabServer
from corrige.bench.workload import build_workload

log = logging.getLogger(__name__)

VARIANTS = ("on", "off")


@dataclass(frozen=True)
class ObservabilityBenchConfig:
    rounds: int = 5
    latency_requests: int = 200  # per round, concurrency 1
    load_clients: int = 32
    load_requests: int = 800  # per round, at `load_clients`
    policy: str = "continuous"
    model: Path | None = None
    seed: int = 0


@dataclass
class VariantResult:
    p50_ms: list[float] = field(default_factory=list)
    p95_ms: list[float] = field(default_factory=list)
    req_per_s: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)  # server CPU per correction under load (None: unknown)
    errors: int = 0


def _server(variant: str, config: ObservabilityBenchConfig) -> LabServer:
    server = LabServer.corrige(config.policy, config.model)
    server.name = f"observability-{variant}"
    if variant == "off":
        server.env.update(CORRIGE_TRACING="false", CORRIGE_METRICS="false")
    return server


def run_observability_bench(
    config: ObservabilityBenchConfig, progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    workload = build_workload(seed=config.seed)
    results = {v: VariantResult() for v in VARIANTS}
    servers = {v: _server(v, config) for v in VARIANTS}
    try:
        for server in servers.values():
            server.start()
        for server in servers.values():
            server.wait_ready()
        for round_index in range(config.rounds):
            order = VARIANTS if round_index % 2 == 0 else VARIANTS[::-1]
            for variant in order:
                url, out = servers[variant].url, results[variant]
                if progress:
                    progress(f"round {round_index + 1}/{config.rounds}: tracing+metrics {variant}")
                single = run_load(
                    LoadSpec(url=url, clients=1, requests=config.latency_requests, seed=round_index), workload
                )
                cpu_before = servers[variant].cpu_seconds()
                loaded = run_load(
                    LoadSpec(url=url, clients=config.load_clients, requests=config.load_requests, seed=round_index),
                    workload,
                )
                cpu_after = servers[variant].cpu_seconds()
                s1, s2 = single.summary(), loaded.summary()
                out.p50_ms.append(s1["latency_ms"]["p50"])
                out.p95_ms.append(s1["latency_ms"]["p95"])
                out.req_per_s.append(s2["req_per_s"])
                answered = sum(1 for r in loaded.results if r.ok)  # warm-up and tail requests too
                if cpu_before is not None and cpu_after is not None and answered:
                    out.cpu_ms.append(1000.0 * (cpu_after - cpu_before) / answered)
                out.errors += sum(s1["errors"].values()) + sum(s2["errors"].values())
    finally:
        for server in servers.values():
            server.stop()
    return summarize(config, results)


def summarize(config: ObservabilityBenchConfig, results: dict[str, VariantResult]) -> dict[str, Any]:
    """Medians per variant, and the overheads as medians of the per-round paired ratios (each
    round measures both servers back to back, so a slow spell hits both sides of a ratio)."""
    med = {
        v: {k: statistics.median(getattr(r, k)) for k in ("p50_ms", "p95_ms", "req_per_s")} for v, r in results.items()
    }
    on, off = results["on"], results["off"]
    latency = [a / b - 1.0 for a, b in zip(on.p50_ms, off.p50_ms, strict=True)]
    throughput = [1.0 - a / b for a, b in zip(on.req_per_s, off.req_per_s, strict=True)]
    paired_cpu = len(on.cpu_ms) == len(off.cpu_ms) == len(on.req_per_s)
    cpu = [a / b - 1.0 for a, b in zip(on.cpu_ms, off.cpu_ms, strict=True)] if paired_cpu else []
    for v, r in results.items():
        med[v]["cpu_ms"] = statistics.median(r.cpu_ms) if r.cpu_ms else None
    return {
        "config": {k: str(v) if isinstance(v, Path) else v for k, v in vars(config).items()},
        "medians": med,
        "rounds": {v: vars(r) for v, r in results.items()},
        "latency_overhead": statistics.median(latency),
        "latency_overhead_rounds": latency,
        "throughput_loss": statistics.median(throughput),
        "throughput_loss_rounds": throughput,
        "cpu_overhead": statistics.median(cpu) if cpu else None,  # server CPU per correction, on / off - 1
        "cpu_overhead_rounds": cpu,
        "targets": {
            "latency_overhead_max": 0.10,  # at concurrency 1
            "throughput_loss_max": 0.05,  # at load_clients
        },
    }
