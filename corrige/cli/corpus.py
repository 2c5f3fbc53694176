"""The training corpus: `corrige corpus build` and `corrige corpus sources`."""

from __future__ import annotations

from collections.abc import Iterator
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


@corpus_app.command("pairs")
def corpus_pairs(
    sentences: Annotated[Path, typer.Argument(help="sentences.txt: one clean sentence a line.")],
    out: Annotated[Path, typer.Option("--out", help="Output TSV: source, corrected, gloss, categories.")],
    limit: Annotated[int | None, typer.Option(help="Only the first N sentences.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the injected errors.")] = 0,
    processes: Annotated[int, typer.Option(help="Worker processes (each loads spaCy).")] = 1,
) -> None:
    """Inject learner errors into clean sentences: `corrige corpus pairs sentences.txt --out pairs.tsv`."""
    from collections import Counter
    from itertools import islice

    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.table import Table

    from corrige.corpus.inject import RATES, Injector
    from corrige.tutor.categories import label_of

    if not sentences.is_file():
        raise typer.BadParameter(f"not found: {sentences}")
    with sentences.open(encoding="utf-8") as f:
        total = sum(1 for line in f if line.strip() and "\t" not in line)
    total = min(total, limit) if limit is not None else total
    counts: Counter[str] = Counter()
    n_pairs = n_correct = 0
    injector = Injector(seed)
    out.parent.mkdir(parents=True, exist_ok=True)
    with (
        sentences.open(encoding="utf-8") as src,
        out.open("w", encoding="utf-8") as dst,
        Progress(
            TextColumn("injecting"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
        ) as bar,
    ):
        task = bar.add_task("pairs", total=total)
        # a tab would break the TSV: such lines are skipped (the corpus build never writes them)
        lines = islice((line for line in src if line.strip() and "\t" not in line), total)
        dst.write("source\tcorrected\tgloss\tcategories\n")
        for pair in injector.inject_many(lines, n_process=processes):
            dst.write(pair.tsv() + "\n")
            counts.update(pair.categories)
            n_pairs += 1
            n_correct += pair.source == pair.corrected
            bar.advance(task)
    table = Table(title=f"{n_pairs:,} pairs → {out}")
    for name in ("category", "label", "errors", "share", "target share"):
        table.add_column(name, no_wrap=name == "category", justify="left" if name in ("category", "label") else "right")
    n_errors = sum(counts.values()) or 1
    total_rate = sum(RATES.values())
    for cid, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        table.add_row(cid, label_of(cid), f"{n:,}", f"{n / n_errors:.1%}", f"{RATES.get(cid, 0) / total_rate:.1%}")
    table.add_row(
        "(correct sentences)", "sin errores", f"{n_correct:,}", f"{n_correct / max(n_pairs, 1):.1%} of pairs", ""
    )
    console.print(table)


@corpus_app.command("words")
def corpus_words(
    pairs: Annotated[Path, typer.Argument(help="Pairs TSV the model trained on (source, corrected, ...).")],
    model: Annotated[Path, typer.Argument(help="Model directory whose words.txt to write.")],
) -> None:
    """Count the words of the corrected sentences into MODEL/words.txt (known words and spelling counts).

    `corrige train` writes this file itself; this rewrites it for a model trained before the counts
    were kept, from the pairs file of its last run.
    """
    from corrige.tutor.plausibility import write_known_words

    if not pairs.is_file() or not model.is_dir():
        raise typer.BadParameter(f"not found: {pairs if not pairs.is_file() else model}")

    def corrected() -> Iterator[str]:
        with pairs.open(encoding="utf-8") as f:
            next(f, None)  # the header
            for line in f:
                fields = line.rstrip("\n").split("\t")
                if len(fields) > 1:
                    yield fields[1]

    with console.status("counting words"):
        path = write_known_words(model, corrected())
    with path.open(encoding="utf-8") as f:
        console.print(f"wrote {path}: {sum(1 for _ in f):,} words")


@corpus_app.command("synthetic")
def corpus_synthetic(
    out: Annotated[Path, typer.Option("--out", help="Output TSV: source, corrected, gloss, categories.")],
    n: Annotated[int, typer.Option(help="Sentences to generate (about 40% correct).")] = 80_000,
    seed: Annotated[int, typer.Option(help="Seed of the template grammar's sampler.")] = 7,
    max_words: Annotated[int, typer.Option(help="Longest sentence, in words.")] = 30,
) -> None:
    """The course's template grammar as pairs (`corrige.synth`, what the seed model learned from), in the
    format of `corrige corpus pairs`, to mix into a real-text pairs file: a model trained on both keeps
    the 25 catalogue categories as the seed model knows them."""
    import csv

    from corrige.synth.data import make_splits

    with console.status(f"generating {n:,} sentences"):
        examples = make_splits(seed, n, 0, 0, max_words=max_words, max_chars=max_words * 6)["train"]
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_NONE, escapechar="\\")
        writer.writerow(["source", "corrected", "gloss", "categories"])
        for ex in examples:
            writer.writerow([ex.source, ex.corrected, ex.gloss, ",".join(ex.categories)])
    console.print(f"wrote {out}: {len(examples):,} pairs, {sum(ex.is_correct for ex in examples):,} correct")
