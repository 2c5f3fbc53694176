"""`corrige bench speculative`: prompt-lookup speculative decoding on and off, real corrections.

The engine bench's synthetic mix forces output lengths over random prompts, where nothing
can be guessed. Here the workload is the serving lab's: learner sentences from the test
split, as the server prompts them (stop at eos, with log-probabilities). For each client
count and policy, rounds alternate the engine with guessing off and on (A, B, A, B, ...), so
a slow spell hits both; the table gives each side's medians and the median of the per-round
ratios. Both sides produce the same tokens (the engine tests check that); only the number of
model steps changes.
"""

from __future__ import annotations

import logging
import statistics
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from corrige.bench.engine import Cell, CellGrid, WorkItem, cells_progress, run_cell
from corrige.bench.machine import machine_info, write_json
from corrige.model.blas import limit_blas_threads

log = logging.getLogger(__name__)

CLIENTS = (1, 8, 32, 64)
POLICIES = ("none", "continuous")


def tutor_workload(tutor, n: int, seed: int) -> list[WorkItem]:
    """Corrections of the serving lab's sentence mix, as the server asks for them: of `n` sentences,
    those that fit the model's window (the server refuses the others with `prompt_too_long`; the
    course's seed model has a 64-token window, so a few of the longest do not fit)."""
    from corrige.bench.workload import build_workload
    from corrige.tutor.token_codec import PromptTooLong

    eos = tutor.tokenizer.special.eos
    items = []
    for sentence in build_workload(n, seed=seed).sentences:
        try:
            prompt = tutor.build_prompt(sentence)
        except PromptTooLong:
            continue
        items.append(WorkItem(prompt, tutor.max_new_tokens_for(len(prompt)), "tutor", (eos,)))
    if len(items) < n:
        log.info("%d of %d sentences do not fit the model's window and are left out", n - len(items), n)
    return items


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def summarize(cells: list[Cell]) -> list[dict[str, Any]]:
    """One row per (policy, clients): medians of each side and of the per-round ratios on/off."""
    rows = []
    keys = sorted({(c.policy, c.clients) for c in cells}, key=lambda k: (POLICIES.index(k[0]), k[1]))
    for policy, clients in keys:
        off = [c for c in cells if (c.policy, c.clients) == (policy, clients) and not c.speculative_tokens]
        on = [c for c in cells if (c.policy, c.clients) == (policy, clients) and c.speculative_tokens]
        pairs = list(zip(off, on, strict=True))
        rows.append(
            {
                "policy": policy,
                "clients": clients,
                "rounds": len(pairs),
                "rps_off": statistics.median(c.requests_per_s for c in off),
                "rps_on": statistics.median(c.requests_per_s for c in on),
                "rps_ratio": statistics.median(_ratio(b.requests_per_s, a.requests_per_s) for a, b in pairs),
                "p50_ms_off": statistics.median(c.p50_ms for c in off),
                "p50_ms_on": statistics.median(c.p50_ms for c in on),
                "p50_ratio": statistics.median(_ratio(b.p50_ms, a.p50_ms) for a, b in pairs),
                "p95_ms_off": statistics.median(c.p95_ms for c in off),
                "p95_ms_on": statistics.median(c.p95_ms for c in on),
                "steps_per_request_off": statistics.median(c.steps_per_request for c in off),
                "steps_per_request_on": statistics.median(c.steps_per_request for c in on),
                "acceptance": statistics.median(c.acceptance for c in on),
            }
        )
    return rows


def _table(rows: list[dict[str, Any]], k: int, budget: int) -> Table:
    title = f"engine: speculative decoding off vs on (up to {k} guessed tokens a request, {budget} a step)"
    table = Table(title=title + ", real corrections")
    columns = ("policy", "clients", "req/s off", "req/s on", "on/off", "p50 off", "p50 on", "on/off", "p95 off")
    for name in (*columns, "p95 on", "steps/req off", "steps/req on", "kept"):
        table.add_column(name, justify="left" if name == "policy" else "right")
    for r in rows:
        table.add_row(
            r["policy"],
            str(r["clients"]),
            f"{r['rps_off']:.0f}",
            f"{r['rps_on']:.0f}",
            f"{r['rps_ratio']:.2f}x",
            f"{r['p50_ms_off']:.1f}",
            f"{r['p50_ms_on']:.1f}",
            f"{r['p50_ratio']:.2f}x",
            f"{r['p95_ms_off']:.1f}",
            f"{r['p95_ms_on']:.1f}",
            f"{r['steps_per_request_off']:.2f}",
            f"{r['steps_per_request_on']:.2f}",
            f"{r['acceptance']:.0%}",
        )
    return table


def run_speculative_bench(
    console: Console,
    grid: CellGrid,
    speculative_tokens: int = 8,
    budget: int = 32,
    rounds: int = 3,
    model: Path | None = None,
    output: Path | None = None,
) -> dict[str, Any]:
    """Run every (clients, policy) pair `rounds` times with guessing off then on; print and return the summary."""
    if not grid.within(("none", "static", "continuous")) or rounds < 1 or speculative_tokens < 1:
        raise ValueError(
            "policies must come from none, static, continuous; clients, rounds and speculative tokens be positive"
        )
    blas_limit = limit_blas_threads(1)

    from corrige.tutor.agent import Tutor

    tutor = Tutor.load(model)
    weights, drafter = tutor.weights, tutor.drafter
    workload = tutor_workload(tutor, 4096, grid.seed)
    machine = machine_info(blas_limit)
    console.print(f"[bold]machine[/] {machine}", soft_wrap=True)
    cells: list[Cell] = []
    with cells_progress(console) as bar:
        task = bar.add_task("speculative", total=len(grid.clients) * len(grid.policies) * rounds * 2)
        for n in grid.clients:
            runs = grid.requests or max(200, 8 * n)
            for policy in grid.policies:
                for _ in range(rounds):
                    for k in (0, speculative_tokens):
                        bar.update(task, description=f"{policy} x {n}, guesses {'on' if k else 'off'}")
                        cells.append(run_cell(weights, policy, n, workload, runs, grid.duration, 1, k, drafter, budget))
                        bar.advance(task)
    rows = summarize(cells)
    wide = console if console.is_terminal else Console(file=console.file, width=150)
    wide.print(_table(rows, speculative_tokens, budget))
    result = {
        "machine": machine,
        "model": str(model) if model else "bundled",
        "settings": {
            "speculative_tokens": speculative_tokens,
            "speculative_token_budget": budget,
            "rounds": rounds,
            "requests": grid.requests,
            "duration_s": grid.duration,
        },
        "summary": rows,
        "cells": [asdict(c) for c in cells],
    }
    if output:
        write_json(output, result, console)
    return result
