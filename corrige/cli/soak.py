"""`corrige bench soak`: a real server under steady load for a long while; memory, descriptors, slots, store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from corrige.cli import bench_app, console
from corrige.cli.options import JsonOutput, ModelOption, write_json


def _mb(value: float | None) -> str:
    return "–" if value is None else f"{value / 2**20:.1f}"


def print_soak(result: dict[str, Any]) -> None:
    """The soak's tables: per process, then each check with its verdict."""
    from rich.table import Table

    req = result["requests"]
    table = Table(
        "process", "pid", "RSS after warm-up MB", "RSS at end MB", "growth", "slope MB/h",
        "fds idle start", "fds idle end", "fds under load",
        title=f"corrige bench soak: {result['run_s'] / 60:.1f} min, {result['config']['clients']} clients, "
        f"warm-up {result['warmup_s']:.0f} s",
    )  # fmt: skip
    for role, proc in result["processes"].items():
        rss, fds = proc["rss"] or {}, proc["fds"]
        growth = f"{rss['growth']:+.2%}" if rss else "–"
        slope = f"{rss['slope_mb_per_h']:+.1f}" if rss else "–"
        load = "–" if fds["load_min"] is None else f"{fds['load_min']}–{fds['load_max']}"
        table.add_row(
            role.replace("_", " "), str(proc["pid"]), _mb(rss.get("start_bytes")), _mb(rss.get("end_bytes")),
            growth, slope, str(fds["idle_start"]), str(fds["idle_end"]), load,
        )  # fmt: skip
    console.print(table)
    store, idle = result["trace_store"], result["engine_idle"] or {}
    console.print(
        f"requests: {req['done']} done, {req['failed']} failed {req['errors'] or ''} ({req['req_per_s']:.1f}/s); "
        f"engine once idle: {idle.get('running')} running, {idle.get('waiting')} waiting, "
        f"{idle.get('slots_used')} of {idle.get('slots_total')} slots used; trace store: at most "
        f"{store['spans_max']} spans (cap {store['max_spans']}), {store['spans_end']} at the end, "
        f"{_mb(store['bytes_end'])} MB"
    )
    checks = Table("check", "target", "measured", "verdict", title="targets")
    for check in result["checks"]:
        verdict = "[green]pass[/]" if check["ok"] else "[red]FAIL[/]"
        checks.add_row(check["name"], check["target"], str(check["value"]), verdict)
    console.print(checks)
    console.print("[green]soak passed[/]" if result["passed"] else "[red]soak failed[/]")


@bench_app.command("soak")
def bench_soak(
    minutes: Annotated[float, typer.Option(min=0.1, help="Minutes of load (the first 10% is warm-up).")] = 30.0,
    clients: Annotated[int, typer.Option(min=1, help="Closed-loop clients sending corrections.")] = 16,
    interval: Annotated[float, typer.Option(min=0.5, help="Seconds between samples.")] = 5.0,
    model: ModelOption = None,
    trace_store_max_spans: Annotated[
        int | None, typer.Option(min=100, help="The server's trace store cap (default: the server's).")
    ] = None,
    output: JsonOutput = None,
    plot: Annotated[Path | None, typer.Option(help="Write a PNG of RSS over time per process here.")] = None,
) -> None:
    """A real `corrige serve` under steady load: RSS growth per process, leaked descriptors and KV slots,
    the trace store against its cap; exits 1 when a target is missed."""
    from corrige.bench.plots import soak_plot
    from corrige.bench.soak import SoakConfig, run_soak

    config = SoakConfig(
        minutes=minutes, clients=clients, interval_s=interval, model=model, trace_store_max_spans=trace_store_max_spans
    )
    with console.status("starting the soak…") as status:
        result = run_soak(config, progress=lambda what: status.update(what))
    print_soak(result)
    if output:
        write_json(output, result)
    if plot:
        console.print(f"[green]wrote[/] {soak_plot(result, plot)}")
    if not result["passed"]:
        raise typer.Exit(1)
