"""The rule behind each edit: the best rule card for every edit, one at a time.

The portal asks per edit rather than per sentence, so each highlighted change on the page sits
next to its own rule. The cards come from the server's rule lookup
(`corrige.tutor.rule_lookup.RuleLookup.cards_for`): its cache (a quiz question's card costs a
search only the first time anyone sees it), its worker thread for the encoder, and its BM25
answer when the server is busy.
"""

from __future__ import annotations

from collections.abc import Sequence

from corrige.tutor.edits import Edit
from corrige.tutor.rule_lookup import RuleLookup


class RuleCards:
    """Cards (`RuleHit.summary()` dicts) for edits, one per edit."""

    async def for_edits(self, lookup: RuleLookup | None, edits: Sequence[tuple[str, Edit]]) -> list[dict | None]:
        """One card (or None) per (sentence, edit); no lookup (rules off): no cards."""
        if lookup is None or not edits:
            return [None] * len(edits)
        return await lookup.cards_for(edits)
