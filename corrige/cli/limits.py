"""`corrige bench limits`: what a rate-limit check costs, in memory against the buckets shared in
PostgreSQL, side by side in one run."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from corrige.cli import bench_app, console
from corrige.cli.options import JsonFlag, write_json


@bench_app.command("limits")
def bench_limits(
    database_url: Annotated[
        str | None,
        typer.Option(help="PostgreSQL to measure against; unset: a throwaway one (initdb + pg_ctl, Unix socket)."),
    ] = None,
    calls: Annotated[int, typer.Option(min=1, help="Timed takes per limiter and run.")] = 5000,
    warmup: Annotated[int, typer.Option(min=0, help="Untimed takes first (connection open, statement ready).")] = 200,
    runs: Annotated[int, typer.Option(min=1, help="Runs; the medians over runs are reported.")] = 3,
    output: JsonFlag = None,
) -> None:
    """The in-memory token bucket against the shared one in PostgreSQL: median and p95 of one
    take, as the rate-limit middleware makes them, each run measuring both sides."""
    from corrige.bench.limits import SIDES, run_limits_bench
    from corrige.bench.postgres import PostgresUnavailable

    try:
        report = run_limits_bench(database_url, calls=calls, warmup=warmup, runs=runs)
    except PostgresUnavailable as exc:
        console.print(f"[red]no PostgreSQL to measure against:[/] {exc}; or pass --database-url")
        raise typer.Exit(2) from None
    table = Table(
        title=f"one take: in memory vs PostgreSQL {report['server_version']} ({report['database']}), "
        f"{calls:,} takes per run, µs"
    )
    table.add_column("run")
    for side in ("in memory", "PostgreSQL"):
        table.add_column(f"{side} median", justify="right")
        table.add_column(f"{side} p95", justify="right")
    rows = [(str(i + 1), run) for i, run in enumerate(report["runs"])]
    for label, figures in [*rows, ("median of runs", report["median_of_runs"])]:
        table.add_row(label, *(f"{figures[side][key]:,.2f}" for side in SIDES for key in ("median_us", "p95_us")))
    console.print(table)
    load = report["load_average"]
    console.print(
        f"PostgreSQL / in memory (medians): {report['median_ratio']:,.1f}x; "
        f"load average {load['before']:.1f} → {load['after']:.1f} on {report['cpus']} CPUs"
    )
    if output is not None:
        write_json(output, report)
