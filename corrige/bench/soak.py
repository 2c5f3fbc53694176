"""A soak test: a real `corrige serve` under a steady closed-loop load for a long while, watched.

The server is `corrige serve` on 127.0.0.1 (the serving lab's `LabServer`: its trace store and
portal database in a temporary directory, rate limit and access log off), with its engine and
its trace writer in child processes. `clients` callers send real corrections back to back (the
load generator's varied test-split sentences, rule cards included), and every `interval_s`
the soak samples, from /proc, the resident set (RSS) and the open file descriptors of the
server, the engine child and the trace writer child, the engine's snapshot
(`/v1/engine/stats`), and the trace store's rows and bytes.

Before the load, each caller sends a few requests and closes its connection, so whatever the
server opens on first use is open; once the server has settled (its descriptor counts the same
three times running) the idle descriptor counts are the start. After the load the same settling
gives the end, and the engine's snapshot once idle says whether any KV slot was left taken.

The verdict (`checks`):

* **RSS growth** of each process after the warm-up (the first 10% of the run, at least a minute
  once the run is four minutes or longer): the median of the last three samples against the
  median of the first three after the warm-up, under 5%.
* **Descriptors**: none more, idle after the load, than idle before it, in any process.
* **KV slots**: once idle, nothing running, nothing waiting, every slot free; and the engine
  process was never replaced.
* **Trace store**: never more rows than its cap plus the store's trim step (it trims once every
  `max_spans // 20` rows written, so it can be up to that far over between trims).
* **Requests**: some were answered, and none failed.

    result = run_soak(SoakConfig(minutes=5))
    result["passed"], result["checks"]
"""

from __future__ import annotations

import asyncio
import logging
import os
import platform
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from corrige.bench.servers import LabServer
from corrige.bench.soak_probes import find_processes, open_fds, rss_bytes, store_size
from corrige.bench.soak_verdict import judge, rss_growth, store_bound, warmup_seconds

log = logging.getLogger(__name__)

ROLES = ("server", "engine", "trace_writer")  # the processes the soak watches
SETTLE_SAMPLES = 3  # equal descriptor counts in a row that make the server idle


@dataclass(frozen=True)
class SoakConfig:
    minutes: float = 30.0  # of load, warm-up included
    clients: int = 16  # closed-loop callers
    interval_s: float = 5.0  # between samples
    model: Path | None = None  # None: the bundled model
    trace_store_max_spans: int | None = None  # the store's cap; None: the server's default
    prime_requests: int = 4  # per caller, before the start is measured
    settle_s: float = 30.0  # how long the server may take to go idle after the load
    seed: int = 0  # the sentences
    timeout_s: float = 60.0  # per request

    def __post_init__(self) -> None:
        if self.minutes <= 0 or self.clients < 1 or self.interval_s <= 0 or self.settle_s <= 0:
            raise ValueError("minutes, clients, interval_s and settle_s must be positive")
        if self.trace_store_max_spans is not None and self.trace_store_max_spans < 100:
            raise ValueError("the trace store keeps at least 100 spans (CORRIGE_TRACE_STORE_MAX_SPANS)")


# ------------------------------------------------------------------------------------------ reading


# ------------------------------------------------------------------------------------------ running


class _Tally:
    """Requests answered so far, and the latencies since the last sample (not every request is kept)."""

    def __init__(self) -> None:
        self.done = self.ok = 0
        self.errors: Counter[str] = Counter()
        self.latencies: list[float] = []

    def add(self, result) -> None:
        self.done += 1
        if result.ok:
            self.ok += 1
            self.latencies.append(result.latency)
        else:
            self.errors[result.error or f"http_{result.status}"] += 1

    def take_latencies(self) -> list[float]:
        taken, self.latencies = self.latencies, []
        return taken


class _Soak:
    def __init__(self, config: SoakConfig, server: LabServer, progress: Callable[[str], None]) -> None:
        self.config, self.server, self.progress = config, server, progress
        self.store_path = server.state_dir / "traces.sqlite"
        self.pids: dict[str, int] = {}
        self.engine_pids: list[int] = []
        self.samples: list[dict[str, Any]] = []
        self.tally = _Tally()
        self.prime_failed = 0
        self.idle_start: dict[str, Any] = {"engine": None, "fds": {}}

    def engine_stats(self) -> dict[str, Any]:
        import httpx

        response = httpx.get(f"{self.server.url}/v1/engine/stats", timeout=10.0)
        response.raise_for_status()
        return response.json()

    def with_standby_ready(self, timeout_s: float = 60.0) -> dict[str, Any]:
        """The engine stats once the engine's standby process is ready (or none came within
        `timeout_s`): a standby still starting would be one more spawned child to tell apart."""
        give_up = time.monotonic() + timeout_s
        while (stats := self.engine_stats())["server"]["engine_standby_pid"] is None and time.monotonic() < give_up:
            if stats["server"]["engine_pid"] is None:  # an engine thread: no child at all
                break
            time.sleep(0.2)
        return stats

    def settle(self) -> tuple[dict[str, Any] | None, dict[str, int | None]]:
        """Wait for the engine to have nothing running or waiting and the descriptor counts to hold
        still; the engine stats and the counts then (the engine's as found when time ran out)."""
        give_up = time.monotonic() + self.config.settle_s
        stats: dict[str, Any] | None = None
        while time.monotonic() < give_up:
            stats = self.engine_stats()
            engine = stats["engine"]
            if engine["running"] == 0 and engine["waiting"] == 0 and engine["slots_used"] == 0:
                break
            time.sleep(0.5)
        runs: list[dict[str, int | None]] = []
        while time.monotonic() < give_up or len(runs) < SETTLE_SAMPLES:
            time.sleep(0.5)
            runs.append({role: open_fds(pid) for role, pid in self.pids.items()})
            if len(runs) >= SETTLE_SAMPLES and all(r == runs[-1] for r in runs[-SETTLE_SAMPLES:]):
                break
        return stats, runs[-1]

    def sample(self, t: float) -> dict[str, Any]:
        import httpx

        try:
            stats: dict[str, Any] | None = self.engine_stats()
        except httpx.HTTPError as exc:  # a sample without the engine's figures; the run goes on
            log.warning("no engine stats at %.0f s: %s", t, exc)
            stats = None
        engine_pid = stats["server"]["engine_pid"] if stats else None
        if engine_pid is not None and engine_pid != self.pids.get("engine"):  # a restart: watch the new child
            log.warning("the engine process changed: %s -> %s", self.pids.get("engine"), engine_pid)
            self.pids["engine"] = engine_pid
            self.engine_pids.append(engine_pid)
        latencies = self.tally.take_latencies()
        engine = stats["engine"] if stats else None
        return {
            "t": round(t, 2),
            "rss": {role: rss_bytes(pid) for role, pid in self.pids.items()},
            "fds": {role: open_fds(pid) for role, pid in self.pids.items()},
            "engine": {k: engine[k] for k in ("running", "waiting", "slots_used", "finished")} if engine else None,
            "in_flight": stats["server"]["in_flight"] if stats else None,
            "store": store_size(self.store_path),
            "done": self.tally.done,
            "failed": self.tally.done - self.tally.ok,
            "latency_ms_p50": round(1e3 * statistics.median(latencies), 2) if latencies else None,
        }

    async def load(self, run_s: float) -> float:
        """Prime, measure the idle start, then the closed loop for `run_s` seconds, sampling as it
        goes; the seconds it ran (the callers' last requests finish after `run_s`)."""
        from corrige.bench.load import LoadSpec, _Clients, _Sender
        from corrige.bench.workload import build_workload

        config = self.config
        spec = LoadSpec(self.server.url, clients=config.clients, timeout_s=config.timeout_s, model=config.model)
        workload = build_workload(4096, seed=config.seed, model=config.model)
        clients = _Clients(self.server.url, config.timeout_s)
        t0 = time.perf_counter()
        sender = _Sender(clients, spec, workload, t0)
        try:
            # priming: each caller's first requests open what the server opens on first use
            await asyncio.gather(*(self._prime(sender) for _ in range(config.clients)))
        finally:
            await clients.aclose()
        self.prime_failed = sum(self.tally.errors.values())
        self.tally = _Tally()
        await asyncio.to_thread(self._start_idle)

        clients = _Clients(self.server.url, config.timeout_s)
        t0 = time.perf_counter()
        sender = _Sender(clients, spec, workload, t0)
        stop_at = t0 + run_s

        async def caller() -> None:
            while time.perf_counter() < stop_at:
                self.tally.add(await sender.send("measured"))

        async def sampler() -> None:
            next_at = t0
            while True:
                now = time.perf_counter()
                sample = await asyncio.to_thread(self.sample, now - t0)
                self.samples.append(sample)
                self.progress(
                    f"soak: {now - t0:.0f} of {run_s:.0f} s, {sample['done']} requests "
                    f"({sample['failed']} failed), RSS "
                    + ", ".join(f"{r} {b / 2**20:.0f} MB" for r, b in sample["rss"].items() if b is not None)
                )
                next_at += config.interval_s
                await asyncio.sleep(max(0.0, next_at - time.perf_counter()))

        watcher = asyncio.create_task(sampler())
        try:
            await asyncio.gather(*(caller() for _ in range(config.clients)))
        finally:
            ran = time.perf_counter() - t0
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
            await clients.aclose()
        self.samples.append(await asyncio.to_thread(self.sample, ran))  # the load's end: callers done
        return ran

    async def _prime(self, sender) -> None:
        for _ in range(self.config.prime_requests):
            self.tally.add(await sender.send("warmup"))

    def _start_idle(self) -> None:
        stats, fds = self.settle()
        self.idle_start = {"engine": stats["engine"] if stats else None, "fds": fds}


def _loop_factory():
    """uvloop's when installed: a cheaper loop leaves more of the machine to the server."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def _machine() -> dict[str, Any]:
    return {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
    }


def run_soak(config: SoakConfig, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Start the server, prime it, load it for `config.minutes`, let it settle, stop it; the result (JSON-ready)."""
    progress = progress or (lambda what: log.info("%s", what))
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per request otherwise
    run_s = 60.0 * config.minutes
    server = LabServer.corrige("continuous", config.model)
    if config.trace_store_max_spans is not None:
        server.env["CORRIGE_TRACE_STORE_MAX_SPANS"] = str(config.trace_store_max_spans)
    machine_start = _machine()
    progress("soak: starting corrige serve…")
    with server:
        soak = _Soak(config, server, progress)
        first = soak.with_standby_ready()
        soak.pids = find_processes(server.pid, first["server"]["engine_pid"], first["server"]["engine_standby_pid"])
        soak.engine_pids = [soak.pids["engine"]] if "engine" in soak.pids else []
        progress(f"soak: watching {', '.join(f'{r} {p}' for r, p in soak.pids.items())}; priming…")
        with asyncio.Runner(loop_factory=_loop_factory()) as runner:
            ran = runner.run(soak.load(run_s))
        progress("soak: load over, waiting for the server to go idle…")
        stats_end, fds_end = soak.settle()
        store_end = store_size(soak.store_path)
        max_spans = int(server.env.get("CORRIGE_TRACE_STORE_MAX_SPANS") or _default_max_spans())
        problems = server.log_problems()
    ran = round(ran, 2)  # the warm-up is derived from the run time the report shows, so the two agree
    warmup_s = warmup_seconds(ran)
    spans_seen = [s["store"]["spans"] for s in soak.samples if s["store"]["spans"] is not None]
    if store_end["spans"] is not None:
        spans_seen.append(store_end["spans"])
    done = soak.tally.done
    result: dict[str, Any] = {
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(config).items()},
        "command": _command(config),
        "machine": {**machine_start, "loadavg_end": [round(x, 2) for x in os.getloadavg()]},
        "run_s": round(ran, 2),
        "warmup_s": round(warmup_s, 2),
        "requests": {
            "done": done,
            "ok": soak.tally.ok,
            "failed": done - soak.tally.ok,
            "errors": dict(soak.tally.errors),
            "req_per_s": round(done / ran, 2) if ran > 0 else 0.0,
            "priming": config.clients * config.prime_requests,
            "priming_failed": soak.prime_failed,
        },
        "processes": _processes(soak, fds_end, warmup_s),
        "engine_restarts": len(soak.engine_pids) - 1 if soak.engine_pids else 0,
        "engine_idle": _engine_idle(soak, stats_end),
        "trace_store": {
            "max_spans": max_spans,
            "bound": store_bound(max_spans),
            "spans_max": max(spans_seen, default=None),
            "spans_end": store_end["spans"],
            "bytes_end": store_end["bytes"],
        },
        "samples": soak.samples,
        "server_log_problems": problems,
    }
    result["checks"] = judge(result)
    result["passed"] = all(check["ok"] for check in result["checks"])
    return result


def _processes(soak: _Soak, fds_end: dict[str, int | None], warmup_s: float) -> dict[str, Any]:
    """Per watched process: its RSS growth after the warm-up, and its descriptors idle and under load."""
    processes: dict[str, Any] = {}
    for role, pid in soak.pids.items():
        series = [(s["t"], s["rss"][role]) for s in soak.samples if s["rss"].get(role) is not None]
        fds_load = [s["fds"][role] for s in soak.samples if s["fds"].get(role) is not None]
        processes[role] = {
            "pid": pid,
            "rss": rss_growth(series, warmup_s),
            "fds": {
                "idle_start": soak.idle_start["fds"].get(role),
                "idle_end": fds_end.get(role),
                "load_min": min(fds_load, default=None),
                "load_max": max(fds_load, default=None),
            },
        }
    return processes


def _engine_idle(soak: _Soak, stats_end: dict[str, Any] | None) -> dict[str, Any] | None:
    """The engine's snapshot once the server is idle again (None when it could not be read)."""
    engine_end = stats_end["engine"] if stats_end else None
    if engine_end is None:
        return None
    started = soak.idle_start["engine"]
    return {
        **{k: engine_end[k] for k in ("running", "waiting", "slots_used", "slots_total", "finished")},
        "in_flight": stats_end["server"]["in_flight"],
        "finished_during_soak": engine_end["finished"] - started["finished"] if started else None,
    }


def _default_max_spans() -> int:
    from corrige.server.settings import Settings

    return Settings.model_fields["trace_store_max_spans"].default


def _command(config: SoakConfig) -> str:
    parts = [f"corrige bench soak --minutes {config.minutes:g} --clients {config.clients}"]
    parts.append(f"--interval {config.interval_s:g}")
    if config.model is not None:
        parts.append(f"--model {config.model}")
    if config.trace_store_max_spans is not None:
        parts.append(f"--trace-store-max-spans {config.trace_store_max_spans}")
    return " ".join(parts)
