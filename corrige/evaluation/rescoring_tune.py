"""Choose the rescoring margins on a public learner set's dev half (`corrige lm tune`).

For every sentence, every candidate of every family is scored once, alone, on the sentence as
written; ERRANT then says whether the candidate's edit is one a reference makes (any of the
set's references: JFLEG has four). Per family and kind of change ("article/insert"), the
candidates sorted by gain give a precision curve; the margin is the lowest gain at which the
candidates above it are still right at least `target` of the time, with at least `min_support`
of them right. A family and kind that never gets there gets no margin: it proposes nothing.

Tune on a dev half only; report on the test half and on sets never used for tuning.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from corrige.evaluation.errant_scoring import ErrantScorer, Row
from corrige.tutor.candidates import candidate_edit
from corrige.tutor.edits import apply_edits, tokenize
from corrige.tutor.rescoring import Rescorer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outcome:
    """One candidate on one sentence: its family/kind, its gain, and whether a reference agrees."""

    key: str
    gain: float
    right: bool


@dataclass(frozen=True)
class Choice:
    key: str
    margin: float | None  # None: the family and kind stay off
    right: int  # candidates above the margin a reference agrees with
    proposed: int  # candidates above the margin

    @property
    def precision(self) -> float:
        return self.right / self.proposed if self.proposed else 0.0


def outcomes(
    rescorer: Rescorer,
    references: Sequence[Sequence[Row]],
    scorer: ErrantScorer,
    min_gain: float = 0.0,
    per_key: int = 3,
    on_row: Callable[[int], None] | None = None,
) -> list[Outcome]:
    """Each candidate whose gain passes `min_gain` (the `per_key` best of each family and kind
    per sentence), judged against every reference: `references[r][k]` is reference r of row k."""
    found: list[Outcome] = []
    for k, row in enumerate(references[0]):
        tokens = tokenize(row.source)
        ranked = sorted(rescorer.scored(tokens), key=lambda cg: -cg[1])
        seen: dict[str, int] = {}
        gold = {e.key for refs in references for e in scorer.reference_edits(refs[k])}
        for c, gain in ranked:
            key = f"{c.family}/{c.kind}"
            if gain <= min_gain or seen.get(key, 0) >= per_key:
                continue
            seen[key] = seen.get(key, 0) + 1
            hyp = apply_edits(row.source, [candidate_edit(tokens, row.source, c)])
            edits = scorer.edits(row, hyp)
            found.append(Outcome(key, gain, bool(edits) and all(e.key in gold for e in edits)))
        if on_row:
            on_row(1)
    return found


def clean_floors(rescorer: Rescorer, sentences: Sequence[str], share: float) -> dict[str, float]:
    """Per family and kind, the gain its best candidate must pass so that it changes at most
    `share` of `sentences`, which are correct English (a false alarm on each it changes)."""
    best: dict[str, list[float]] = {}
    for s in sentences:
        top: dict[str, float] = {}
        for c, gain in rescorer.scored(tokenize(s)):
            key = f"{c.family}/{c.kind}"
            top[key] = max(top.get(key, gain), gain)
        for key, gain in top.items():
            best.setdefault(key, []).append(gain)
    allowed = int(share * len(sentences))
    return {key: sorted(gains, reverse=True)[allowed] if len(gains) > allowed else 0.0 for key, gains in best.items()}


def choose(
    found: Sequence[Outcome], target: float, min_support: int = 5, floors: dict[str, float] | None = None
) -> list[Choice]:
    """Per family and kind, the lowest margin whose candidates above it are right at least
    `target` of the time (see the module's docstring), and never below its floor on correct
    sentences (`clean_floors`)."""
    choices = []
    for key in sorted({o.key for o in found}):
        floor = (floors or {}).get(key, 0.0)
        ranked = sorted((o for o in found if o.key == key and o.gain > floor), key=lambda o: -o.gain)
        best: Choice = Choice(key, None, 0, 0)
        right = 0
        for n, o in enumerate(ranked, start=1):
            right += o.right
            nxt = ranked[n].gain if n < len(ranked) else floor
            if o.gain == nxt:
                continue  # a margin cannot split equal gains
            if right >= min_support and right / n >= target and right > best.right:
                best = Choice(key, round((o.gain + nxt) / 2, 3), right, n)
        choices.append(best)
    return choices
