"""`corrige bench portal`: the learner portal's overhead over the model call."""

from __future__ import annotations

from typing import Annotated

import typer

from corrige.cli import bench_app, console
from corrige.cli.options import Batching, JsonFlag, ModelOption


@bench_app.command("portal")
def bench_portal(
    rounds: Annotated[int, typer.Option(help="Measured rounds; each sends one sentence through every path.")] = 300,
    warmup: Annotated[int, typer.Option(help="Unmeasured rounds first (they also warm the rule-card caches).")] = 50,
    model: ModelOption = None,
    batching: Batching = "continuous",
    json_output: JsonFlag = None,
    database: Annotated[
        str | None,
        typer.Option(
            help="A postgresql:// URL: a second server keeps its records there (in a schema of its own, dropped "
            "at the end), and both are measured side by side. Needs corrige[postgres].",
        ),
    ] = None,
) -> None:
    """The portal's quiz submit vs the grammar API on one real server, interleaved: medians and their difference
    (with --database, on SQLite and PostgreSQL side by side)."""
    from corrige.bench.portal import run_portal_bench
    from corrige.bench.servers import ServedBench

    run_portal_bench(console, ServedBench(rounds, warmup, model, batching, json_output), database)
