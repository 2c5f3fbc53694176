"""The language model that scores candidate corrections: `corrige lm build | tune | score`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from corrige.cli import console, lm_app

LM_DIR_HELP = "Language model directory.  [default: the bundled one, corrige/models/lm]"


def _lm_dir(directory: Path | None) -> Path:
    from corrige.tutor.agent import LM_MODEL

    return directory or LM_MODEL


@lm_app.command("build")
def lm_build(
    sentences: Annotated[
        Path, typer.Argument(help="sentences.txt of `corrige corpus build`: one clean sentence a line.")
    ],
    out: Annotated[Path, typer.Option("--out", help="Output directory: ngram.npz, vocab.txt, ngram.json.")],
    manifest: Annotated[
        Path | None, typer.Option(help="The corpus manifest.json: its sources and licences go into ngram.json.")
    ] = None,
    min_trigram_count: Annotated[int, typer.Option(help="Drop trigrams seen fewer times.")] = 2,
    min_bigram_count: Annotated[int, typer.Option(help="Drop bigrams seen after fewer different words.")] = 2,
) -> None:
    """Count clean sentences into a trigram model (Kneser-Ney): `corrige lm build sentences.txt --out DIR`."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from corrige.train.ngram import NgramBuildConfig, build

    if not sentences.is_file():
        raise typer.BadParameter(f"not found: {sentences}")
    lines = [s for s in sentences.read_text(encoding="utf-8").splitlines() if s.strip()]
    info: dict[str, object] = {"corpus": str(sentences)}
    if manifest is not None:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        info["sources"] = [
            {k: s.get(k) for k in ("name", "licence", "attribution", "url", "kept")} for s in data["sources"]
        ]
        info["corpus_sha256"] = data.get("sha256")
    config = NgramBuildConfig(min_trigram_count=min_trigram_count, min_bigram_count=min_bigram_count)
    with Progress(
        TextColumn("reading"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    ) as bar:
        task = bar.add_task("reading", total=len(lines))
        lm = build(lines, config, on_sentences=lambda k: bar.advance(task, k), info=info)
    with console.status("writing"):
        lm.save(out)
    if (out / "rescoring.json").is_file():
        from corrige.train import lm_card

        lm_card.write(out)
    console.print(
        f"[green]wrote[/] {out}: {lm.info['vocabulary']:,} words, {lm.info['bigrams']:,} bigrams, "
        f"{lm.info['trigrams']:,} trigrams from {lm.info['words']:,} running words"
    )


@lm_app.command("score")
def lm_score(
    sentences: Annotated[list[str], typer.Argument(help="Sentences to score.")],
    lm_dir: Annotated[Path | None, typer.Option("--lm", help=LM_DIR_HELP)] = None,
) -> None:
    """Each sentence's ln-probability and perplexity, and the candidates the tutor would keep."""
    from rich.table import Table

    from corrige.cli.errant_eval import print_table
    from corrige.model.ngram import NgramLM
    from corrige.tutor.edits import apply_edits
    from corrige.tutor.rescoring import Rescorer, RescoringConfig

    directory = _lm_dir(lm_dir)
    lm = NgramLM.load(directory)
    rescorer = Rescorer(lm, config=RescoringConfig.load(directory))
    table = Table("sentence", "ln p", "perplexity", "rescored", title=f"language model {directory}")
    for s in sentences:
        fixes = rescorer.fixes(s)
        table.add_row(s, f"{lm.score(s):.2f}", f"{lm.perplexity([s]):.1f}", apply_edits(s, fixes) if fixes else "")
    print_table(console, table)


@lm_app.command("tune")
def lm_tune(
    sources: Annotated[Path, typer.Argument(help="Tokenised source lines of a dev set (JFLEG: dev/dev.src).")],
    references: Annotated[list[Path], typer.Option("--reference", help="Its reference files (repeat: dev.ref0..3).")],
    lm_dir: Annotated[Path | None, typer.Option("--lm", help=LM_DIR_HELP)] = None,
    target: Annotated[float, typer.Option(help="Precision each family and kind must keep on the dev set.")] = 0.6,
    min_support: Annotated[int, typer.Option(help="Candidates above a margin a reference agrees with, at least.")] = 5,
    false_alarms: Annotated[
        float, typer.Option(help="Share of the references (correct sentences) each family and kind may change.")
    ] = 0.002,
    write: Annotated[bool, typer.Option(help="Write the margins to the model's rescoring.json.")] = False,
) -> None:
    """Choose the rescoring margins on a dev set with ERRANT, one per family and kind of change."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from corrige.cli.errant_eval import print_table
    from corrige.evaluation.errant_scoring import ErrantScorer, read_plain_pair
    from corrige.evaluation.rescoring_tune import choose, clean_floors, outcomes
    from corrige.model.ngram import NgramLM
    from corrige.tutor.candidates import FAMILY_KINDS
    from corrige.tutor.rescoring import MARGINS_FILE, Rescorer, RescoringConfig

    directory = _lm_dir(lm_dir)
    refs = [read_plain_pair(sources, r) for r in references]
    everything = RescoringConfig(tuple((k, 0.0) for k in FAMILY_KINDS))
    rescorer = Rescorer(NgramLM.load(directory), config=everything)
    with console.status("loading spaCy and ERRANT"):
        scorer = ErrantScorer()
    with Progress(
        TextColumn("candidates"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    ) as bar:
        task = bar.add_task("rows", total=len(refs[0]))
        found = outcomes(rescorer, refs, scorer, on_row=lambda k: bar.advance(task, k))
    with console.status("scoring the references, which are correct sentences"):
        clean = [r.reference for refs_k in refs for r in refs_k]
        floors = clean_floors(rescorer, clean, false_alarms)
    choices = choose(found, target, min_support, floors)
    table = Table(
        "family/kind",
        "margin",
        "floor (references)",
        "right / proposed",
        "precision",
        "right of all",
        title=f"margins ({sources})",
    )
    for c in choices:
        total = [o for o in found if o.key == c.key]
        table.add_row(
            c.key,
            "off" if c.margin is None else f"{c.margin:.2f}",
            f"{floors.get(c.key, 0.0):.2f}",
            f"{c.right} / {c.proposed}",
            f"{c.precision:.2f}",
            f"{sum(o.right for o in total)} / {len(total)}",
        )
    print_table(console, table)
    if write:
        from corrige.train import lm_card

        config = RescoringConfig(tuple((c.key, c.margin) for c in choices if c.margin is not None))
        (directory / MARGINS_FILE).write_text(config.to_json(), encoding="utf-8")
        ref_options = " ".join(f"--reference {r.name}" for r in references)
        tuning = {
            "command": f"corrige lm tune {sources.name} {ref_options} --target {target} "
            f"--min-support {min_support} --false-alarms {false_alarms} --write",
            "target": target,
            "choices": [
                {
                    "key": c.key,
                    "margin": c.margin,
                    "right": c.right,
                    "proposed": c.proposed,
                    "floor": round(floors.get(c.key, 0.0), 3),
                    "right_all": sum(o.right for o in found if o.key == c.key),
                    "all": sum(o.key == c.key for o in found),
                }
                for c in choices
            ],
        }
        (directory / lm_card.TUNING_FILE).write_text(json.dumps(tuning, indent=2) + "\n", encoding="utf-8")
        card = lm_card.write(directory)
        console.print(f"[green]wrote[/] {directory / MARGINS_FILE}, {directory / lm_card.TUNING_FILE} and {card}")
