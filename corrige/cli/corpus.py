"""The training corpus: `corrige corpus build` and `corrige corpus sources`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from corrige.cli import console, corpus_app


@corpus_app.command("sources")
def corpus_sources() -> None:
    """The known sources: licence, address and which files each one claims."""
    from rich.table import Table

    from corrige.corpus.sources import SOURCES

    table = Table("source", "licence", "files it reads", "url", title="corpus sources")
    for source in SOURCES:
        table.add_row(source.name, source.licence, "\n".join(source.patterns), source.url)
    console.print(table)


@corpus_app.command("build")
def corpus_build(
    paths: Annotated[list[Path], typer.Argument(help="Downloaded files or folders (searched recursively).")],
    out: Annotated[Path, typer.Option("--out", help="Output folder: sentences.txt and manifest.json.")],
    seed: Annotated[int, typer.Option(help="Seed of the output order.")] = 0,
) -> None:
    """Clean, deduplicate and shuffle the sentences of every recognised file: `corrige corpus build RAW --out DIR`."""
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.table import Table

    from corrige.corpus.sources import build_corpus

    missing = [p for p in paths if not p.exists()]
    if missing:
        raise typer.BadParameter(f"not found: {', '.join(map(str, missing))}")

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TextColumn("{task.fields[files]} files"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        refresh_per_second=4,
    ) as bar:
        task = bar.add_task("reading", total=None, files="0")

        class _Hook:
            done = 0

            def start(self, total_bytes: int, files: int) -> None:
                bar.update(task, total=total_bytes, files=f"0/{files}")
                self.files = files

            def advance(self, path: Path, nbytes: int) -> None:
                self.done += 1
                bar.update(task, advance=nbytes, files=f"{self.done}/{self.files}", description=path.name[:32])

        manifest = build_corpus(paths, out, seed=seed, progress=_Hook())

    table = Table("source", "licence", "files", "read", "kept", "dropped (top reasons)", title=f"corpus → {out}")
    for s in manifest["sources"]:
        top = sorted(s["dropped"].items(), key=lambda kv: -kv[1])[:4]
        table.add_row(
            s["name"],
            s["licence"],
            str(len(s["files"])),
            f"{s['candidates']:,}",
            f"{s['kept']:,}",
            ", ".join(f"{reason} {n:,}" for reason, n in top),
        )
    totals = manifest["totals"]
    table.add_row("total", "", str(totals["files"]), f"{totals['candidates']:,}", f"{totals['kept']:,}", "")
    console.print(table)
    if totals["unclaimed_files"]:
        console.print(f"[yellow]{totals['unclaimed_files']} files claimed by no source were skipped[/]")
    console.print(f"[green]wrote[/] {out / 'sentences.txt'} ({totals['kept']:,} sentences) and {out / 'manifest.json'}")
