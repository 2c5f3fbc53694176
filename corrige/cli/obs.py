"""`corrige budget` and `corrige traces report|audit`: the recorded traces read back as a latency
budget, a percentile report and an orphan audit (`corrige bench traces`, which times them, is
in `traces_bench.py`).

All of them read the local trace store (`--store`, else CORRIGE_TRACE_STORE, else the server's
default path) and never write to it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from corrige.cli import DEFAULT_MODEL, app, console

if TYPE_CHECKING:
    from corrige.obs.budget import Budget, BudgetReport
    from corrige.obs.report import PercentileReport
    from corrige.obs.store import TraceStore

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
    budget = report.budget
    why = escape(budget.why)  # it may name a [models.<name>] table: text, not markup
    console.print(f"profile [bold]{budget.profile}[/] for the {budget.model or 'unnamed'} model: {why}")
    _print_instances(report.instances)
    table = Table(
        title=f"Latency budget [bold]{budget.profile}[/] over the last {report.traces} traces (ms)",
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
