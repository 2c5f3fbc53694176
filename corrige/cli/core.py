"""Everyday commands: version, train, correct, eval (`serve` has a module of its own)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from corrige.cli import _numpy_runtime_threads, app, console
from corrige.cli.options import CorpusSeed, ModelOption

if TYPE_CHECKING:
    from corrige.tutor.text import TextCorrection


@app.command()
def version() -> None:
    """Print the installed version."""
    from corrige import __version__

    console.print(f"corrige {__version__}")


@app.command()
def train(
    out: Annotated[Path, typer.Option(help="Output model directory.")] = Path("runs/seed"),
    preset: Annotated[
        str,
        typer.Option(
            help="Model preset: seed (~0.5M params), tutor (0.94M); for real text reader (2.6M) or reader-small (1.3M)."
        ),
    ] = "seed",
    minutes: Annotated[float, typer.Option(help="Wall-clock budget; the LR schedule ends with it.")] = 20.0,
    max_steps: Annotated[int, typer.Option(help="Step budget; the first budget to run out ends training.")] = 20_000,
    n_train: Annotated[int, typer.Option(help="Synthetic training examples.")] = 200_000,
    batch_size: Annotated[int, typer.Option()] = 64,
    lr: Annotated[float, typer.Option(help="Peak learning rate (AdamW, cosine decay).")] = 3e-3,
    seed: Annotated[int, typer.Option(help="Seed for initialisation and batch order.")] = 0,
    data_seed: CorpusSeed = 0,
    eval_every: Annotated[int, typer.Option(help="Steps between dev evaluations.")] = 1_000,
    threads: Annotated[int, typer.Option(help="Torch threads (0: default).")] = 0,
    resume: Annotated[bool, typer.Option(help="Continue from OUT/checkpoint.pt if present.")] = False,
    pairs: Annotated[
        Path | None,
        typer.Option(help="Train on a pairs TSV from `corrige corpus pairs` instead of the synthetic corpus."),
    ] = None,
    pairs_limit: Annotated[int | None, typer.Option(help="Read at most this many rows of --pairs.")] = None,
    bf16: Annotated[bool, typer.Option(help="bfloat16 autocast (2-3x faster where the CPU has AVX-512 BF16).")] = False,
    n_dev: Annotated[int, typer.Option(help="Held-out dev examples (the last rows of --pairs).")] = 2_000,
    init_from: Annotated[
        Path | None,
        typer.Option(help="Start from this model directory's weights and tokenizer (e.g. corrige/models/reader)."),
    ] = None,
) -> None:
    """Train a tutor model with PyTorch (needs the `train` extra) and export it for the NumPy runtime."""
    try:
        from corrige.train.loop import TrainConfig
        from corrige.train.loop import train as run_training
    except ImportError as exc:  # torch missing
        raise typer.BadParameter(f"training needs torch: pip install -e '.[train]' ({exc})") from exc
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    cfg = TrainConfig(
        preset=preset,
        data_seed=data_seed,
        seed=seed,
        n_train=n_train,
        batch_size=batch_size,
        lr=lr,
        max_steps=max_steps,
        max_minutes=minutes,
        eval_every=eval_every,
        threads=threads,
        pairs=str(pairs) if pairs else None,
        pairs_limit=pairs_limit,
        n_dev=n_dev,
        bf16=bf16,
        init_from=str(init_from) if init_from else None,
    )
    with Progress(
        TextColumn("[bold]train"),
        BarColumn(),
        TextColumn("{task.percentage:>5.1f}%"),
        TextColumn("step {task.fields[step]} loss {task.fields[loss]:.4f}"),
        TimeElapsedColumn(),
        console=console,
    ) as bar:
        task = bar.add_task("train", total=1.0, step=0, loss=float("nan"))
        result = run_training(
            cfg,
            out,
            resume=resume,
            on_step=lambda step, loss, progress: bar.update(task, completed=progress, step=step, loss=loss),
        )
    console.print(f"[green]trained[/] {result.steps} steps in {result.minutes:.1f} min → {result.out_dir}")
    for point in result.history:
        console.print(f"  step {point.step:>6}: dev loss {point.dev_loss:.4f}, dev exact {point.dev_exact:.3f}")


@app.command()
def correct(
    texts: Annotated[
        list[str] | None,
        typer.Argument(help="English sentences or whole texts (an email, a paragraph) to correct; - reads stdin."),
    ] = None,
    file: Annotated[
        Path | None,
        typer.Option("--file", "-f", help="Correct this file's text as one text.", exists=True, dir_okay=False),
    ] = None,
    model: ModelOption = None,
) -> None:
    """Correct sentences or texts and explain in Spanish: `corrige correct "Yesterday I goed to the store"`.

    Each argument is a text, split into sentences and corrected as the tutor page and the API's
    `text` requests do. A text the tutor does not take (empty, not English, over 5,000 characters)
    is reported in its place, and the exit code is 2 when any was or when a sentence was left
    uncorrected because it was too long.
    """
    _numpy_runtime_threads()
    import sys

    from corrige.tutor.agent import Tutor
    from corrige.tutor.text import TextRefused, correct_texts

    inputs = [sys.stdin.read() if t == "-" else t for t in texts or []]
    if file is not None:
        inputs.append(file.read_text(encoding="utf-8"))
    if not inputs:
        raise typer.BadParameter("give a sentence or a text to correct, - for stdin, or --file FILE")
    tutor = Tutor.load(model)
    failed = 0
    for text, result in zip(inputs, correct_texts(tutor, inputs), strict=True):
        console.print(f"[bold]{escape(text.strip())}[/]", highlight=False, soft_wrap=True)
        if isinstance(result, TextRefused):
            code = "empty_sentence" if result.code == "empty_text" else result.code  # as the API's 422
            message = result.message.removeprefix("text: ")
            console.print(f"  [red]error[/] ({code}): {escape(message)}", highlight=False, soft_wrap=True)
            failed += 1
            continue
        failed += _print_text(result)
    if failed:
        console.print(f"[red]{failed} of {len(inputs)} texts could not be corrected in full[/]")
        raise typer.Exit(2)


def _print_text(result: TextCorrection) -> int:
    """One text's correction; 1 when a sentence of it was too long to correct, else 0."""
    from rich.table import Table

    from corrige.tutor.text import NOTHING_TO_CHECK

    sentences = result.sentences
    if len(sentences) == 1 and sentences[0].status == "too_long":
        pass  # said below
    elif len(sentences) == 1 and sentences[0].status == "abstained":
        console.print(f"  [yellow]sin cambios[/] ({sentences[0].reason}): {escape(sentences[0].gloss)}")
    else:
        mark = "[cyan]→[/]" if result.edits else "[green]✓[/]"
        console.print(f"  {mark} {escape(result.corrected.strip())}", highlight=False, soft_wrap=True)
    for s in sentences:
        if s.status == "too_long":
            console.print(
                f"  [red]error[/] (too_long): {escape(s.text)} — too long for the tutor with no comma or "
                "conjunction to cut it at; split it into shorter sentences",
                highlight=False,
                soft_wrap=True,
            )
        elif len(sentences) == 1 and s.status != "abstained":
            console.print(f"  [italic]{escape(s.gloss)}[/]")
        elif s.edits:
            console.print(f"  [italic]{escape(s.gloss)}[/]", highlight=False, soft_wrap=True)
        if s.more_errors:
            console.print(f"  [yellow]puede haber más errores en esta frase[/]: {escape(s.corrected)}", soft_wrap=True)
        elif s.status in ("abstained", "skipped") and s.reason not in NOTHING_TO_CHECK:
            console.print(f"  [yellow]sin revisar[/] ({s.reason}): {escape(s.text)}", highlight=False, soft_wrap=True)
    if result.edits:
        table = Table("start", "end", "original", "replacement", "category", box=None, padding=(0, 1))
        for e in result.edits:
            table.add_row(
                str(e.offset), str(e.end), escape(e.original) or "∅", escape(e.replacement) or "∅", e.category
            )
        console.print(table)
    return int(any(s.status == "too_long" for s in sentences))


@app.command("eval")
def eval_cmd(
    file: Annotated[
        Path | None,
        typer.Argument(
            help="A parallel file to score with ERRANT: a TSV (source, reference or corrected; half) or an M2 file. "
            "Without it: the synthetic split and the hand-written sentences, with the tutor's own edit metric.",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    model: ModelOption = None,
    split: Annotated[str, typer.Option(help="Synthetic split: test or dev.")] = "test",
    n: Annotated[int, typer.Option(help="Synthetic sentences to evaluate.")] = 2000,
    realistic: Annotated[bool, typer.Option(help="Also evaluate the hand-written learner sentences.")] = True,
    sweep: Annotated[bool, typer.Option(help="Compare abstention thresholds on the same generations.")] = False,
    latency: Annotated[bool, typer.Option(help="Also time single corrections at batch 1.")] = True,
    card: Annotated[bool, typer.Option(help="Write MODEL_CARD.md and eval.json into the model directory.")] = False,
    min_token_prob: Annotated[float | None, typer.Option(help="Override the abstention threshold.")] = None,
    half: Annotated[str, typer.Option(help="With FILE: rows of its half column: tune, test or all.")] = "all",
    as_text: Annotated[
        bool,
        typer.Option(
            help="With FILE: correct each row as the tutor page and `text` requests do (a sentence too long "
            "for the window is cut at clause boundaries instead of refused)."
        ),
    ] = False,
    json_path: Annotated[Path | None, typer.Option("--json", help="Write every figure as JSON.")] = None,
    predictions: Annotated[
        Path | None, typer.Option(help="With FILE: write source/prediction/reference/abstained/refused TSV rows.")
    ] = None,
    corpus: Annotated[
        Path | None,
        typer.Option(help="With --card: the corpus manifest.json, summarised into the card's data section."),
    ] = None,
    score_only: Annotated[
        Path | None,
        typer.Option(
            help="Score a predictions TSV (source, prediction, reference) with ERRANT; no model runs.",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    reference: Annotated[
        list[Path] | None,
        typer.Option(
            help="FILE is then plain tokenised source lines and this file their references, line by line "
            "(JFLEG: dev.src with dev.ref0; repeat it for several references, dev.ref0 to dev.ref3). The tutor "
            "reads each source detokenised; ERRANT scores tokens.",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    public_sets: Annotated[
        Path | None,
        typer.Option(
            help="With --card: a directory of the public learner sets (jfleg/test.src and test.ref0-3; conll14/"
            "official-2014.combined.m2, preds_lt_conll, preds_gector_conll_030_077), fetched for evaluation "
            "only: the card then shows JFLEG test and CoNLL-2014 beside LanguageTool and GECToR.",
            exists=True,
            file_okay=False,
        ),
    ] = None,
    best_reference: Annotated[
        bool,
        typer.Option(
            help="With several references (the repeated --reference files, or an M2 file's annotators as "
            "CoNLL-2014's two): score each sentence against the one that suits it best, as errant_compare "
            "does. Without it, the first reference only.",
        ),
    ] = False,
    hypotheses: Annotated[
        Path | None,
        typer.Option(
            help="With FILE: score another system's saved outputs instead (one tokenised line per sentence, "
            "e.g. LanguageTool's or GECToR's for CoNLL-2014); no model runs.",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
) -> None:
    """Exact match, edit precision/recall/F0.5, false alarms, abstentions, per category.

    With FILE (or --score-only): ERRANT span-based correction P/R/F0.5, per ERRANT error type.
    """
    _numpy_runtime_threads()
    if public_sets is not None and not (card and file is None and _trained_on_pairs(model)):
        raise typer.BadParameter("--public-sets goes with --card and --model of a model trained on real sentences")
    if card and file is None and _trained_on_pairs(model):
        from corrige.cli import errant_eval

        try:
            errant_eval.write_learner_card(console, model, corpus, min_token_prob, public_sets)  # type: ignore[arg-type]
        except ValueError as exc:
            console.print(f"[red]error[/] {exc}", soft_wrap=True)
            raise typer.Exit(2) from exc
        return
    if file is not None or score_only is not None:
        _score_with_errant(
            file,
            half,
            model=model,
            json_path=json_path,
            predictions_path=predictions,
            score_only=score_only,
            sweep=sweep,
            min_token_prob=min_token_prob,
            as_text=as_text,
            reference=reference,
            hypotheses=hypotheses,
            best_reference=best_reference,
        )
        return
    from corrige.cli.tutor_eval import evaluate_tutor

    evaluate_tutor(
        console,
        model,
        split=split,
        n=n,
        realistic=realistic,
        sweep=sweep,
        latency=latency,
        card=card,
        min_token_prob=min_token_prob,
        json_path=json_path,
    )


def _score_with_errant(file: Path | None, half: str, **options) -> None:
    """`corrige eval FILE` (or --score-only): ERRANT scoring; a bad file or a missing extra exits with 2."""
    from corrige.cli import errant_eval

    if half not in ("tune", "test", "all"):
        raise typer.BadParameter(f"--half must be tune, test or all, not {half!r}")
    try:
        errant_eval.run(console, file, half=half, **options)
    except ValueError as exc:
        console.print(f"[red]error[/] {exc}", soft_wrap=True)
        raise typer.Exit(2) from exc
    except (ImportError, OSError) as exc:  # errant, spaCy or its English pipeline missing
        console.print(
            f"[red]error[/] ERRANT scoring needs the eval extra: pip install -e '.[eval]' ({exc})", soft_wrap=True
        )
        raise typer.Exit(2) from exc


def _trained_on_pairs(model: Path | None) -> bool:
    """A model trained on real sentences (its card is scored with ERRANT on the learner sets)."""
    import json

    meta = (model / "train_config.json") if model else None
    if meta is None or not meta.is_file():
        return False
    return bool(json.loads(meta.read_text()).get("train", {}).get("pairs"))
