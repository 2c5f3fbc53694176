"""`corrige budget`, `corrige traces report|audit` and `corrige bench traces`: the recorded traces
read back as a latency budget, a percentile report and an orphan audit.

All of them read the local trace store (`--store`, else CORRIGE_TRACE_STORE, else the server's
default path) and never write to it, except `bench traces`, which fills a temporary one.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from corrige.cli import DEFAULT_MODEL, app, bench_app, console

if TYPE_CHECKING:
    from corrige.obs.budget import Budget, BudgetReport
    from corrige.obs.report import PercentileReport
    from corrige.obs.store import SpanRecord, TraceStore

traces_app = typer.Typer(help="Recorded request traces: percentile report and orphan audit.", no_args_is_help=True)
app.add_typer(traces_app, name="traces")

StoreOption = Annotated[
    Path | None, typer.Option("--store", help="Trace store (default: CORRIGE_TRACE_STORE or the server's default).")
]
LastOption = Annotated[int, typer.Option("--last", min=1, help="Read the N most recent traces.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


# ---- shared ----


def _settings():
    from corrige.server.settings import Settings

    return Settings()


def _open_store(path: Path | None) -> TraceStore:
    from corrige.obs.store import TraceStore

    settings = _settings()
    path = path or settings.trace_store
    if not path.exists():
        console.print(f"[red]no trace store at {path}[/] (run the server with tracing on, or pass --store)")
        raise typer.Exit(1)
    return TraceStore(path, max_spans=settings.trace_store_max_spans)


def _load_budget(file: Path | None, profile: str | None, model: str | None) -> Budget:
    from corrige.obs.budget import BudgetError, load_budget

    settings = _settings()
    try:
        return load_budget(file or settings.budget_file, profile, Path(model).name if model else settings.served_model)
    except BudgetError as exc:
        console.print(f"[red]bad budget:[/] {exc}")
        raise typer.Exit(2) from exc


def compute_budget(store: TraceStore, budget: Budget, last: int | None) -> BudgetReport:
    """What `corrige budget` computes: read the last traces, then the budget report."""
    from corrige.obs.budget import budget_report
    from corrige.obs.report import TraceTable

    return budget_report(TraceTable.from_traces(store.traces(last)), budget)


def compute_report(store: TraceStore, last: int | None) -> PercentileReport:
    """What `corrige traces report` computes: read the last traces, then the percentiles."""
    from corrige.obs.report import TraceTable, percentile_report

    return percentile_report(TraceTable.from_traces(store.traces(last)))


def _ms(value: float | None) -> str:
    """Milliseconds with the precision their size deserves (0.042, 1.93, 11.6, 3300)."""
    if value is None or not math.isfinite(value):
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def _burn(value: float) -> str:
    from corrige.obs.budget import BURN_LIMIT

    if not math.isfinite(value):
        return "-"
    colour = "red" if value > BURN_LIMIT else "yellow" if value > 1.0 else "green"
    return f"[{colour}]{value:.2f}x[/]" if value >= 0.1 else f"[{colour}]{value:.2g}x[/]"


def _pct(value: float) -> str:
    return "-" if not math.isfinite(value) else f"{100 * value:.1f}%"


def _print_instances(instances: dict[str, int]) -> None:
    """Which servers the traces came from (replicas writing one store), when more than one."""
    if len(instances) > 1:
        each = ", ".join(f"{name} {count}" for name, count in instances.items())
        console.print(f"traces from {len(instances)} servers: {each}")


def _print_json(data: dict) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))


# ---- corrige budget ----


@app.command()
def budget(
    store: StoreOption = None,
    profile: Annotated[
        str | None, typer.Option(help="Budget profile (default: the one the budget file gives the model).")
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            help="The model that served the traces, a directory or its name.  "
            f"[default: {DEFAULT_MODEL}, or CORRIGE_MODEL_DIR when set]"
        ),
    ] = None,
    file: Annotated[
        Path | None, typer.Option(help="Budget TOML (default: CORRIGE_BUDGET_FILE or the bundled one).")
    ] = None,
    last: LastOption = 1000,
    as_json: JsonOption = False,
) -> None:
    """The latency budget against recorded traces: per stage mean/p50/p95, burn rate, share; the latency formula."""
    chosen = _load_budget(file, profile, model)
    _show(store, lambda trace_store: compute_budget(trace_store, chosen, last), print_budget, as_json)


def _show(store: Path | None, compute, print_tables, as_json: bool) -> None:
    """Compute a report from the store, then print it as JSON or as tables."""
    trace_store = _open_store(store)
    try:
        report = compute(trace_store)
    finally:
        trace_store.close()
    if as_json:
        _print_json(report.to_dict())
    elif not report.traces:
        console.print(f"[yellow]no complete traces in {trace_store.path}[/]")
    else:
        print_tables(report)


def _burn_cell(stage) -> str:
    """The burn, `*` when sustained; grey with its n when too few samples to judge it."""
    if stage.verdict == "too_few":
        return f"[grey50]{_burn(stage.burn)} too few samples (n={stage.dist.n})[/]"
    return _burn(stage.burn) + ("[red]*[/]" if stage.sustained else " ")


def print_budget(report: BudgetReport) -> None:
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    from corrige.obs.budget import BURN_LIMIT, MIN_SAMPLES

    wide = console.width >= 140  # the span names only fit a wide terminal
    why = escape(report.why)  # it may name a [models.<name>] table: text, not markup
    console.print(f"profile [bold]{report.profile}[/] for the {report.model or 'unnamed'} model: {why}")
    _print_instances(report.instances)
    table = Table(
        title=f"Latency budget [bold]{report.profile}[/] over the last {report.traces} traces (ms)",
        caption=f"burn = mean / budget; * sustained: burn > {BURN_LIMIT}x over the window and most of its"
        f" sub-windows; grey: too few samples (under {MIN_SAMPLES}), not judged",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("stage", min_width=16)
    if wide:
        table.add_column("spans")
    for column in ("budget", "n", "mean", "p50", "p95", "burn", "share"):
        table.add_column(column, justify="right", no_wrap=True)
    for stage in (*report.stages, report.total):
        cells = [
            _ms(stage.allocation_ms),
            str(stage.dist.n),
            _ms(stage.dist.mean_ms),
            _ms(stage.dist.p50_ms),
            _ms(stage.dist.p95_ms),
            _burn_cell(stage),
            _pct(stage.share),
        ]
        name = f"[bold]{stage.name}[/]" if stage is report.total else stage.name
        table.add_row(name, *([", ".join(stage.spans)] if wide else []), *cells, end_section=stage is report.stages[-1])
    console.print(table)

    formula = report.formula
    terms = {t.name: t.ms for t in formula.terms}
    console.print("t_total = t_parse + t_tokenize + t_prefill + K·t_decode_step + t_detok + t_serialize")
    console.print(
        f"        = {_ms(terms['t_parse'])} + {_ms(terms['t_tokenize'])} + {_ms(terms['t_prefill'])}"
        f" + {formula.k:.1f} × {_ms(formula.t_decode_step_ms)} + {_ms(terms['t_detok + t_serialize'])}"
        f" = [bold]{_ms(formula.predicted_ms)} ms[/]"
    )
    console.print(
        f"measured mean end to end {_ms(formula.measured_ms)} ms; {_ms(formula.other_ms)} ms outside the formula"
        " (guards, retrieval, cost, queueing, HTTP outside the stages)"
    )
    dominant = formula.dominant
    if dominant is not None and formula.predicted_ms > 0:
        console.print(
            f"dominant term: [bold]{dominant.name}[/] = {_ms(dominant.ms)} ms,"
            f" {100 * dominant.ms / formula.predicted_ms:.0f}% of the formula"
        )
    if report.too_few:
        few = ", ".join(f"{s.name} (n={s.dist.n})" for s in report.too_few)
        console.print(f"[grey50]too few samples to judge (under {MIN_SAMPLES} traces):[/] {few}")
    flagged = report.flagged
    if flagged:
        console.print(f"[red]sustained burn > {BURN_LIMIT}x:[/] {', '.join(flagged)}")
    else:
        console.print(f"[green]no stage with a sustained burn > {BURN_LIMIT}x[/]")


# ---- corrige traces report | audit ----


@traces_app.command("report")
def traces_report(store: StoreOption = None, last: LastOption = 1000, as_json: JsonOption = False) -> None:
    """End-to-end p50/p95/p99 from whole traces vs the naive sum of stage p95s; bytes in/out per stage."""
    _show(store, lambda trace_store: compute_report(trace_store, last), print_report, as_json)


def print_report(report: PercentileReport) -> None:
    from rich.table import Table

    table = Table(
        title=f"Percentiles over the last {report.traces} traces"
        + (f" ({report.failed} failed)" if report.failed else ""),
        caption="http.request:self = root time no child span covers (queueing, middleware, response write)",
    )
    for column in ("span", "n", "mean ms", "p50 ms", "p95 ms", "p99 ms"):
        table.add_column(column, justify="left" if column == "span" else "right")
    e2e = report.e2e
    table.add_row(
        f"[bold]{e2e.name} (end to end)[/]",
        str(e2e.n),
        _ms(e2e.mean_ms),
        _ms(e2e.p50_ms),
        _ms(e2e.p95_ms),
        _ms(e2e.p99_ms),
        end_section=True,
    )
    for stage in report.stages:
        table.add_row(
            stage.name, str(stage.n), _ms(stage.mean_ms), _ms(stage.p50_ms), _ms(stage.p95_ms), _ms(stage.p99_ms)
        )
    console.print(table)
    _print_instances(report.instances)
    console.print(
        f"true end-to-end p95 (whole traces): [bold]{_ms(e2e.p95_ms)} ms[/];"
        f" naive sum of stage p95s: {_ms(report.naive_p95_sum_ms)} ms;"
        f" delta {_ms(report.delta_ms)} ms ({report.delta_pct:+.1f}%)"
    )
    if report.incomplete:
        console.print(
            f"[yellow]{report.incomplete} traces without their http.request root (see corrige traces audit)[/]"
        )

    journey = Table(title="Journey of the bytes (mean per span)")
    for column in ("span", "n", "bytes in", "bytes out"):
        journey.add_column(column, justify="left" if column == "span" else "right")
    for row in report.bytes:
        journey.add_row(
            row.name,
            str(row.n),
            "-" if row.mean_in is None else f"{row.mean_in:,.0f}",
            "-" if row.mean_out is None else f"{row.mean_out:,.0f}",
        )
    console.print(journey)


@traces_app.command("audit")
def traces_audit(
    store: StoreOption = None,
    show: Annotated[int, typer.Option(min=0, help="List this many orphans.")] = 10,
    as_json: JsonOption = False,
) -> None:
    """Orphan spans: not an entry span and no parent in their trace (lost context). Exit code 1 when any."""
    trace_store = _open_store(store)
    try:
        total = trace_store.count()
        count = trace_store.count_orphans()
        orphans = trace_store.orphans(limit=show)
    finally:
        trace_store.close()
    listed = [
        {
            "trace_id": s.trace_id,
            "span_id": s.span_id,
            "name": s.name,
            "parent_id": s.parent_id,
            "request_id": s.request_id,
            "why": "no parent" if s.parent_id is None else "parent not in the trace",
        }
        for s in orphans
    ]
    if as_json:
        _print_json({"spans": total, "orphans": count, "examples": listed})
    elif count:
        from rich.table import Table

        console.print(f"[red]{count} orphan span{'' if count == 1 else 's'}[/] out of {total} in {trace_store.path}")
        table = Table("trace", "span", "name", "parent", "request id", "why")
        for row in listed:
            table.add_row(
                row["trace_id"][:16],
                row["span_id"],
                row["name"],
                row["parent_id"] or "-",
                row["request_id"] or "-",
                row["why"],
            )
        console.print(table)
    else:
        console.print(f"[green]no orphan spans[/] out of {total} in {trace_store.path}")
    if count:
        raise typer.Exit(1)


# ---- synthetic traces (benchmark and tests) ----


def synthetic_spans(
    n_traces: int, seed: int = 0, start_ns: int = 1_700_000_000_000_000_000, gap_ms: float = 20.0
) -> list[SpanRecord]:
    """`n_traces` request traces shaped like the bundled tutor's (the span contract's nine layers, stage
    times around docs/BENCHMARKS.md's), one every `gap_ms`: a root and its eight stage spans, with
    the contract's attributes. One request in a hundred is refused by the guards (no model spans)."""
    from corrige.obs import spans as names
    from corrige.obs.store import SpanRecord

    rng = random.Random(seed)
    records: list[SpanRecord] = []

    def ms(typical: float, spread: float = 0.25) -> int:
        return int(typical * rng.lognormvariate(0.0, spread) * 1e6)

    for i in range(n_traces):
        trace_id = f"{rng.getrandbits(128):032x}"
        root_id = f"{rng.getrandbits(64):016x}"
        request_id = f"bench-{i:06d}"
        sentence_bytes = rng.randint(20, 80)
        prompt_tokens = rng.randint(8, 24)
        output_tokens = rng.randint(8, 30)
        refused = rng.random() < 0.01
        start = start_ns + int(i * gap_ms * 1e6)
        cursor = start + ms(0.15)
        stages = [
            (names.VALIDATE, ms(0.2), {names.BYTES_IN: sentence_bytes + 20, names.BYTES_OUT: sentence_bytes}),
            (
                names.SECURITY,
                ms(0.03),
                {
                    names.BYTES_IN: sentence_bytes,
                    names.BYTES_OUT: 0 if refused else sentence_bytes,
                    names.VERDICT: "refuse" if refused else "pass",
                    **({names.REASON: "rate_limited"} if refused else {}),
                },
            ),
        ]
        if not refused:
            steps = output_tokens - 1
            stages += [
                (names.TOKENIZE, ms(0.1), {names.BYTES_IN: sentence_bytes, names.BYTES_OUT: 8 * prompt_tokens}),
                (names.RETRIEVE, ms(0.3), {names.BYTES_IN: sentence_bytes, names.BYTES_OUT: 2000}),
                (
                    names.PREFILL,
                    ms(1.9, 0.3),
                    {
                        names.BYTES_IN: 8 * prompt_tokens,
                        names.BYTES_OUT: 8,
                        names.PROMPT_TOKENS: prompt_tokens,
                        names.BATCH_SIZE: 1,
                        names.KV_BYTES: 4096 * prompt_tokens,
                    },
                ),
                (
                    names.DECODE,
                    int(steps * ms(0.68, 0.15)),
                    {
                        names.BYTES_IN: 8,
                        names.BYTES_OUT: 8 * output_tokens,
                        names.STEPS: steps,
                        names.OUTPUT_TOKENS: output_tokens,
                        names.BATCH_SIZE: 1.0,
                    },
                ),
                (names.FORMAT, ms(0.5), {names.BYTES_IN: 8 * output_tokens, names.BYTES_OUT: 400}),
                (
                    names.COST,
                    ms(0.05),
                    {names.BYTES_IN: 400, names.BYTES_OUT: 0, names.COST_TOKENS: prompt_tokens + output_tokens},
                ),
            ]
        for name, duration, attributes in stages:
            if name == names.PREFILL:
                cursor += ms(0.15, 0.8)  # waiting for a KV slot: covered by no span
            records.append(
                SpanRecord(
                    trace_id,
                    f"{rng.getrandbits(64):016x}",
                    root_id,
                    name,
                    cursor,
                    cursor + duration,
                    request_id,
                    "OK",
                    {names.REQUEST_ID: request_id, **attributes},
                )
            )
            cursor += duration
        end = cursor + ms(0.1)
        records.append(
            SpanRecord(
                trace_id,
                root_id,
                None,
                names.ROOT,
                start,
                end,
                request_id,
                "ERROR" if refused else "OK",
                {
                    names.REQUEST_ID: request_id,
                    names.HTTP_STATUS: 429 if refused else 200,
                    names.BYTES_IN: 180 + sentence_bytes,
                    names.BYTES_OUT: 160 if refused else 600,
                },
            )
        )
    return records


# ---- corrige bench traces ----


@bench_app.command("traces")
def bench_traces(
    traces: Annotated[
        int, typer.Option(min=1, help="Synthetic traces in the temporary store (~9 spans each).")
    ] = 10_000,
    repeats: Annotated[int, typer.Option(min=1, help="Timed runs of each computation (medians are reported).")] = 5,
    cli: Annotated[bool, typer.Option("--cli/--no-cli", help="Also time the real commands as subprocesses.")] = True,
    output: Annotated[Path | None, typer.Option(help="Write the results as JSON here.")] = None,
) -> None:
    """`corrige budget` and `corrige traces report` on N recorded traces: read + compute, and the whole command."""
    import os
    import statistics
    import subprocess
    import sys
    import tempfile
    import time

    from rich.table import Table

    from corrige.obs.budget import load_budget
    from corrige.obs.store import TraceStore

    chosen = load_budget()
    results: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="corrige-bench-traces-") as tmp:
        path = Path(tmp) / "traces.sqlite"
        records = synthetic_spans(traces)
        store = TraceStore(path, max_spans=max(200_000, 2 * len(records)))
        started = time.perf_counter()
        for i in range(0, len(records), 5_000):
            store.write(records[i : i + 5_000])
        fill_s = time.perf_counter() - started
        cases = {
            "budget: read + compute": lambda: compute_budget(store, chosen, traces),
            "traces report: read + compute": lambda: compute_report(store, traces),
            "traces audit: orphans": lambda: (store.count_orphans(), store.orphans(limit=10)),
        }
        for _ in range(repeats):  # interleaved, so a busy moment on the machine hits every case alike
            for name, run in cases.items():
                started = time.perf_counter()
                run()
                results.setdefault(name, []).append(time.perf_counter() - started)
        store.close()
        if cli:
            commands = {
                "corrige budget (whole process)": ["budget", "--store", str(path), "--last", str(traces)],
                "corrige traces report (whole process)": [
                    "traces",
                    "report",
                    "--store",
                    str(path),
                    "--last",
                    str(traces),
                ],
            }
            env = {k: v for k, v in os.environ.items() if k != "CORRIGE_BUDGET_FILE"}
            for _ in range(repeats):
                for name, args in commands.items():
                    started = time.perf_counter()
                    subprocess.run(
                        [sys.executable, "-m", "corrige.cli", *args], check=True, capture_output=True, env=env
                    )
                    results.setdefault(name, []).append(time.perf_counter() - started)

    table = Table(
        title=f"{traces} synthetic traces ({len(records)} spans), {repeats} runs each",
        caption=f"filling the store took {fill_s:.2f} s; target: each command <= 5 s",
    )
    for column in ("what", "median s", "min s", "max s"):
        table.add_column(column, justify="left" if column == "what" else "right")
    for name, times in results.items():
        table.add_row(name, f"{statistics.median(times):.3f}", f"{min(times):.3f}", f"{max(times):.3f}")
    console.print(table)
    load = os.getloadavg()
    console.print(f"{os.cpu_count()} CPUs; load average {load[0]:.2f}")
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
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
        output.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        console.print(f"[green]wrote[/] {output}")
