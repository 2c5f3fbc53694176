"""The rule behind each edit: the best rule card for every edit, one at a time.

The server loads one retriever at start-up (`corrige.tutor.retrieval.Retriever`, as the
`rules` setting says); the portal asks it per edit rather than per sentence, so each
highlighted change on the page sits next to its own rule. A hybrid search runs the encoder
(about 10 ms of CPU), so searches run on a worker thread, never on the event loop, and
answers are cached: a quiz question's card costs a search only the first time anyone sees it.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol

EditKey = tuple[str, str, str, str]  # (sentence, original, replacement, category)
CACHE_SIZE = 4096


class EditLike(Protocol):
    original: str
    replacement: str
    category: str


class RuleCards:
    """Cards (`RuleHit.summary()` dicts) for edits, from a retriever, with an LRU cache."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size = size
        self._cache: OrderedDict[EditKey, dict | None] = OrderedDict()
        self._lock = threading.Lock()

    async def for_edits(self, retriever, sentence: str, edits: Sequence[EditLike]) -> list[dict | None]:
        """One card (or None) per edit; no retriever (rules off): no cards."""
        if retriever is None or not edits:
            return [None] * len(edits)
        keys = [(sentence, e.original, e.replacement, e.category) for e in edits]
        with self._lock:
            if all(k in self._cache for k in keys):  # the common case: no thread hop
                return [self._cache[k] for k in keys]
        return await asyncio.to_thread(self._search, retriever, keys)

    def _search(self, retriever, keys: list[EditKey]) -> list[dict | None]:
        cards = []
        for key in keys:
            with self._lock:
                found = key in self._cache
                card = self._cache.get(key)
            if not found:
                sentence, original, replacement, category = key
                hits = retriever.search(sentence, [(original, replacement)], [category], k=1)
                card = hits[0].summary() if hits else None
                with self._lock:
                    self._cache[key] = card
                    while len(self._cache) > self.size:
                        self._cache.popitem(last=False)
            cards.append(card)
        return cards
