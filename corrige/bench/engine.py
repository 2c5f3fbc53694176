"""`corrige bench engine`: the four serving policies under closed-loop load, no HTTP.

For each policy and each client count, that many asyncio clients each send a request,
await its whole answer, and send the next, until `requests` are done or `duration`
seconds have passed (requests in flight then finish and count). Requests mix prompt
lengths (a long tail around 10-30 tokens) and output lengths (short ~8, typical ~20,
long ~36 tokens, generated exactly: stop tokens are ignored), the same sequence for every
cell. Latency is what a client sees: from `generate()` to its result.

NumPy and the engine are imported late, so BLAS can be held to `blas_threads` first: with
2 cores, BLAS worker threads that spin fight the engine's and the event loop's threads.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from corrige.bench.machine import machine_info, write_json
from corrige.model.blas import limit_blas_threads

log = logging.getLogger(__name__)

POLICIES = ("none", "threads", "static", "continuous")
CLIENTS = (1, 2, 4, 8, 16, 32, 64)
OUTPUT_MIX = {"short": (8, 0.4), "typical": (20, 0.4), "long": (36, 0.2)}  # tokens at n_ctx=64, share


@dataclass(frozen=True)
class WorkItem:
    prompt: list[int]
    max_tokens: int
    kind: str  # short | typical | long; tutor for real corrections
    stop_token_ids: tuple[int, ...] = ()  # none: exactly max_tokens tokens (stop tokens ignored)

    def params(self):
        from corrige.engine import SamplingParams

        if not self.stop_token_ids:
            return SamplingParams(max_tokens=self.max_tokens, ignore_eos=True)
        # what the server asks for a correction: stop at eos, with log-probabilities
        return SamplingParams(max_tokens=self.max_tokens, stop_token_ids=self.stop_token_ids, logprobs=True)


@dataclass
class Cell:
    """One policy at one client count."""

    policy: str
    clients: int
    requests: int
    seconds: float
    requests_per_s: float
    tokens_per_s: float
    p50_ms: float
    p95_ms: float
    p95_short_ms: float
    mean_batch: float
    # Engine overhead: the share of the engine loop's working time not spent in forward passes
    # (scheduling, sampling, bookkeeping, handing results over), in the thread's CPU time and
    # in wall-clock time (which adds waiting for the GIL while the clients' code runs, and for a
    # core). For threads, per worker step instead: its loop thread only admits and retires.
    overhead_cpu: float
    overhead_wall: float
    # ...of which picking tokens from the logits (argmax, sampling), the rest of the model step:
    # the target counts scheduling and bookkeeping only (timed by the wall clock; no waits inside)
    sampling_share: float = 0.0
    speculative_tokens: int = 0
    steps_per_request: float = 0.0  # model steps per finished request (a step serves the whole batch)
    acceptance: float = 0.0  # share of guessed tokens kept
    # CPU time of the forward passes per finished request: what the model alone costs a request
    # under this policy at this load. The ratio of two policies' figures is the throughput ratio
    # they would reach if neither had any engine overhead (see `targets`).
    model_ms_per_request: float = 0.0


def make_workload(vocab_size: int, n_ctx: int, n: int, seed: int) -> list[WorkItem]:
    import numpy as np

    rng = np.random.default_rng(seed)
    scale = n_ctx / 64  # the mix is written for the seed model's 64-token window
    kinds = list(OUTPUT_MIX)
    items = []
    for kind in rng.choice(kinds, size=n, p=[OUTPUT_MIX[k][1] for k in kinds]):
        max_tokens = max(1, round(OUTPUT_MIX[kind][0] * scale))
        prompt_len = round(scale * rng.lognormal(np.log(15), 0.4))  # median 15, tail past 30
        prompt_len = int(np.clip(prompt_len, 4, n_ctx - max_tokens))
        items.append(WorkItem(rng.integers(0, vocab_size, prompt_len).tolist(), max_tokens, str(kind)))
    return items


class _ClosedLoop:
    """`clients` callers, each sending its next request when the last one returns.

    Each caller's first request warms the engine up and is not measured; then `measured`
    requests are timed; callers keep the load on (unmeasured) until the last of those
    returns, so every measured request saw the full concurrency. The window from the first
    measured request's start to the last one's end gives the rates.
    """

    def __init__(self, engine, workload: list[WorkItem], clients: int, measured: int, duration: float) -> None:
        self.engine, self.workload, self.clients = engine, workload, clients
        self.first, self.last = clients, clients + measured  # indices of the measured requests
        self.duration = duration
        self.issued = 0
        self.samples: list[tuple[str, float, float]] = []  # kind, start, end of measured requests
        self.completions: list[tuple[float, int]] = []  # end, tokens of every request
        self.window: list[float] = []  # start, end
        self.snapshots: list = []  # engine snapshots at the window's start and end
        self.stop_at = float("inf")

    def _measuring_done(self) -> bool:
        return len(self.samples) >= self.last - self.first or time.monotonic() > self.stop_at

    async def _client(self) -> None:
        while len(self.window) < 2:
            index, self.issued = self.issued, self.issued + 1
            item = self.workload[index % len(self.workload)]
            start = time.monotonic()
            if index == self.first:
                self.window.append(start)
                self.snapshots.append(self.engine.snapshot())
                self.stop_at = start + self.duration
            output = await self.engine.generate(item.prompt, item.params())
            end = time.monotonic()
            self.completions.append((end, len(output.token_ids)))
            if self.first <= index < self.last:
                self.samples.append((item.kind, start, end))
            if len(self.window) == 1 and self._measuring_done():  # every client stops sending
                self.window.append(end)
                self.snapshots.append(self.engine.snapshot())

    async def run(self) -> None:
        await asyncio.gather(*(self._client() for _ in range(self.clients)))


def run_cell(
    weights,
    policy: str,
    clients: int,
    workload,
    requests: int,
    duration: float,
    threads: int,
    speculative_tokens: int = 0,
    drafter=None,
    speculative_token_budget: int = 32,
) -> Cell:
    import numpy as np

    from corrige.engine import Engine, EngineConfig

    config = EngineConfig(
        policy=policy,
        n_slots=64,
        max_batch=32,
        max_wait_ms=10,
        max_waiting=1024,
        queue_timeout_s=None,
        n_threads=threads,
        speculative_tokens=speculative_tokens,
        speculative_token_budget=speculative_token_budget,
    )
    steps = []
    with Engine(weights, config, drafter=drafter) as engine:
        engine.subscribe(on_step=steps.append)
        load = _ClosedLoop(engine, workload, clients, requests, duration)
        asyncio.run(load.run())
    (t0, t1), (before, after) = load.window, load.snapshots
    seconds = t1 - t0
    finished = [tokens for end, tokens in load.completions if t0 <= end <= t1]
    latency = np.array([end - start for _, start, end in load.samples]) * 1e3
    short = np.array([end - start for kind, start, end in load.samples if kind == "short"]) * 1e3
    window_steps = [s for s in steps if t0 <= s.time <= t1]
    if policy == "threads":
        busy = (sum(s.step_cpu_s for s in window_steps), sum(s.step_s for s in window_steps))
        model = (sum(s.model_cpu_s for s in window_steps), sum(s.model_s for s in window_steps))
    else:
        busy = (after.busy_cpu_s - before.busy_cpu_s, after.busy_s - before.busy_s)
        model = (after.model_cpu_s - before.model_cpu_s, after.model_s - before.model_s)
    return Cell(
        policy=policy,
        clients=clients,
        requests=len(load.samples),
        seconds=seconds,
        requests_per_s=len(finished) / seconds,
        tokens_per_s=sum(finished) / seconds,
        p50_ms=float(np.percentile(latency, 50)),
        p95_ms=float(np.percentile(latency, 95)),
        p95_short_ms=float(np.percentile(short, 95)) if len(short) else float("nan"),
        mean_batch=float(np.mean([s.batch_size for s in window_steps])) if window_steps else 0.0,
        overhead_cpu=1 - model[0] / busy[0] if busy[0] else 0.0,
        overhead_wall=1 - model[1] / busy[1] if busy[1] else 0.0,
        sampling_share=sum(s.sample_s for s in window_steps) / busy[0] if busy[0] else 0.0,
        speculative_tokens=speculative_tokens,
        steps_per_request=(after.steps - before.steps) / max(len(finished), 1),
        acceptance=(after.accepted_tokens - before.accepted_tokens) / max(after.draft_tokens - before.draft_tokens, 1),
        model_ms_per_request=model[0] / max(after.finished - before.finished, 1) * 1e3,
    )


def targets(cells: list[Cell]) -> dict[str, Any]:
    """The issue's targets, from this run's cells (None where a cell was not run)."""
    by = {(c.policy, c.clients): c for c in cells}
    result: dict[str, Any] = {}
    if ("continuous", 32) in by and ("none", 32) in by:
        ratio = by["continuous", 32].requests_per_s / by["none", 32].requests_per_s
        result["continuous_vs_none_rps_at_32"] = {"value": round(ratio, 2), "target": ">= 8", "met": ratio >= 8}
        # The most any scheduler could reach with this runtime: the ratio of the forward passes'
        # cost per request, batch of one against a full batch, as if the engine cost nothing.
        ceiling = by["none", 32].model_ms_per_request / max(by["continuous", 32].model_ms_per_request, 1e-9)
        result["continuous_vs_none_model_ceiling_at_32"] = {
            "value": round(ceiling, 2),
            "none_model_ms_per_request": round(by["none", 32].model_ms_per_request, 3),
            "continuous_model_ms_per_request": round(by["continuous", 32].model_ms_per_request, 3),
        }
    for clients in (8, 16, 32, 64):
        if ("continuous", clients) in by and ("static", clients) in by:
            ratio = by["continuous", clients].p95_short_ms / by["static", clients].p95_short_ms
            result[f"short_p95_continuous_over_static_at_{clients}"] = {
                "value": round(ratio, 2),
                "target": "<= 0.5",
                "met": ratio <= 0.5,
            }
    for clients in (32, 64):
        if ("continuous", clients) in by:
            cell = by["continuous", clients]
            scheduling = cell.overhead_cpu - cell.sampling_share  # scheduling + bookkeeping
            result[f"continuous_overhead_at_{clients}"] = {
                "mean_batch": round(cell.mean_batch, 1),
                "cpu": round(scheduling, 3),
                "sampling": round(cell.sampling_share, 3),
                "cpu_with_sampling": round(cell.overhead_cpu, 3),
                "wall_with_sampling": round(cell.overhead_wall, 3),
                "target": "<= 0.10",
                "met": scheduling <= 0.10,
            }
    return result


def _table(cells: list[Cell]) -> Table:
    table = Table(title="engine: closed-loop clients, mixed prompt and output lengths")
    columns = ("policy", "clients", "req/s", "tok/s", "p50 ms", "p95 ms", "p95 short", "batch", "ovh cpu", "ovh wall")
    columns += ("of which sampling", "model ms/req")
    for name in columns:
        table.add_column(name, justify="left" if name == "policy" else "right")
    for c in sorted(cells, key=lambda c: (POLICIES.index(c.policy), c.clients)):
        table.add_row(
            c.policy,
            str(c.clients),
            f"{c.requests_per_s:.0f}",
            f"{c.tokens_per_s:.0f}",
            f"{c.p50_ms:.0f}",
            f"{c.p95_ms:.0f}",
            f"{c.p95_short_ms:.0f}",
            f"{c.mean_batch:.1f}",
            f"{c.overhead_cpu:.1%}",
            f"{c.overhead_wall:.1%}",
            f"{c.sampling_share:.1%}",
            f"{c.model_ms_per_request:.2f}",
        )
    return table


def cells_progress(console: Console) -> Progress:
    """The bar that counts a benchmark's cells as they run, named after the one running."""
    return Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    )


@dataclass(frozen=True)
class CellGrid:
    """The cells of an in-process closed-loop benchmark (this one and `bench speculative`): every policy
    at every client count, each cell `requests` measured requests (0: the benchmark's own count for its
    clients) or `duration` seconds at most, over a workload drawn with `seed`."""

    policies: tuple[str, ...]
    clients: tuple[int, ...]
    requests: int = 0
    duration: float = 4.0
    seed: int = 0

    def within(self, known: tuple[str, ...]) -> bool:
        """At least one policy, each of them `known`, and at least one client count, each positive."""
        return bool(self.policies) and set(self.policies) <= set(known) and bool(self.clients) and min(self.clients) > 0


def run_engine_bench(
    console: Console,
    grid: CellGrid,
    model: Path | None = None,
    preset: str = "seed",
    threads: int = 4,
    blas_threads: int = 1,
    output: Path | None = None,
) -> dict[str, Any]:
    """Run every (policy, clients) cell, print the table and targets, optionally write JSON."""
    if not grid.within(POLICIES):
        got = f"{list(grid.policies)}, {list(grid.clients)}"
        raise ValueError(f"policies must come from {POLICIES} and clients be positive; got {got}")
    blas_limit = limit_blas_threads(blas_threads)

    from corrige.model.config import preset as preset_config
    from corrige.model.numpy_gpt import prepare
    from corrige.model.weights import load_model, random_params

    cfg, params = load_model(model) if model else (preset_config(preset), None)
    weights = prepare(params if params is not None else random_params(cfg, seed=grid.seed), cfg)
    workload = make_workload(cfg.vocab_size, cfg.n_ctx, 4096, grid.seed)
    machine = machine_info(blas_limit)
    console.print(f"[bold]machine[/] {machine}", soft_wrap=True)
    cells: list[Cell] = []
    with cells_progress(console) as bar:
        task = bar.add_task("engine", total=len(grid.policies) * len(grid.clients))
        for n in grid.clients:  # policies side by side at each load, so slow spells hit them alike
            for policy in grid.policies:
                bar.update(task, description=f"{policy} x {n}")
                cell_requests = grid.requests or max(320, 16 * n)
                cells.append(run_cell(weights, policy, n, workload, cell_requests, grid.duration, threads))
                bar.advance(task)
    wide = console if console.is_terminal else Console(file=console.file, width=120)  # a pipe gets 80 columns
    wide.print(_table(cells))
    goals = targets(cells)
    for name, goal in goals.items():
        verdict = "[bold]figure[/]" if "met" not in goal else "[green]met[/]" if goal["met"] else "[red]not met[/]"
        console.print(f"{verdict} {name}: {goal}", soft_wrap=True)
    result = {
        "machine": machine,
        "model": str(model) if model else f"random {preset}",
        "settings": {
            "requests": grid.requests,
            "duration_s": grid.duration,
            "threads": threads,
            "blas_threads": blas_threads,
        },
        "cells": [asdict(c) for c in cells],
        "targets": goals,
    }
    if output:
        write_json(output, result, console)
    return result
