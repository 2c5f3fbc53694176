"""Corrections a language model prefers: candidates scored, the best kept when it wins clearly.

Bryant & Briscoe (2018) correct learners' writing with a language model and confusion sets,
without annotated training data: for a sentence, score every candidate that changes one word
(`corrige.tutor.candidates`) and keep the one whose sentence is most likely, when it beats the
sentence as written by a margin; then look again at the corrected sentence, for up to
`max_edits` edits. The margins (in natural-log units of the whole sentence's probability) are
tuned on a public learner set's dev half, one per kind of change, because an added word always
costs probability and a dropped one always saves some.

Precision comes first: a margin high enough that a correct sentence is rarely changed, words the
model does not know never judged, and the words the tutor already changed left alone.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from corrige.model.ngram import UNK, NgramLM, words_of
from corrige.tutor.candidates import Candidate, ConfusionSets, candidate_edit, candidates
from corrige.tutor.edits import Edit, apply_edits, tokenize

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RescoringConfig:
    """Margins in ln-probability of the whole sentence, per kind of change (tuned on JFLEG dev)."""

    replace_margin: float = 3.0
    insert_margin: float = 3.0
    delete_margin: float = 5.0
    max_edits: int = 3

    def margin(self, kind: str) -> float:
        return {"replace": self.replace_margin, "insert": self.insert_margin, "delete": self.delete_margin}[kind]


class Rescorer:
    """One-word corrections a language model prefers (see the module's docstring)."""

    def __init__(self, lm: NgramLM, sets: ConfusionSets | None = None, config: RescoringConfig | None = None):
        self.lm = lm
        self.sets = sets or ConfusionSets.load()
        self.config = config or RescoringConfig()
        self._unk = lm.index[UNK]

    def known(self, word: str) -> bool:
        return word.lower() in self.lm.index

    def fixes(self, text: str, locked_spans: list[tuple[int, int]] | None = None) -> list[Edit]:
        """Edits of `text` the language model prefers, none touching `locked_spans` (character
        spans the tutor already changed); at most `max_edits`, each judged after the ones before."""
        edits: list[Edit] = []
        spans = list(locked_spans or [])
        current = text
        for _ in range(self.config.max_edits):
            best = self._best(current, spans)
            if best is None:
                break
            edits.append(best)
            current = apply_edits(current, [best])
            shift = len(best.replacement) - (best.end - best.start)
            spans = [(a + shift, b + shift) if a >= best.end else (a, b) for a, b in spans]
            spans.append((best.start, best.start + len(best.replacement)))
        return _in_original(text, edits)

    def _best(self, text: str, spans: list[tuple[int, int]]) -> Edit | None:
        tokens = tokenize(text)
        if not tokens:
            return None
        locked = frozenset(k for k, t in enumerate(tokens) if any(t.start < b and a < t.end for a, b in spans))
        found = candidates(tokens, self.sets, self.known, locked)
        if not found:
            return None
        words = [t.text for t in tokens]
        base = [w.lower() for w in words]
        sentences = [words_of(" ".join(base))] + [_apply(base, c) for c in found]
        scores = self.lm.score_many(sentences)
        gains = scores[1:] - scores[0]
        best, best_gain = None, 0.0
        for c, gain in zip(found, gains, strict=True):
            excess = float(gain) - self.config.margin(c.kind)
            if excess > 0 and (best is None or excess > best_gain):
                best, best_gain = c, excess
        if best is None:
            return None
        log.debug("rescoring: %s (+%.2f past the margin)", best, best_gain)
        return candidate_edit(tokens, text, best)


def _apply(words: list[str], c: Candidate) -> list[str]:
    return words_of(" ".join([*words[: c.i], *c.words, *words[c.j :]]))


def _in_original(text: str, edits: list[Edit]) -> list[Edit]:
    """Edits made one after another, as edits of the original `text` (each applied to the text the
    ones before made): shifted back by what the earlier ones changed before them."""
    out: list[Edit] = []
    for k, e in enumerate(edits):
        start, end = e.start, e.end
        for prev in reversed(edits[:k]):
            if prev.start + len(prev.replacement) <= start:
                delta = len(prev.replacement) - (prev.end - prev.start)
                start, end = start - delta, end - delta
        out.append(Edit(start, end, text[start:end], e.replacement, e.category))
    return out
