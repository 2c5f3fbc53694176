"""Edit-level card check: for every edit the tutor makes on a set of sentences, is the first card
shown beside it one that teaches it?

Two ways of choosing the first card are compared on the same edits and the same retrieval:

* ``category first``: the retrieved cards with those of the edit's category put first (the rule
  before `card_fit`), whatever way their examples go;
* ``teaching``: only cards of the edit's category with an example going the same way
  (`rule_lookup.teaching`), none when no card does.

Each is scored by what an edit shows: a card of its category; a card that goes its way
(`card_fit.fits`); and, where the sub-rule matchers of ``expected_cards.py`` (written for the
retrieval evaluation, independently of `card_fit`) can pin the card an edit needs, that card.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from corrige.evaluation.expected_cards import expected_cards
from corrige.tutor.card_fit import fits
from corrige.tutor.knowledge import Card
from corrige.tutor.retrieval import Retriever
from corrige.tutor.rule_lookup import teaching

POLICIES = ("category first", "teaching")


@dataclass(frozen=True)
class EditCase:
    sentence: str
    original: str
    replacement: str
    category: str


@dataclass
class PolicyScore:
    edits: int = 0
    shown: int = 0  # edits with a card
    same_category: int = 0
    same_way: int = 0
    pinned: int = 0  # edits whose card a sub-rule matcher pins
    pinned_right: int = 0
    wrong: list[tuple[EditCase, str]] = field(default_factory=list)  # a card shown that does not teach the edit
    # a pinned edit shown another card: (edit, card shown, cards expected)
    off_pin: list[tuple[EditCase, str, frozenset[str]]] = field(default_factory=list)

    def as_dict(self) -> dict[str, float | int]:
        shown = max(self.shown, 1)
        return {
            "edits": self.edits,
            "shown": self.shown,
            "category_agreement": round(self.same_category / shown, 4),
            "direction_agreement": round(self.same_way / shown, 4),
            "pinned": self.pinned,
            "pinned_agreement": round(self.pinned_right / max(self.pinned, 1), 4),
        }


def read_sentences(path: Path) -> list[str]:
    """Source sentences: a TSV's first column (header skipped), or one sentence a line."""
    if path.suffix == ".tsv":
        with path.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
        return [row[0] for row in rows[1:] if row and row[0].strip()]
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def tutor_edits(tutor: object, sentences: Sequence[str]) -> list[EditCase]:
    """Every edit the tutor makes on the sentences (abstentions make none)."""
    from corrige.tutor.agent import Tutor

    assert isinstance(tutor, Tutor)
    cases = []
    for c in tutor.correct_many(list(sentences)):
        cases += [EditCase(c.sentence, e.original, e.replacement, e.category) for e in c.edits]
    return cases


def first_cards(retriever: Retriever, case: EditCase, k_old: int = 9) -> dict[str, Card | None]:
    """The first card each policy shows beside the edit."""
    edits, categories = ((case.original, case.replacement),), (case.category,)
    ranked = retriever.search(case.sentence, edits, categories, k=len(retriever.cards))
    old = ranked[:k_old]
    old = [h for h in old if h.card.category == case.category] + [h for h in old if h.card.category != case.category]
    new = teaching(ranked, edits, categories, case.sentence)
    return {"category first": old[0].card if old else None, "teaching": new[0].card if new else None}


def score(retriever: Retriever, cases: Sequence[EditCase]) -> dict[str, PolicyScore]:
    scores = {p: PolicyScore() for p in POLICIES}
    for case in cases:
        wanted, pinned = expected_cards(case.category, case.original, case.replacement, case.sentence, retriever.cards)
        for policy, card in first_cards(retriever, case).items():
            s = scores[policy]
            s.edits += 1
            if card is None:
                continue
            s.shown += 1
            s.same_category += card.category == case.category
            way = fits(card, case.category, case.original, case.replacement, case.sentence)
            s.same_way += way
            if pinned:
                s.pinned += 1
                s.pinned_right += card.id in wanted
                if card.id not in wanted:
                    s.off_pin.append((case, card.id, wanted))
            if not way:
                s.wrong.append((case, card.id))
    return scores
