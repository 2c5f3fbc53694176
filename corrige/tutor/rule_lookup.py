"""Rule cards for a correction, at serve time.

The query is the learner's sentence, the tutor's edits and their categories (see
`retrieval.build_query`). A sentence the tutor left unchanged needs no card and costs nothing.
Hybrid retrieval runs the bi-encoder, whose forward pass (~10 ms on one core) would stall an
event loop, so `find` runs it on one worker thread; answers are kept in a small LRU cache,
since the same mistake in the same words comes back often (a class doing the same exercise).

    lookup = RuleLookup(Retriever.load(), k=3)
    hits = await lookup.find(correction)
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor

from corrige.tutor.agent import Correction
from corrige.tutor.retrieval import Mode, Retriever, RuleHit

Key = tuple[str, tuple[tuple[str, str], ...], tuple[str, ...]]


class RuleLookup:
    def __init__(self, retriever: Retriever, k: int = 3, cache_size: int = 4096, mode: Mode | None = None) -> None:
        self.retriever = retriever
        self.k = k
        self.mode: Mode = mode or retriever.mode
        self.cache_size = cache_size
        self._cache: OrderedDict[Key, tuple[RuleHit, ...]] = OrderedDict()
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rules")
        self.hits = self.misses = 0

    @staticmethod
    def key(correction: Correction) -> Key | None:
        """The query of a correction, or None when it has no edits (nothing to explain)."""
        if not correction.edits:
            return None
        edits = tuple((e.original, e.replacement) for e in correction.edits)
        categories = tuple(dict.fromkeys(e.category for e in correction.edits))
        return correction.sentence, edits, categories

    def lookup(self, correction: Correction) -> list[RuleHit]:
        """The top cards, computed on the calling thread."""
        key = self.key(correction)
        if key is None:
            return []
        cached = self._cached(key)
        if cached is not None:
            return list(cached)
        return list(self._search(key))

    async def find(self, correction: Correction) -> list[RuleHit]:
        """`lookup`, with any encoder work on the worker thread so the event loop keeps serving."""
        key = self.key(correction)
        if key is None:
            return []
        cached = self._cached(key)
        if cached is not None:
            return list(cached)
        if self.mode == "bm25":  # a fraction of a millisecond: not worth a thread hop
            return list(self._search(key))
        return list(await asyncio.get_running_loop().run_in_executor(self._executor, self._search, key))

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)

    # ---- internals ----

    def _cached(self, key: Key) -> tuple[RuleHit, ...] | None:
        with self._lock:
            hits = self._cache.get(key)
            if hits is None:
                self.misses += 1
                return None
            self._cache.move_to_end(key)
            self.hits += 1
            return hits

    def _search(self, key: Key) -> tuple[RuleHit, ...]:
        sentence, edits, categories = key
        hits = tuple(self.retriever.search(sentence, edits, categories, k=self.k, mode=self.mode))
        with self._lock:
            self._cache[key] = hits
            self._cache.move_to_end(key)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return hits
