"""Tutor metrics: exact match, M2-style edit precision/recall/F0.5, false alarms, abstentions
and a per-category table.

Edits are compared as ``(start, end, replacement)`` on the source, with both the reference
and the prediction aligned by ``edits.diff_edits`` so that they are cut the same way. An
abstention (the tutor declines to answer) counts as leaving the sentence unchanged: it costs
recall, never precision, and is reported separately. Empty denominators follow the M2
convention (precision and recall are 1.0 when there is nothing to find or nothing proposed).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from corrige.tutor.answer_text import split_gloss
from corrige.tutor.edits import Edit, diff_edits


@dataclass(frozen=True)
class Record:
    """One evaluated sentence.

    ``reference_gloss`` is optional; it lets the per-category table attribute each reference
    edit when a sentence has several categories (with one category, all its edits go to it;
    with several and no gloss, to ``other``).
    """

    source: str
    reference: str
    prediction: str
    predicted_gloss: str | None = None
    abstained: bool = False
    reference_categories: Sequence[str] = ()
    reference_gloss: str | None = None


@dataclass(frozen=True)
class CategoryScore:
    """How the tutor does on one error category."""

    category: str
    sentences: int
    exact_match: float
    reference_edits: int
    recall: float
    predicted_edits: int
    precision: float


@dataclass(frozen=True)
class Metrics:
    """Corpus-level scores (see module docstring for conventions)."""

    n: int
    exact_match: float
    precision: float
    recall: float
    f05: float
    true_positives: int
    false_positives: int
    false_negatives: int
    false_alarm_rate: float
    correct_sources: int
    abstain_rate: float
    gloss_category_match: float
    per_category: dict[str, CategoryScore] = field(default_factory=dict)


def f_beta(precision: float, recall: float, beta: float = 0.5) -> float:
    """F-beta; beta < 1 weighs precision more (a tutor should not invent errors)."""
    b2 = beta * beta
    denom = b2 * precision + recall
    return (1 + b2) * precision * recall / denom if denom else 0.0


def _ratio(num: int, den: int, empty: float) -> float:
    return num / den if den else empty


def _reference_edits(r: Record) -> list[Edit]:
    gloss = r.reference_gloss
    edits = diff_edits(r.source, r.reference, gloss)
    if gloss is None and len(set(r.reference_categories)) == 1:
        only = r.reference_categories[0]
        edits = [Edit(e.start, e.end, e.original, e.replacement, only) for e in edits]
    return edits


def _predicted_categories(r: Record) -> list[str]:
    return sorted(i.category for i in split_gloss(r.predicted_gloss or ""))


def evaluate(records: Iterable[Record | Sequence]) -> Metrics:
    """Score predictions; tuples are read as ``Record`` fields in order."""
    recs = [r if isinstance(r, Record) else Record(*r) for r in records]
    tp = fp = fn = exact = abstained = correct_sources = false_alarms = 0
    gloss_total = gloss_match = 0
    cat_sent: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # sentences, exact
    cat_ref: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # reference edits, found
    cat_pred: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # predicted edits, right
    for r in recs:
        prediction = r.source if r.abstained else r.prediction
        abstained += r.abstained
        is_exact = prediction == r.reference
        exact += is_exact
        if r.source == r.reference:
            correct_sources += 1
            false_alarms += prediction != r.source
        ref = _reference_edits(r)
        hyp = diff_edits(r.source, prediction, None if r.abstained else r.predicted_gloss)
        ref_keys = {e.key for e in ref}
        hyp_keys = {e.key for e in hyp}
        tp += len(ref_keys & hyp_keys)
        fp += len(hyp_keys - ref_keys)
        fn += len(ref_keys - hyp_keys)
        for cat in set(r.reference_categories):
            cat_sent[cat][0] += 1
            cat_sent[cat][1] += is_exact
        for e in ref:
            cat_ref[e.category][0] += 1
            cat_ref[e.category][1] += e.key in hyp_keys
        if r.predicted_gloss is not None and not r.abstained:
            for e in hyp:
                cat_pred[e.category][0] += 1
                cat_pred[e.category][1] += e.key in ref_keys
            gloss_total += 1
            gloss_match += _predicted_categories(r) == sorted(r.reference_categories)
    precision = _ratio(tp, tp + fp, 1.0)
    recall = _ratio(tp, tp + fn, 1.0)
    n = len(recs)
    per_category = {
        cat: CategoryScore(
            category=cat,
            sentences=cat_sent[cat][0],
            exact_match=_ratio(cat_sent[cat][1], cat_sent[cat][0], 0.0),
            reference_edits=cat_ref[cat][0],
            recall=_ratio(cat_ref[cat][1], cat_ref[cat][0], 1.0),
            predicted_edits=cat_pred[cat][0],
            precision=_ratio(cat_pred[cat][1], cat_pred[cat][0], 1.0),
        )
        for cat in sorted(set(cat_sent) | set(cat_ref) | set(cat_pred))
    }
    return Metrics(
        n=n,
        exact_match=_ratio(exact, n, 0.0),
        precision=precision,
        recall=recall,
        f05=f_beta(precision, recall),
        true_positives=tp,
        false_positives=fp,
        false_negatives=fn,
        false_alarm_rate=_ratio(false_alarms, correct_sources, 0.0),
        correct_sources=correct_sources,
        abstain_rate=_ratio(abstained, n, 0.0),
        gloss_category_match=_ratio(gloss_match, gloss_total, 0.0),
        per_category=per_category,
    )
