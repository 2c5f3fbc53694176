"""`corrige eval FILE`: the tutor on any parallel file, scored with ERRANT (printing only; the
scoring lives in `corrige.evaluation.errant_scoring`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

if TYPE_CHECKING:
    from corrige.evaluation.errant_scoring import ErrantScores


def print_table(console: Console, table: Table) -> None:
    """Print a table at its natural width when the console is narrower: names are never cut."""
    natural = Measurement.get(console, console.options.update_width(10_000), table).maximum
    if natural > console.width:
        table.width = natural
    console.print(table, crop=False)


def _f(x: float) -> str:
    return f"{x:.3f}"


def summary_table(title: str, s: ErrantScores) -> Table:
    table = Table("figure", "value", title=title)
    rows = [
        ("rows", str(s.rows)),
        ("TP / FP / FN", f"{s.tp} / {s.fp} / {s.fn}"),
        ("precision", _f(s.precision)),
        ("recall", _f(s.recall)),
        ("F0.5", _f(s.f05)),
        ("sentences changed", f"{s.changed} ({s.changed_rate:.1%})"),
        ("false alarms", f"{s.false_alarms} of {s.correct_sources} correct sources ({s.false_alarm_rate:.1%})"),
        ("abstentions", f"{s.abstentions} ({s.abstention_rate:.1%})"),
        ("refusals", f"{s.refusals} ({s.refusal_rate:.1%})"),
    ]
    for name, value in rows:
        table.add_row(name, value)
    return table


def types_table(s: ErrantScores) -> Table:
    table = Table("ERRANT type", "TP", "FP", "FN", "P", "R", "F0.5", title="per error type (span-based correction)")
    for t in s.per_type.values():
        if t.tp or t.fp or t.fn:
            table.add_row(t.type, str(t.tp), str(t.fp), str(t.fn), _f(t.precision), _f(t.recall), _f(t.f05))
    return table


def sweep_table(results: dict[float, ErrantScores], current: float) -> Table:
    table = Table(
        "min token prob",
        "TP",
        "FP",
        "FN",
        "P",
        "R",
        "F0.5",
        "false alarms",
        "abstain",
        title="threshold sweep (ERRANT)",
    )
    for t, s in results.items():
        mark = " *" if abs(t - current) < 1e-9 else ""
        table.add_row(
            f"{t:.2f}{mark}",
            str(s.tp),
            str(s.fp),
            str(s.fn),
            _f(s.precision),
            _f(s.recall),
            _f(s.f05),
            _f(s.false_alarm_rate),
            _f(s.abstention_rate),
        )
    return table


def _progress(console: Console, label: str) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn(f"[bold]{label}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


def _format(file: Path, reference: list[Path] | None) -> str:
    from corrige.evaluation.errant_scoring import is_m2

    return "plain pair" if reference else "m2" if is_m2(file) else "tsv"


def _summary(s: ErrantScores) -> dict[str, Any]:
    d = s.to_dict()
    d.pop("per_type")
    return d


def run(
    console: Console,
    file: Path | None,
    *,
    model: Path | None,
    half: str,
    json_path: Path | None,
    predictions_path: Path | None,
    score_only: Path | None,
    sweep: bool,
    min_token_prob: float | None,
    as_text: bool = False,
    reference: list[Path] | None = None,
    hypotheses: Path | None = None,
    best_reference: bool = False,
) -> dict[str, Any]:
    """Read, correct (unless `score_only` or `hypotheses`), score, print; returns the figures
    written to JSON."""
    from dataclasses import replace

    from corrige.evaluation import errant_predict as ep
    from corrige.evaluation import errant_scoring as es

    metric = "best of the references" if best_reference else "one reference"
    results: dict[str, Any] = {"metric": f"ERRANT span-based correction, {metric}, F0.5"}
    reference = reference or None
    tokenised = False
    if score_only is not None:
        rows, outputs = ep.read_predictions(score_only)
        results |= {"file": str(score_only), "format": "predictions"}
        tutor = None
    elif file is None:
        raise ValueError("a FILE or --score-only is needed")
    elif hypotheses is not None:
        rows = es.read_parallel(file, half, reference)
        outputs, tokenised, tutor = es.read_hypotheses(hypotheses, rows), True, None
        results |= {"file": str(file), "hypotheses": str(hypotheses), "format": _format(file, reference)}
    else:
        from corrige.tutor.agent import BUNDLED_MODEL, Tutor

        rows = es.read_parallel(file, half, reference)
        tutor = Tutor.load(model)
        if min_token_prob is not None:
            tutor.config = replace(tutor.config, min_token_prob=min_token_prob)
        results |= {
            "file": str(file),
            "format": _format(file, reference),
            "half": half,
            "model": str(model or BUNDLED_MODEL),
            "min_token_prob": tutor.config.min_token_prob,
            "as_text": as_text,
        }

        with _progress(console, "correct") as progress:
            task = progress.add_task("correct", total=len(rows))
            predict = ep.predict_as_text if as_text else ep.predict
            outputs = predict(tutor, [r.source for r in rows], lambda k: progress.advance(task, k))
    if score_only is None:
        results["references"] = 1 + max((len(r.other_edits) + len(r.other_references) for r in rows), default=0)
    with console.status("loading spaCy and ERRANT"):
        scorer = es.ErrantScorer()
    with console.status("scoring with ERRANT"):
        scores = scorer.score(rows, outputs, tokenised, best_reference)
    results["scores"] = scores.to_dict()
    title = f"ERRANT: {results['file']}" + (" (best of the references)" if best_reference else "")
    print_table(console, summary_table(title, scores))
    print_table(console, types_table(scores))
    if sweep and tutor is None:
        console.print("[yellow]--sweep needs generations: it is skipped with --score-only[/]")
    if sweep and tutor is not None:
        thresholds = sorted({*es.SWEEP_THRESHOLDS, tutor.config.min_token_prob})
        with _progress(console, "sweep") as progress:
            task = progress.add_task("sweep", total=len(rows))
            swept = ep.sweep(tutor, rows, scorer, thresholds, lambda k: progress.advance(task, k))
        results["sweep"] = [{"min_token_prob": t, **_summary(s)} for t, s in swept.items()]
        print_table(console, sweep_table(swept, tutor.config.min_token_prob))
    if predictions_path is not None:
        ep.write_predictions(predictions_path, rows, outputs)
        console.print(f"[green]wrote[/] {predictions_path}")
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        console.print(f"[green]wrote[/] {json_path}")
    return results


def write_learner_card(
    console: Console,
    model_dir: Path,
    corpus_manifest: Path | None,
    min_token_prob: float | None,
    public_sets: Path | None = None,
) -> dict[str, Any]:
    """Measure a model trained on real sentences (ERRANT on the learner sets, latency; with
    `public_sets`, JFLEG test and CoNLL-2014 beside other systems) and write its card."""
    from dataclasses import replace

    from corrige.evaluation.errant_scoring import read_parallel
    from corrige.evaluation.harness import correction_latency_ms
    from corrige.train import learner_card
    from corrige.tutor.agent import Tutor

    if corpus_manifest is not None:
        summary = learner_card.summarise_corpus(corpus_manifest)
        (model_dir / learner_card.CORPUS_FILE).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    tutor = Tutor.load(model_dir)
    if min_token_prob is not None:
        tutor.config = replace(tutor.config, min_token_prob=min_token_prob)
    with console.status("scoring") as status:
        results = learner_card.measure(tutor, on_set=lambda name: status.update(f"scoring {name}"))
        if public_sets is not None:
            from corrige.evaluation import public_sets as public

            results["public"] = public.measure(tutor, public_sets, on_step=status.update)
            results["targets"] += public.targets(results["public"])
        status.update("timing batch-1 corrections")
        sentences = [r.source for r in read_parallel(learner_card.DEV_SET, "test")[:100]]
        results["latency"] = correction_latency_ms(tutor, sentences, repeats=1)
    results["params"] = tutor.weights.cfg.num_params()
    results["command"] = f"corrige eval --card --model {model_dir}" + (" --public-sets DIR" if public_sets else "")
    table = Table("set", "rows", "P", "R", "F0.5", "false alarms", "abstained", "refused", title="ERRANT")
    for name, s in results["sets"].items():
        table.add_row(
            name,
            str(s["rows"]),
            _f(s["precision"]),
            _f(s["recall"]),
            _f(s["f05"]),
            f"{s['false_alarm_rate']:.1%}",
            f"{s['abstention_rate']:.1%}",
            str(s["refusals"]),
        )
    print_table(console, table)
    path = learner_card.write(model_dir, results)
    console.print(f"wrote {path}")
    return results
