"""The tutor's target text: ``corrected / gloss``.

The model reads ``<bos> sentence <sep>`` and writes ``corrected / gloss <eos>``. The gloss is
``sin errores`` or a ``; ``-joined list of ``<spanish label>: <original> → <replacement>`` items,
in the order the errors appear in the sentence. Insertions and deletions are written with the
neighbouring word so both sides are non-empty (``falta el sujeto: Is → It is``).

Parsing is lenient because it also reads model output: a malformed gloss item is skipped, and
only a target without the `` / `` separator is rejected.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from corrige.tutor.categories import id_of

NO_ERRORS_GLOSS = "sin errores"
TARGET_SEPARATOR = " / "
ITEM_SEPARATOR = "; "
LABEL_SEPARATOR = ": "
ARROW = " → "


@dataclass(frozen=True)
class GlossItem:
    """One explained correction."""

    label: str
    original: str
    replacement: str

    @property
    def category(self) -> str:
        """Category id recovered from the Spanish label (``other`` when unknown)."""
        return id_of(self.label)

    def __str__(self) -> str:
        return f"{self.label}{LABEL_SEPARATOR}{self.original}{ARROW}{self.replacement}"


def render_target(corrected: str, gloss: str) -> str:
    """``corrected / gloss``; the gloss must not contain the separator, or parsing breaks."""
    if TARGET_SEPARATOR in gloss:
        raise ValueError(f"gloss contains {TARGET_SEPARATOR!r}: {gloss!r}")
    return f"{corrected}{TARGET_SEPARATOR}{gloss}"


def parse_target(text: str) -> tuple[str, str] | None:
    """Split a target on the last `` / ``; None when there is no separator or a side is empty.

    The last separator is used because the corrected sentence may itself contain " / " (a
    learner can type it) while the gloss never does.
    """
    corrected, sep, gloss = text.strip().rpartition(TARGET_SEPARATOR)
    if not sep or not corrected.strip() or not gloss.strip():
        return None
    return corrected.strip(), gloss.strip()


def render_gloss(items: Sequence[GlossItem]) -> str:
    """Join items in sentence order; no items means ``sin errores``."""
    return ITEM_SEPARATOR.join(str(i) for i in items) if items else NO_ERRORS_GLOSS


def split_gloss(gloss: str) -> list[GlossItem]:
    """The items of a gloss (empty for ``sin errores``); malformed items are skipped."""
    gloss = gloss.strip()
    if not gloss or gloss == NO_ERRORS_GLOSS:
        return []
    items = []
    for raw in gloss.split(ITEM_SEPARATOR.strip()):
        label, sep, rest = raw.strip().partition(LABEL_SEPARATOR.strip())
        original, arrow, replacement = rest.partition(ARROW.strip())
        if not sep or not arrow or not label.strip():
            continue
        items.append(GlossItem(label.strip(), original.strip(), replacement.strip()))
    return items
