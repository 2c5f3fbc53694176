"""What several commands share: the common options (one declaration, one help text each) and the
steps that parse lists and write results."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import Progress

from corrige.cli import MODEL_HELP, console

ModelOption = Annotated[Path | None, typer.Option(help=MODEL_HELP)]
JsonOutput = Annotated[Path | None, typer.Option(help="Write the results as JSON here.")]
JsonFlag = Annotated[Path | None, typer.Option("--json", help="Write the results as JSON here.")]
Policies = Annotated[str, typer.Option(help="Comma-separated: none, threads, static, continuous.")]
ALL_POLICIES = "none,threads,static,continuous"
Clients = Annotated[str, typer.Option(help="Comma-separated concurrent closed-loop clients.")]
Batching = Annotated[str, typer.Option(help="The server's batching policy.")]
CorpusSeed = Annotated[int, typer.Option(help="Seed of the synthetic corpus.")]
SloMs = Annotated[float, typer.Option(help="Goodput: successes within this latency.")]


def ints(text: str) -> tuple[int, ...]:
    """Comma-separated integers; anything else is a usage error."""
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError as exc:
        raise typer.BadParameter(f"expected comma-separated integers, got {text!r}") from exc


def words(text: str) -> list[str]:
    """Comma-separated names, stripped."""
    return [part.strip() for part in text.split(",")]


def write_json(path: Path, data: Any, *, ensure_ascii: bool = True) -> None:
    """Write `data` as indented JSON (anything else as its string), making the folder, and say so."""
    from corrige.bench.machine import write_json as save

    save(path, data, ensure_ascii=ensure_ascii)
    console.print(f"[green]wrote[/] {path}")


def quiet_libraries() -> None:
    """httpx logs every request at INFO and matplotlib its font cache: noise under a progress bar."""
    import logging

    for name in ("httpx", "httpcore", "matplotlib"):
        logging.getLogger(name).setLevel(logging.WARNING)


def wide() -> Console:
    """The console, or a 160-column one writing to the same file when output is not a terminal (wide tables)."""
    return console if console.is_terminal else Console(file=console.file, width=160)


def progress_bar() -> Progress:
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    # a slow refresh: the bar shares the CPU with the load generator and the server
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        refresh_per_second=4,
    )
