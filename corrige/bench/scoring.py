"""`corrige bench scoring`: scoring requests with prefix reuse off and on.

A language model that judges candidate corrections scores, for each sentence, the sentence itself
and every one-word change its confusion sets propose (`corrige.tutor.candidates`): thirty prompts
that share their start up to the changed word. The engine's scoring requests
(`SamplingParams.prompt_logprobs`) return each prompt token's log-probability; with prefix reuse
(`EngineConfig.prefix_reuse`) a candidate starts from the positions the sentence left in its slot.
The engine runs in a process of its own (`EngineProcess`), as `corrige serve` runs it.

Workload: learner sentences of the serving lab's mix, each with up to `candidates` of its own
candidates (drawn at random when it has more), as `<bos>` + the text, the way a language model
reads a sentence. `clients` sentences are in flight at once; each client sends a sentence and all
its candidates together and waits for every score. Rounds alternate reuse off and on (A, B, A, B,
...) on fresh engines, so a slow spell hits both; the table gives each side's medians and the
median of the per-round ratios, and how far apart the two sides' scores are (they must agree).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
import statistics
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

Group = list[list[int]]  # a sentence's prompt, then its candidates'


@dataclass(frozen=True)
class ScoringRun:
    reuse: bool
    clients: int
    sentences: int
    prompts: int
    wall_s: float
    prompts_per_s: float
    sentences_per_s: float
    p50_sentence_ms: float
    p95_sentence_ms: float
    prompt_tokens: int  # tokens of every prompt scored
    computed_tokens: int  # ... that went through the model (the rest were reused)


def scoring_workload(tutor: Any, n: int, candidates_per_sentence: int, seed: int) -> list[Group]:
    """`n` learner sentences, each as its prompt and its candidates' (module docstring); candidates
    that do not fit the model's window are left out."""
    from corrige.bench.workload import build_workload
    from corrige.tutor.candidates import ConfusionSets, candidate_edit, candidates
    from corrige.tutor.edits import apply_edits, tokenize

    sets = ConfusionSets.load()
    tokenizer = tutor.tokenizer
    bos, limit = tokenizer.special.bos, tutor.n_ctx - 1  # room for the one token a scoring request samples
    rng = random.Random(seed)
    groups = []
    for sentence in build_workload(n, seed=seed).sentences:
        tokens = tokenize(sentence)
        found = candidates(tokens, sets, known=str.isalpha)
        found = rng.sample(found, candidates_per_sentence) if len(found) > candidates_per_sentence else found
        texts = [sentence, *(apply_edits(sentence, [candidate_edit(tokens, sentence, c)]) for c in found)]
        group = [p for p in ([bos, *tokenizer.encode(t)] for t in texts) if len(p) <= limit]
        if len(group) > 1:
            groups.append(group)
    return groups


async def _serve(
    model: Path | None, cfg: Any, reuse: bool, groups: list[Group], clients: int
) -> tuple[ScoringRun, list[float]]:
    """Score every group with `clients` groups in flight on an engine process, as the server runs
    it (the clients' event loop and the engine do not share an interpreter lock); returns the run
    and each prompt's total score."""
    from corrige.engine import EngineConfig, SamplingParams
    from corrige.engine.config import Policy
    from corrige.engine.process import EngineProcess
    from corrige.tutor.bundled import engine_parts

    params = SamplingParams(max_tokens=1, prompt_logprobs=True)
    latencies: list[float] = []
    totals: list[float] = [0.0] * sum(map(len, groups))
    offsets = [0]
    for group in groups:
        offsets.append(offsets[-1] + len(group))
    reused = 0
    build = functools.partial(engine_parts, model)
    config = EngineConfig(policy=Policy.CONTINUOUS, prefix_reuse=reuse)
    engine = EngineProcess(build, cfg, config, loop=asyncio.get_running_loop())
    try:
        await engine.generate(groups[0][0], SamplingParams(max_tokens=1))  # the child is up and warm
        queue = iter(range(len(groups)))

        async def client() -> None:
            nonlocal reused
            for g in queue:
                start = time.perf_counter()
                outputs = await asyncio.gather(*(engine.generate(p, params) for p in groups[g]))
                latencies.append(time.perf_counter() - start)
                for k, output in enumerate(outputs):
                    totals[offsets[g] + k] = sum(output.prompt_logprobs or ())
                    reused += output.stats.num_reused_tokens

        start = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        wall = time.perf_counter() - start
    finally:
        await asyncio.to_thread(engine.close)
    prompts = offsets[-1]
    tokens = sum(len(p) for group in groups for p in group)
    latencies.sort()
    run = ScoringRun(
        reuse=reuse,
        clients=clients,
        sentences=len(groups),
        prompts=prompts,
        wall_s=wall,
        prompts_per_s=prompts / wall,
        sentences_per_s=len(groups) / wall,
        p50_sentence_ms=1000 * statistics.median(latencies),
        p95_sentence_ms=1000 * latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))],
        prompt_tokens=tokens,
        computed_tokens=tokens - reused,
    )
    return run, totals


def summarize(runs: list[ScoringRun], gaps: dict[int, float]) -> list[dict[str, Any]]:
    """One row per client count: medians of each side, the median per-round ratio on/off."""
    rows = []
    for clients in sorted({r.clients for r in runs}):
        off = [r for r in runs if r.clients == clients and not r.reuse]
        on = [r for r in runs if r.clients == clients and r.reuse]
        pairs = list(zip(off, on, strict=True))
        rows.append(
            {
                "clients": clients,
                "prompts_per_s_off": statistics.median(r.prompts_per_s for r in off),
                "prompts_per_s_on": statistics.median(r.prompts_per_s for r in on),
                "throughput_ratio": statistics.median(b.prompts_per_s / a.prompts_per_s for a, b in pairs),
                "p50_sentence_ms_off": statistics.median(r.p50_sentence_ms for r in off),
                "p50_sentence_ms_on": statistics.median(r.p50_sentence_ms for r in on),
                "p50_ratio": statistics.median(b.p50_sentence_ms / a.p50_sentence_ms for a, b in pairs),
                "computed_share_on": on[0].computed_tokens / on[0].prompt_tokens,
                "max_score_gap": gaps[clients],
            }
        )
    return rows


def _table(rows: list[dict[str, Any]], groups: list[Group]) -> Table:
    per = statistics.mean(len(g) for g in groups)
    title = f"Scoring {len(groups)} sentences, {per:.1f} prompts each (a sentence and its candidates)"
    title += ", prefix reuse off vs on"
    table = Table(title=title)
    for name in (
        "clients",
        "prompts/s off",
        "prompts/s on",
        "on/off",
        "p50 sentence ms off",
        "p50 on",
        "on/off",
        "tokens computed (on)",
        "max |score gap|",
    ):
        table.add_column(name, justify="right")
    for r in rows:
        table.add_row(
            str(r["clients"]),
            f"{r['prompts_per_s_off']:.0f}",
            f"{r['prompts_per_s_on']:.0f}",
            f"{r['throughput_ratio']:.2f}x",
            f"{r['p50_sentence_ms_off']:.1f}",
            f"{r['p50_sentence_ms_on']:.1f}",
            f"{r['p50_ratio']:.2f}x",
            f"{r['computed_share_on']:.0%}",
            f"{r['max_score_gap']:.1e}",
        )
    return table


def run_scoring_bench(
    console: Console,
    clients: tuple[int, ...] = (1, 8),
    sentences: int = 200,
    candidates_per_sentence: int = 30,
    rounds: int = 3,
    model: Path | None = None,
    seed: int = 0,
    output: Path | None = None,
) -> dict[str, Any]:
    """Run each client count `rounds` times with reuse off then on; print and return the summary."""
    if rounds < 1 or sentences < 1 or candidates_per_sentence < 1 or not clients or min(clients) < 1:
        raise ValueError("clients, sentences, candidates and rounds must be positive")
    blas_limit = limit_blas_threads(1)

    from corrige.tutor.agent import Tutor

    tutor = Tutor.load(model)
    groups = scoring_workload(tutor, sentences, candidates_per_sentence, seed)
    machine = machine_info(blas_limit)
    console.print(f"[bold]machine[/] {machine}", soft_wrap=True)
    runs: list[ScoringRun] = []
    gaps: dict[int, float] = {}
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("scoring", total=len(clients) * rounds * 2)
        for n in clients:
            gaps[n] = 0.0
            for _ in range(rounds):
                totals = []
                for reuse in (False, True):
                    bar.update(task, description=f"{n} client(s), reuse {'on' if reuse else 'off'}")
                    run, scores = asyncio.run(_serve(model, tutor.cfg, reuse, groups, n))
                    runs.append(run)
                    totals.append(scores)
                    bar.advance(task)
                gaps[n] = max(gaps[n], max(abs(a - b) for a, b in zip(*totals, strict=True)))
    rows = summarize(runs, gaps)
    wide = console if console.is_terminal or console.record else Console(file=console.file, width=160)
    wide.print(_table(rows, groups))
    result = {
        "machine": machine,
        "model": str(model) if model else "bundled",
        "settings": {
            "sentences": len(groups),
            "candidates_per_sentence": candidates_per_sentence,
            "prompts": sum(map(len, groups)),
            "rounds": rounds,
            "seed": seed,
        },
        "summary": rows,
        "runs": [asdict(r) for r in runs],
    }
    if output:
        write_json(output, result, console)
    return result
