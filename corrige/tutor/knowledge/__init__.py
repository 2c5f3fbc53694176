"""Grammar rule cards: the knowledge the tutor cites when it explains a correction.

A card explains one rule (a sub-rule of one error category) to a Spanish speaker: a title, a
Spanish explanation of one to three sentences that names the Spanish interference, two or
three English examples (wrong → right), the category id (one of ``categories.CATEGORY_IDS``),
a CEFR level and optional English/Spanish keywords that help retrieval.

Two optional fields narrow where a card may be shown beside an edit (`card_fit`), for a card
whose examples go the same way as another card's but whose rule holds only in some places:
``words``, the words the card is about (an edit fits it only if it puts one of them in: the
"good → better" card is not for "more cheaper → cheaper"), and ``cue``, a regular expression the
learner's sentence must match (the "Are there…?" card only beside a question).

Cards live in the ``cards_*.toml`` files next to this module (``[[card]]`` tables) and are
validated with pydantic when loaded; any problem raises ``CardError`` naming the file and the
card::

    >>> card = next(c for c in load_cards() if c.id == "preposition_married_to")
    >>> card.category, card.examples[0].right
    ('preposition', 'My uncle is married to Laura.')
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from corrige.tutor.categories import CATEGORY_IDS, LABELS

CARDS_DIR = Path(__file__).parent
CARD_GLOB = "cards_*.toml"
LEVELS = ("A1", "A2", "B1", "B2")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[¿¡'«A-ZÁÉÍÓÚÑ])")


class CardError(ValueError):
    """A card file that cannot be read or does not follow the schema."""


class CardExample(BaseModel):
    """One English example: what the learner writes and the correction."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    wrong: str = Field(min_length=3, max_length=160)
    right: str = Field(min_length=3, max_length=160)

    @model_validator(mode="after")
    def _differ(self) -> CardExample:
        if self.wrong == self.right:
            raise ValueError(f"wrong and right are the same: {self.wrong!r}")
        return self


class Card(BaseModel):
    """A rule card (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=64)
    category: str
    level: Literal["A1", "A2", "B1", "B2"]
    title: str = Field(min_length=5, max_length=90)
    explanation: str = Field(min_length=40, max_length=480)
    examples: tuple[CardExample, ...] = Field(min_length=2, max_length=3)
    keywords: tuple[str, ...] = ()
    words: tuple[str, ...] = ()  # the card teaches these words only (lower case): see the module docstring
    cue: str | None = None  # a regular expression (case ignored) the sentence must match; `<edit>`: its words

    @field_validator("words")
    @classmethod
    def _lower_case(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        upper = [w for w in value if w != w.lower()]
        if upper:
            raise ValueError(f"words are written in lower case: {upper}")
        return value

    @field_validator("cue")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value.replace("<edit>", "edit"))
            except re.error as exc:
                raise ValueError(f"cue is not a regular expression: {exc}") from exc
        return value

    @field_validator("category")
    @classmethod
    def _known_category(cls, value: str) -> str:
        if value not in CATEGORY_IDS:
            raise ValueError(f"unknown category {value!r}; expected one of: {', '.join(CATEGORY_IDS)}")
        return value

    @field_validator("explanation")
    @classmethod
    def _sentences(cls, value: str) -> str:
        n = len(sentences(value))
        if n > 3:
            raise ValueError(f"explanation has {n} sentences; at most 3")
        return value

    @property
    def label(self) -> str:
        """The category's Spanish label (as the tutor writes it in the gloss)."""
        return LABELS[self.category]

    @property
    def short_explanation(self) -> str:
        """The first sentence of the explanation."""
        return sentences(self.explanation)[0]

    def summary(self) -> dict[str, object]:
        """What a response shows: id, title, short explanation and one example."""
        ex = self.examples[0]
        return {
            "id": self.id,
            "title": self.title,
            "category": self.category,
            "level": self.level,
            "explanation": self.short_explanation,
            "example": {"wrong": ex.wrong, "right": ex.right},
        }


def sentences(text: str) -> list[str]:
    """Split a Spanish explanation into sentences (at . ! ? followed by a capital or quote)."""
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def _read(path: Path) -> list[Card]:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise CardError(f"{path.name}: cannot read card file: {exc}") from exc
    unknown = set(raw) - {"card"}
    if unknown:
        raise CardError(f"{path.name}: unexpected top-level keys {sorted(unknown)}; cards go in [[card]] tables")
    cards = []
    for i, entry in enumerate(raw.get("card", [])):
        name = entry.get("id", f"#{i + 1}") if isinstance(entry, dict) else f"#{i + 1}"
        try:
            cards.append(Card.model_validate(entry))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'card'}: {err['msg']}" for err in exc.errors()
            )
            raise CardError(f"{path.name}: card {name}: {problems}") from exc
    return cards


def load_cards(paths: Iterable[Path | str] | None = None) -> list[Card]:
    """Every card in ``paths`` (default: the bundled ``cards_*.toml``), in file order.

    Raises CardError for unreadable files, schema errors, unknown categories and duplicate ids.
    """
    files = sorted(CARDS_DIR.glob(CARD_GLOB)) if paths is None else [Path(p) for p in paths]
    if not files:
        raise CardError(f"no card files found in {CARDS_DIR}")
    cards: list[Card] = []
    seen: dict[str, str] = {}
    for path in files:
        for card in _read(path):
            if card.id in seen:
                raise CardError(f"{path.name}: duplicate card id {card.id!r} (also in {seen[card.id]})")
            seen[card.id] = path.name
            cards.append(card)
    return cards


@lru_cache(maxsize=1)
def bundled_cards() -> tuple[Card, ...]:
    """The bundled cards, loaded and validated once per process."""
    return tuple(load_cards())


def cards_digest(cards: Iterable[Card]) -> str:
    """A hash of the cards' content, to key caches of anything computed from them."""
    blob = json.dumps([c.model_dump(mode="json") for c in cards], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


__all__ = ["LEVELS", "Card", "CardError", "CardExample", "bundled_cards", "cards_digest", "load_cards", "sentences"]
