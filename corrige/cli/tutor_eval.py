"""`corrige eval` without FILE: the tutor on the synthetic split and the hand-written sentences,
scored with its own edit metric, with the threshold sweep, the latency and the model card."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from corrige.cli.errant_eval import print_table

if TYPE_CHECKING:
    from corrige.evaluation.harness import EvalItem, Metrics
    from corrige.tutor.agent import Tutor

REALISTIC = "realistic (hand-written)"
SWEEP_THRESHOLDS = [0.0, 0.2, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7]


def evaluate_tutor(
    console: Console,
    model: Path | None,
    *,
    split: str,
    n: int,
    realistic: bool,
    sweep: bool,
    latency: bool,
    card: bool,
    min_token_prob: float | None,
    json_path: Path | None,
) -> None:
    """Score every set, print the tables, and write the card and the JSON when asked."""
    from corrige.evaluation import harness as assess
    from corrige.tutor.agent import BUNDLED_MODEL, Tutor, changed_settings

    tutor = Tutor.load(model)
    if min_token_prob is not None:
        tutor.config = replace(tutor.config, min_token_prob=min_token_prob)
    synthetic = f"synthetic {split}"
    sets = {synthetic: assess.synthetic_items(split, n=n)}
    if realistic:
        sets[REALISTIC] = assess.realistic_items()
    results: dict[str, Any] = {
        "sets": {},
        "params": tutor.weights.cfg.num_params(),
        "command": "corrige eval " + ("--card" if card else ""),
        "tutor_settings": changed_settings(tutor.config),
    }
    _score_sets(console, tutor, sets, results, sweep)
    if "per_category" in results:
        print_table(console, _category_table(results["per_category"]))
    if latency:
        _time_corrections(console, tutor, sets[synthetic], results)
    if card:
        from corrige.train.card import write_card

        results["targets"] = _card_targets(results, synthetic)
        path = write_card(Path(model) if model else BUNDLED_MODEL, results)
        console.print(f"[green]wrote[/] {path}")
    if json_path is not None:
        json_path.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        console.print(f"[green]wrote[/] {json_path}")


def _score_sets(
    console: Console, tutor: Tutor, sets: dict[str, list[EvalItem]], results: dict[str, Any], sweep: bool
) -> None:
    """Generate once per set, score, and (with --sweep) compare thresholds on the same generations."""
    from corrige.evaluation import harness as assess

    summary = Table("set", "n", "exact", "P", "R", "F0.5", "false alarms", "abstain", title="tutor evaluation")
    for name, items in sets.items():
        with Progress(console=console, transient=True) as bar:
            task = bar.add_task(name, total=len(items))
            generated = assess.generate_all(tutor, items, on_batch=partial(bar.advance, task))
        metrics = assess.score(generated, assess.interpret_all(tutor, generated))
        results["sets"][name] = {k: v for k, v in asdict(metrics).items() if k != "per_category"}
        if name.startswith("synthetic"):
            results["per_category"] = {k: asdict(v) for k, v in metrics.per_category.items()}
        summary.add_row(name, str(metrics.n), *_figures(metrics, "exact_match", "precision", "recall", "f05"))
        if sweep:
            table = Table(
                "min token prob", "exact", "P", "F0.5", "false alarms", "abstain", title=f"threshold sweep: {name}"
            )
            for t, m in assess.threshold_sweep(tutor, generated, SWEEP_THRESHOLDS).items():
                table.add_row(f"{t:.2f}", *_figures(m, "exact_match", "precision", "f05"))
            print_table(console, table)
    print_table(console, summary)


def _figures(metrics: Metrics, *names: str) -> list[str]:
    """The named figures, then the false-alarm and abstention rates, to three decimals."""
    return [f"{getattr(metrics, name):.3f}" for name in (*names, "false_alarm_rate", "abstain_rate")]


def _category_table(per_category: dict[str, dict[str, Any]]) -> Table:
    cats = Table("category", "sentences", "exact", "recall", "precision", title="per category (synthetic)")
    for cat, c in sorted(per_category.items()):
        if not c["sentences"]:
            continue
        cats.add_row(cat, str(c["sentences"]), f"{c['exact_match']:.3f}", f"{c['recall']:.3f}", f"{c['precision']:.3f}")
    return cats


def _time_corrections(console: Console, tutor: Tutor, items: list[EvalItem], results: dict[str, Any]) -> None:
    from corrige.evaluation import harness as assess

    results["latency"] = lat = assess.correction_latency_ms(tutor, [i.source for i in items[:100]])
    console.print(
        f"batch-1 correction: p50 {lat['p50_ms']:.2f} ms, p95 {lat['p95_ms']:.2f} ms "
        f"({lat['mean_prompt_tokens']:.1f} tokens in, {lat['mean_completion_tokens']:.1f} out)"
    )


def _target(name: str, value: str, met: bool) -> dict[str, Any]:
    return {"name": name, "value": value, "met": met}


def _card_targets(results: dict[str, Any], synthetic: str) -> list[dict[str, Any]]:
    """The model card's targets, each with its figure and whether it is met."""
    syn = results["sets"][synthetic]
    targets = [
        _target("synthetic exact match ≥ 0.90", f"{syn['exact_match']:.3f}", syn["exact_match"] >= 0.9),
        _target("synthetic edit F0.5 ≥ 0.90", f"{syn['f05']:.3f}", syn["f05"] >= 0.9),
        _target("synthetic false alarms ≤ 2%", f"{syn['false_alarm_rate']:.3f}", syn["false_alarm_rate"] <= 0.02),
    ]
    real = results["sets"].get(REALISTIC)
    if real:
        targets += [
            _target("realistic edit F0.5 ≥ 0.60", f"{real['f05']:.3f}", real["f05"] >= 0.6),
            _target("realistic false alarms ≤ 5%", f"{real['false_alarm_rate']:.3f}", real["false_alarm_rate"] <= 0.05),
        ]
    if "latency" in results:
        lat = results["latency"]
        targets.append(_target("batch-1 correction ≤ 8 ms (p50)", f"{lat['p50_ms']:.2f} ms", lat["p50_ms"] <= 8))
    return targets
