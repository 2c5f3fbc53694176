"""Inline highlighting: a sentence and its edits as runs of kept, removed and added text.

    >>> from corrige.tutor.edits import diff_edits
    >>> [(s.kind, s.text) for s in segments("I goed home.", diff_edits("I goed home.", "I went home."))]
    [('same', 'I '), ('del', 'goed'), ('ins', 'went'), ('same', ' home.')]

Templates render `del` and `ins` runs as `<del>` / `<ins>` with a hidden word for screen
readers ("quitado", "añadido"), since most of them do not announce the elements.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from corrige.tutor.edits import Edit


@dataclass(frozen=True, slots=True)
class Segment:
    kind: Literal["same", "del", "ins"]
    text: str
    category: str | None = None


def segments(sentence: str, edits: Iterable[Edit]) -> list[Segment]:
    """Runs of `sentence` with each edit shown as its removed text, then its added text."""
    out: list[Segment] = []
    pos = 0
    for edit in sorted(edits, key=lambda e: e.start):
        if edit.start < pos:  # overlapping edits cannot be shown inline; keep the first
            continue
        if edit.start > pos:
            out.append(Segment("same", sentence[pos : edit.start]))
        if edit.original:
            out.append(Segment("del", edit.original, edit.category))
        if edit.replacement:
            out.append(Segment("ins", edit.replacement, edit.category))
        pos = edit.end
    if pos < len(sentence):
        out.append(Segment("same", sentence[pos:]))
    return out


def answer_segments(answer: str, expected: str) -> list[Segment]:
    """The learner's answer, marked up into the expected correction."""
    from corrige.tutor.edits import diff_edits

    return segments(answer, diff_edits(answer, expected))
