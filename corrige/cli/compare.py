"""`corrige bench compare`: this tree against a baseline revision, medians and ratios in one run."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from corrige.cli import bench_app, console
from corrige.cli.options import JsonOutput, ModelOption, progress_bar, quiet_libraries, write_json

# a refactor may cost at most this much (issue-level target for behaviour-preserving changes)
TOLERANCE = 0.05


@bench_app.command("compare")
def bench_compare(
    baseline: Annotated[str, typer.Option(help="Git revision to compare with (e.g. a commit id, HEAD~3, a tag).")],
    model: ModelOption = None,
    rounds: Annotated[int, typer.Option(help="Paired rounds; the medians over rounds are reported.")] = 5,
    block: Annotated[int, typer.Option(help="Sequential corrections per one-client block.")] = 60,
    clients: Annotated[int, typer.Option(help="Closed-loop callers of the throughput burst.")] = 64,
    burst_requests: Annotated[int, typer.Option(help="Measured corrections per burst.")] = 640,
    baseline_own_model: Annotated[
        bool,
        typer.Option(
            help="The baseline serves its own revision's copy of --model (a path inside this repository), "
            "for a model retrained since; without it both serve the same model directory."
        ),
    ] = False,
    output: JsonOutput = None,
) -> None:
    """This working tree vs BASELINE: one-client p50 and many-client throughput, both servers
    running at once and measured in alternating order, with current/baseline ratios."""
    from corrige.bench.compare import CompareConfig, run_compare
    from corrige.tutor.agent import BUNDLED_MODEL

    quiet_libraries()
    repo = Path(__file__).resolve().parents[2]
    cfg = CompareConfig(
        baseline=baseline,
        model=(model or BUNDLED_MODEL).resolve(),
        rounds=rounds,
        block=block,
        clients=clients,
        burst_requests=burst_requests,
        baseline_own_model=baseline_own_model,
    )
    try:
        with progress_bar() as bar:
            task = bar.add_task(f"rounds against {baseline}", total=rounds)
            report = run_compare(cfg, repo, on_round=lambda _: bar.advance(task))
    except ValueError as exc:  # the baseline has no copy of the model
        console.print(f"[red]error[/] {exc}", soft_wrap=True)
        raise typer.Exit(2) from exc
    except subprocess.CalledProcessError as exc:  # git: not a checkout, or no such revision
        detail = exc.stderr.decode() if isinstance(exc.stderr, bytes) else exc.stderr or ""
        console.print(f"[red]cannot unpack {baseline!r} from {repo}:[/] {detail.strip()}")
        raise typer.Exit(2) from exc
    _print(report, clients)
    if output is not None:
        write_json(output, report)


def _print(report: dict, clients: int) -> None:
    trees, ratios = report["trees"], report["ratios"]
    table = Table(
        title=f"current tree vs {report['baseline_commit'][:12]} (medians of {report['config']['rounds']} rounds)"
    )
    for column in ("figure", "current", "baseline", "current / baseline", f"within {TOLERANCE:.0%}"):
        table.add_column(column, justify="right" if column != "figure" else "left")
    rows = (("p50 at 1 client (ms)", "p50_ms", False), (f"throughput at {clients} clients (/s)", "req_per_s", True))
    for label, key, higher_is_better in rows:
        ratio = ratios[key]
        ok = ratio >= 1 - TOLERANCE if higher_is_better else ratio <= 1 + TOLERANCE
        now, then = trees["current"]["median"][key], trees["baseline"]["median"][key]
        table.add_row(label, f"{now:.2f}", f"{then:.2f}", f"{ratio:.3f}", "yes" if ok else "[red]no[/]")
    console.print(table)
    failed = trees["current"]["failed"] + trees["baseline"]["failed"]
    console.print(
        f"failed requests: current {trees['current']['failed']}, baseline {trees['baseline']['failed']}"
        + ("" if failed == 0 else "  [red](figures with failures are not comparable)[/]")
    )
