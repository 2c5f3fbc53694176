"""`corrige bench traces`: `corrige budget` and `corrige traces report` timed on a temporary store
filled with synthetic traces (`synthetic_spans`, which the tests use as well)."""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from corrige.cli import bench_app, console
from corrige.cli.obs import compute_budget, compute_report
from corrige.cli.options import JsonOutput, write_json

if TYPE_CHECKING:
    from corrige.obs.store import SpanRecord, TraceStore

START_NS = 1_700_000_000_000_000_000


def synthetic_spans(n_traces: int, seed: int = 0, start_ns: int = START_NS, gap_ms: float = 20.0) -> list[SpanRecord]:
    """`n_traces` request traces shaped like the bundled tutor's (the span contract's nine layers, stage
    times around docs/BENCHMARKS.md's), one every `gap_ms`: a root and its eight stage spans, with
    the contract's attributes. One request in a hundred is refused by the guards (no model spans)."""
    rng = random.Random(seed)
    records: list[SpanRecord] = []
    for i in range(n_traces):
        records += _trace(rng, f"bench-{i:06d}", start_ns + int(i * gap_ms * 1e6))
    return records


def _trace(rng: random.Random, request_id: str, start: int) -> list[SpanRecord]:
    """One request's spans: its stages one after the other, then the root around them."""
    from corrige.obs import spans as names
    from corrige.obs.store import SpanRecord

    def ms(typical: float, spread: float = 0.25) -> int:
        return int(typical * rng.lognormvariate(0.0, spread) * 1e6)

    trace_id = f"{rng.getrandbits(128):032x}"
    root_id = f"{rng.getrandbits(64):016x}"
    sentence_bytes = rng.randint(20, 80)
    prompt_tokens = rng.randint(8, 24)
    output_tokens = rng.randint(8, 30)
    refused = rng.random() < 0.01
    cursor = start + ms(0.15)
    records = []
    for name, duration, attributes in _stages(ms, refused, sentence_bytes, prompt_tokens, output_tokens):
        if name == names.PREFILL:
            cursor += ms(0.15, 0.8)  # waiting for a KV slot: covered by no span
        span_id = f"{rng.getrandbits(64):016x}"
        attributes = {names.REQUEST_ID: request_id, **attributes}
        records.append(
            SpanRecord(trace_id, span_id, root_id, name, cursor, cursor + duration, request_id, "OK", attributes)
        )
        cursor += duration
    end = cursor + ms(0.1)
    root_attributes = {
        names.REQUEST_ID: request_id,
        names.HTTP_STATUS: 429 if refused else 200,
        names.BYTES_IN: 180 + sentence_bytes,
        names.BYTES_OUT: 160 if refused else 600,
    }
    status = "ERROR" if refused else "OK"
    records.append(SpanRecord(trace_id, root_id, None, names.ROOT, start, end, request_id, status, root_attributes))
    return records


def _stages(
    ms: Callable[..., int], refused: bool, sentence_bytes: int, prompt_tokens: int, output_tokens: int
) -> list[tuple[str, int, dict[str, Any]]]:
    """(name, duration ns, attributes) of each stage span; a refused request stops at the guards."""
    from corrige.obs import spans as names

    security: dict[str, Any] = {
        names.BYTES_IN: sentence_bytes,
        names.BYTES_OUT: 0 if refused else sentence_bytes,
        names.VERDICT: "refuse" if refused else "pass",
        **({names.REASON: "rate_limited"} if refused else {}),
    }
    stages: list[tuple[str, int, dict[str, Any]]] = [
        (names.VALIDATE, ms(0.2), {names.BYTES_IN: sentence_bytes + 20, names.BYTES_OUT: sentence_bytes}),
        (names.SECURITY, ms(0.03), security),
    ]
    if refused:
        return stages
    steps = output_tokens - 1
    prefill = {
        names.BYTES_IN: 8 * prompt_tokens,
        names.BYTES_OUT: 8,
        names.PROMPT_TOKENS: prompt_tokens,
        names.BATCH_SIZE: 1,
        names.KV_BYTES: 4096 * prompt_tokens,
    }
    decode = {
        names.BYTES_IN: 8,
        names.BYTES_OUT: 8 * output_tokens,
        names.STEPS: steps,
        names.OUTPUT_TOKENS: output_tokens,
        names.BATCH_SIZE: 1.0,
    }
    cost = {names.BYTES_IN: 400, names.BYTES_OUT: 0, names.COST_TOKENS: prompt_tokens + output_tokens}
    return [
        *stages,
        (names.TOKENIZE, ms(0.1), {names.BYTES_IN: sentence_bytes, names.BYTES_OUT: 8 * prompt_tokens}),
        (names.RETRIEVE, ms(0.3), {names.BYTES_IN: sentence_bytes, names.BYTES_OUT: 2000}),
        (names.PREFILL, ms(1.9, 0.3), prefill),
        (names.DECODE, int(steps * ms(0.68, 0.15)), decode),
        (names.FORMAT, ms(0.5), {names.BYTES_IN: 8 * output_tokens, names.BYTES_OUT: 400}),
        (names.COST, ms(0.05), cost),
    ]


@bench_app.command("traces")
def bench_traces(
    traces: Annotated[
        int, typer.Option(min=1, help="Synthetic traces in the temporary store (~9 spans each).")
    ] = 10_000,
    repeats: Annotated[int, typer.Option(min=1, help="Timed runs of each computation (medians are reported).")] = 5,
    cli: Annotated[bool, typer.Option("--cli/--no-cli", help="Also time the real commands as subprocesses.")] = True,
    output: JsonOutput = None,
) -> None:
    """`corrige budget` and `corrige traces report` on N recorded traces: read + compute, and the whole command."""
    import os
    import tempfile

    from corrige.obs.budget import load_budget
    from corrige.obs.store import TraceStore

    chosen = load_budget()
    results: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="corrige-bench-traces-") as tmp:
        path = Path(tmp) / "traces.sqlite"
        records = synthetic_spans(traces)
        store = TraceStore(path, max_spans=max(200_000, 2 * len(records)))
        fill_s = _fill(store, records)
        cases = {
            "budget: read + compute": lambda: compute_budget(store, chosen, traces),
            "traces report: read + compute": lambda: compute_report(store, traces),
            "traces audit: orphans": lambda: (store.count_orphans(), store.orphans(limit=10)),
        }
        _time_interleaved(cases, repeats, results)
        store.close()
        if cli:
            _time_commands(path, traces, repeats, results)
    _print(results, traces, len(records), repeats, fill_s)
    if output:
        load = os.getloadavg()
        summary = {
            "traces": traces,
            "spans": len(records),
            "repeats": repeats,
            "fill_s": round(fill_s, 3),
            "median_s": {name: round(statistics.median(times), 4) for name, times in results.items()},
            "runs_s": {name: [round(t, 4) for t in times] for name, times in results.items()},
            "cpus": os.cpu_count(),
            "loadavg": [round(x, 2) for x in load],
            "command": f"corrige bench traces --traces {traces} --repeats {repeats}" + ("" if cli else " --no-cli"),
        }
        write_json(output, summary)


def _fill(store: TraceStore, records: list[SpanRecord]) -> float:
    """Write the records in batches of 5,000, as the trace writer does; the seconds it took."""
    started = time.perf_counter()
    for i in range(0, len(records), 5_000):
        store.write(records[i : i + 5_000])
    return time.perf_counter() - started


def _time_interleaved(cases: Mapping[str, Callable[[], Any]], repeats: int, results: dict[str, list[float]]) -> None:
    """Each case `repeats` times, interleaved, so a busy moment on the machine hits every case alike."""
    for _ in range(repeats):
        for name, run in cases.items():
            started = time.perf_counter()
            run()
            results.setdefault(name, []).append(time.perf_counter() - started)


def _time_commands(path: Path, traces: int, repeats: int, results: dict[str, list[float]]) -> None:
    """The real commands as subprocesses, start-up included (without a budget file from the environment)."""
    import os

    commands = {
        "corrige budget (whole process)": ["budget", "--store", str(path), "--last", str(traces)],
        "corrige traces report (whole process)": ["traces", "report", "--store", str(path), "--last", str(traces)],
    }
    env = {k: v for k, v in os.environ.items() if k != "CORRIGE_BUDGET_FILE"}
    cases = {name: partial(_run_command, args, env) for name, args in commands.items()}
    _time_interleaved(cases, repeats, results)


def _run_command(args: list[str], env: dict[str, str]) -> None:
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "corrige.cli", *args], check=True, capture_output=True, env=env)


def _print(results: dict[str, list[float]], traces: int, spans: int, repeats: int, fill_s: float) -> None:
    import os

    from rich.table import Table

    table = Table(
        title=f"{traces} synthetic traces ({spans} spans), {repeats} runs each",
        caption=f"filling the store took {fill_s:.2f} s; target: each command <= 5 s",
    )
    for column in ("what", "median s", "min s", "max s"):
        table.add_column(column, justify="left" if column == "what" else "right")
    for name, times in results.items():
        table.add_row(name, f"{statistics.median(times):.3f}", f"{min(times):.3f}", f"{max(times):.3f}")
    console.print(table)
    load = os.getloadavg()
    console.print(f"{os.cpu_count()} CPUs; load average {load[0]:.2f}")
