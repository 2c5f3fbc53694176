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

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from corrige.model.ngram import NgramLM
from corrige.tutor.candidates import ARTICLES, Candidate, ConfusionSets, candidate_edit, candidates
from corrige.tutor.edits import Edit, Token, apply_edits, start_in_corrected, tokenize

log = logging.getLogger(__name__)


MARGINS_FILE = "rescoring.json"


@dataclass(frozen=True)
class RescoringConfig:
    """Margins in ln-probability of the whole sentence, per family of candidates and kind of change
    ("article/insert", "preposition/replace", ...), tuned on a public learner set's dev half; a
    family and kind with no margin proposes nothing."""

    margins: tuple[tuple[str, float], ...] = ()
    max_edits: int = 3

    @classmethod
    def load(cls, directory: Path) -> RescoringConfig:
        """The margins a language model's directory keeps beside it (`rescoring.json`)."""
        data = json.loads((directory / MARGINS_FILE).read_text(encoding="utf-8"))
        return cls(tuple(sorted(data["margins"].items())), int(data.get("max_edits", 3)))

    def to_json(self) -> str:
        return json.dumps({"margins": dict(self.margins), "max_edits": self.max_edits}, indent=2) + "\n"


class Rescorer:
    """One-word corrections a language model prefers (see the module's docstring)."""

    def __init__(self, lm: NgramLM, sets: ConfusionSets | None = None, config: RescoringConfig | None = None):
        self.lm = lm
        self.sets = sets or ConfusionSets.load()
        self.config = config or RescoringConfig()
        self._margins = dict(self.config.margins)

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
        scored = self.scored(tokens, locked)
        best, best_gain = None, 0.0
        for c, gain in scored:
            excess = gain - self._margins[f"{c.family}/{c.kind}"]
            if excess > 0 and (best is None or excess > best_gain):
                best, best_gain = c, excess
        if best is None:
            return None
        log.debug("rescoring: %s (+%.2f past the margin)", best, best_gain)
        return candidate_edit(tokens, text, best)

    def unwanted_articles(self, sentence: str, edits: Sequence[Edit]) -> list[Edit]:
        """The edits of `sentence` that put an article before a word (*spectacular → a spectacular*)
        where the language model likes the corrected sentence better without it: *It was a
        spectacular.* An article the tutor puts in must make the sentence more likely (*She is a
        nurse.*, *I have a car.*); the model that proposed it reads the learner's words, not English."""
        inserted = [e for e in edits if _puts_article_before(e)]
        if not inserted:
            return []
        corrected = apply_edits(sentence, edits)
        tokens = tokenize(corrected)
        words = [t.text.lower().replace("’", "'") for t in tokens]
        at = {t.start: k for k, t in enumerate(tokens)}
        unwanted = []
        for e in inserted:
            k = at.get(start_in_corrected(e, edits))
            if k is not None and float(self.lm.change_gains(words, [(k, k + 1, ())])[0]) > 0.0:
                unwanted.append(e)
        return unwanted

    def scored(self, tokens: list[Token], locked: frozenset[int] = frozenset()) -> list[tuple[Candidate, float]]:
        """Every candidate of a tokenised sentence whose family and kind have a margin, with how
        much it raises the sentence's ln-probability."""
        found = candidates(tokens, self.sets, self.known, locked, wanted=self._margins)
        if not found:
            return []
        words = [t.text.lower().replace("’", "'") for t in tokens]
        gains = self.lm.change_gains(words, [(c.i, c.j, c.words) for c in found])
        return [(c, float(g)) for c, g in zip(found, gains, strict=True)]


def _puts_article_before(e: Edit) -> bool:
    """*spectacular → a spectacular*, *espectacular → a spectacular*: an article put in before one
    word, which the edit keeps or spells anew."""
    new, old = e.replacement.split(), e.original.split()
    return len(new) == 2 and len(old) == 1 and new[0].lower() in ARTICLES and old[0].lower() not in ARTICLES


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
