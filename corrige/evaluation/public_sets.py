"""The tutor on public learner sets, beside other systems' saved outputs, for the model card.

The sets are fetched at evaluation time and never committed (docs/rescoring.md): a directory
holds JFLEG's test half (`jfleg/test.src`, `jfleg/test.ref0` … `ref3`, from `keisks/jfleg`) and
CoNLL-2014 with LanguageTool's and GECToR's outputs (`conll14/official-2014.combined.m2`,
`conll14/preds_lt_conll`, `conll14/preds_gector_conll_030_077`, from `jacqle/gec-improvements`).
Each is scored twice: against the first reference (JFLEG's `ref0`, CoNLL's annotator 0) and
against the best of every reference (`ErrantScorer.score(..., best_reference=True)`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

JFLEG_SOURCES = "jfleg/test.src"
JFLEG_REFERENCES = tuple(f"jfleg/test.ref{k}" for k in range(4))
CONLL_M2 = "conll14/official-2014.combined.m2"
# (system, saved outputs: one tokenised line per CoNLL-2014 sentence)
OTHER_SYSTEMS = (
    ("LanguageTool", "conll14/preds_lt_conll"),
    ("GECToR", "conll14/preds_gector_conll_030_077"),
)
FIGURES = ("tp", "fp", "fn", "precision", "recall", "f05", "false_alarms", "correct_sources")


def missing_files(directory: Path) -> list[str]:
    """The files of the expected layout that `directory` lacks."""
    needed = [JFLEG_SOURCES, *JFLEG_REFERENCES, CONLL_M2, *(path for _, path in OTHER_SYSTEMS)]
    return [name for name in needed if not (directory / name).is_file()]


def measure(tutor: Any, directory: Path, on_step: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """One row per set, scoring and system: {set, references, system, tp, fp, fn, precision,
    recall, f05, false_alarms, correct_sources}. Raises ValueError naming the missing files."""
    from corrige.evaluation.errant_predict import predict
    from corrige.evaluation.errant_scoring import ErrantScorer, read_hypotheses, read_parallel

    missing = missing_files(directory)
    if missing:
        raise ValueError(f"{directory} lacks {', '.join(missing)} (docs/rescoring.md tells where they come from)")
    step = on_step or (lambda _: None)
    scorer = ErrantScorer()
    out: list[dict[str, Any]] = []

    def add(set_name: str, rows: list[Any], outputs: list[Any], system: str, tokenised: bool) -> None:
        for best, references in ((False, "first"), (True, "best of all")):
            scores = scorer.score(rows, outputs, tokenised, best_reference=best).to_dict()
            out.append({"set": set_name, "references": references, "system": system, **{k: scores[k] for k in FIGURES}})

    step("correcting JFLEG test")
    jfleg = read_parallel(directory / JFLEG_SOURCES, "all", [directory / r for r in JFLEG_REFERENCES])
    add("JFLEG test", jfleg, predict(tutor, [r.source for r in jfleg]), "corrige", tokenised=False)
    step("correcting CoNLL-2014")
    conll = read_parallel(directory / CONLL_M2)
    add("CoNLL-2014", conll, predict(tutor, [r.source for r in conll]), "corrige", tokenised=False)
    for system, path in OTHER_SYSTEMS:
        step(f"scoring {system}'s outputs")
        add("CoNLL-2014", conll, read_hypotheses(directory / path, conll), system, tokenised=True)
    return out


def targets(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The targets on CoNLL-2014 against its first annotator: F0.5 above LanguageTool's measured in
    the same run, precision ≥ 0.5, false alarms ≤ 5%."""

    def find(system: str) -> dict[str, Any] | None:
        return next(
            (r for r in rows if r["set"] == "CoNLL-2014" and r["references"] == "first" and r["system"] == system),
            None,
        )

    ours, lt = find("corrige"), find("LanguageTool")
    if ours is None or lt is None:
        return []
    alarm_rate = ours["false_alarms"] / ours["correct_sources"] if ours["correct_sources"] else 0.0
    set_name = "CoNLL-2014 (annotator 0)"
    return [
        {"set": set_name, "name": f"F0.5 > LanguageTool's ({lt['f05']:.3f})", "value": ours["f05"],
         "met": ours["f05"] > lt["f05"]},
        {"set": set_name, "name": "precision ≥ 0.5", "value": ours["precision"], "met": ours["precision"] >= 0.5},
        {"set": set_name, "name": "false alarms ≤ 5%", "value": alarm_rate, "met": alarm_rate <= 0.05},
    ]  # fmt: skip
