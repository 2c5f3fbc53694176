"""The tutor's predictions for ERRANT scoring: each source corrected (or refused, with its code),
sentence by sentence or as the text path does, the abstention-threshold sweep, and the
predictions TSV (`--predictions` writes it, `--score-only` reads it back)."""

from __future__ import annotations

import csv
import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from corrige.evaluation.errant_scoring import SWEEP_THRESHOLDS, ErrantScorer, ErrantScores, Output, Row, tsv_records
from corrige.tutor.token_codec import PromptTooLong

if TYPE_CHECKING:
    from corrige.tutor.agent import Correction, Tutor

log = logging.getLogger(__name__)

PREDICTION_COLUMNS = ("source", "prediction", "reference", "abstained", "refused", "reason")


def is_refusal(exc: BaseException) -> bool:
    """A typed refusal: the tutor's `PromptTooLong` or an error that carries a `code`."""
    return isinstance(exc, PromptTooLong) or isinstance(getattr(exc, "code", None), str)


def _refused(source: str, exc: BaseException) -> Output:
    return Output(source, refused=True, reason=getattr(exc, "code", type(exc).__name__))


def _from_correction(c: Correction) -> Output:
    return Output(c.corrected, c.abstained, False, c.abstain_reason)


def predict(tutor: Tutor, sources: Sequence[str], on_batch: Callable[[int], None] | None = None) -> list[Output]:
    """The tutor's corrections, `batch_size` sentences per `correct_many` call; a refused
    sentence is set aside (the rest of its batch still runs)."""
    outputs: list[Output] = []
    bs = tutor.config.batch_size
    for start in range(0, len(sources), bs):
        chunk = list(sources[start : start + bs])
        done: dict[int, Output] = {}
        for i, s in enumerate(chunk):
            try:
                tutor.build_prompt(s)
            except Exception as exc:
                if not is_refusal(exc):
                    raise
                done[i] = _refused(s, exc)
        runnable = [i for i in range(len(chunk)) if i not in done]
        try:
            corrections = tutor.correct_many([chunk[i] for i in runnable])
            done.update({i: _from_correction(c) for i, c in zip(runnable, corrections, strict=True)})
        except Exception as exc:
            if not is_refusal(exc):
                raise
            for i in runnable:  # one at a time, to find the refused ones
                try:
                    done[i] = _from_correction(tutor.correct(chunk[i]))
                except Exception as one:
                    if not is_refusal(one):
                        raise
                    done[i] = _refused(chunk[i], one)
        outputs += [done[i] for i in range(len(chunk))]
        if on_batch:
            on_batch(len(chunk))
    refused = sum(o.refused for o in outputs)
    if refused:
        log.info("%d of %d sentences refused", refused, len(outputs))
    return outputs


def predict_as_text(
    tutor: Tutor, sources: Sequence[str], on_batch: Callable[[int], None] | None = None
) -> list[Output]:
    """The tutor's corrections as the tutor page and `text` requests make them
    (`corrige.tutor.text`): a sentence too long for the window is cut at clause boundaries, the
    pieces that fit are corrected, one that does not is left as written. A row counts as
    abstained when nothing changed and some piece was not corrected (too long, abstained); a text
    the tutor refuses outright (`TextRefused`) as refused."""
    from corrige.tutor.text import TextRefused, correct_texts

    outputs: list[Output] = []
    bs = tutor.config.batch_size
    for start in range(0, len(sources), bs):
        chunk = list(sources[start : start + bs])
        for source, text in zip(chunk, correct_texts(tutor, chunk), strict=True):
            if isinstance(text, TextRefused):
                outputs.append(_refused(source, text))
                continue
            missed = [s for s in text.sentences if s.status in ("abstained", "too_long")]
            abstained = not text.changed and bool(missed)
            reason = (missed[0].reason or missed[0].status) if abstained else None
            outputs.append(Output(text.corrected, abstained, False, reason))
        if on_batch:
            on_batch(len(chunk))
    return outputs


def sweep(
    tutor: Tutor,
    rows: Sequence[Row],
    scorer: ErrantScorer,
    thresholds: Sequence[float] = SWEEP_THRESHOLDS,
    on_batch: Callable[[int], None] | None = None,
) -> dict[float, ErrantScores]:
    """ERRANT scores per abstention threshold (`TutorConfig.min_token_prob`), all read from one
    generation per row."""
    from corrige.evaluation import harness

    generated = harness.generate_all(tutor, [harness.EvalItem(r.source, r.reference) for r in rows], on_batch)
    base = tutor.config
    results: dict[float, ErrantScores] = {}
    try:
        for t in sorted(set(thresholds)):
            tutor.config = replace(base, min_token_prob=t)
            outputs = [
                Output(g.item.source, refused=True, reason=PromptTooLong.code)
                if g.generation is None
                else _from_correction(c)
                for g, c in zip(generated, harness.interpret_all(tutor, generated), strict=True)
            ]
            results[t] = scorer.score(rows, outputs)
    finally:
        tutor.config = base
    return results


def read_predictions(path: str | Path) -> tuple[list[Row], list[Output]]:
    """A predictions TSV (source, prediction, reference; abstained, refused and reason optional)."""
    path = Path(path)
    header, records = tsv_records(path)
    missing = [c for c in PREDICTION_COLUMNS[:3] if c not in header]
    if missing:
        raise ValueError(f"{path}: a predictions file needs columns {', '.join(missing)}; got {header}")
    rows, outputs = [], []
    for rec in records:
        rows.append(Row(rec["source"], rec["reference"]))
        outputs.append(
            Output(
                rec["prediction"],
                _flag(rec.get("abstained")),
                _flag(rec.get("refused")),
                rec.get("reason") or None,
            )
        )
    return rows, outputs


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes"}


def write_predictions(path: str | Path, rows: Sequence[Row], outputs: Sequence[Output]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)

    def cell(text: str) -> str:
        return " ".join(text.split())  # no tabs or newlines inside a cell

    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", quoting=csv.QUOTE_NONE, escapechar="\\", lineterminator="\n")
        w.writerow(PREDICTION_COLUMNS)
        for row, out in zip(rows, outputs, strict=True):
            w.writerow(
                [
                    cell(row.source),
                    cell(out.prediction),
                    cell(row.reference),
                    int(out.abstained),
                    int(out.refused),
                    out.reason or "",
                ]
            )
    return path
