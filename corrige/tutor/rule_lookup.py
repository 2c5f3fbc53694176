"""Rule cards for a correction, at serve time.

The query is the learner's sentence, the tutor's edits and their categories (see
`retrieval.build_query`). A sentence the tutor left unchanged needs no card and costs nothing.
Hybrid retrieval runs the bi-encoder, whose forward pass (about 12 ms of one core, `corrige bench
retrieval`) costs more than the whole correction and would stall an event loop, so `find` runs it
on one worker thread (`warm` runs one search there at start-up).
When that thread is already busy, or the server is (`busy()`: other requests are being
served, decoded or wait for the model), the request does not queue behind the encoder: it gets BM25's
answer at once (a fraction of a millisecond; recall@5 0.99 against hybrid's 1.00 on the
evaluation queries), and `RuleAnswer.mode` says so. Under load the server thus degrades to
BM25 instead of letting rule cards take a core, and the GIL, from the model. Answers are kept
in a small LRU cache, since the same mistake in the same words comes back often (a class doing
the same exercise).

    lookup = RuleLookup(Retriever.load(), k=3)
    answer = await lookup.find(correction)     # answer.hits, answer.mode ("hybrid" or "bm25")
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from corrige.tutor.agent import Correction
from corrige.tutor.card_fit import fits, with_fitting_example_first
from corrige.tutor.edits import Edit
from corrige.tutor.knowledge import Card
from corrige.tutor.retrieval import Mode, Retriever, RuleHit

Key = tuple[str, tuple[tuple[str, str], ...], tuple[str, ...]]  # sentence, edits, each edit's category


@dataclass(frozen=True, slots=True)
class RuleAnswer:
    hits: tuple[RuleHit, ...]
    mode: str  # how they were found: hybrid, bm25, dense, or fit (the only card that fits: score 1)
    cached: bool = False
    degraded: bool = False  # hybrid was asked for, but the encoder was busy: BM25 answered


NO_RULES = RuleAnswer((), "none")
WARM_KEY: Key = ("I goed home.", (("goed", "went"),), ("past_irregular",))  # `warm`'s search


def teaching(
    hits: Sequence[RuleHit], edits: Sequence[tuple[str, str]], categories: Sequence[str], sentence: str | None = None
) -> list[RuleHit]:
    """The cards, in retrieval order, that teach one of the edits (`card_fit.fits`: the edit's
    category, an example going the same way, and the card's words and cue where it names them,
    in `sentence`); the others are dropped.

    The tutor already knows each edit's category; retrieval's job is to pick the card that
    explains it. Words shared with an unrelated card can outrank the right one ("She like
    cats" matches "I like football very much" better than the third-person cards; "a party in
    Friday" has the "in" of "interested in"), and such a card teaches the wrong rule however well
    it matches: no card is better than that one.
    """
    return [
        replace(h, card=with_fitting_example_first(h.card, _of_category(edits, categories, h.card.category)))
        for h in hits
        if teaches(h.card, edits, categories, sentence)
    ]


def _of_category(edits: Sequence[tuple[str, str]], categories: Sequence[str], category: str) -> list[tuple[str, str]]:
    return [e for e, c in zip(edits, categories, strict=True) if c == category]


def teaches(
    card: Card, edits: Sequence[tuple[str, str]], categories: Sequence[str], sentence: str | None = None
) -> bool:
    """Whether `card` fits one of the edits (`card_fit.fits`)."""
    if card.category not in categories:  # `fits` asks this first; asked here, most cards cost one test
        return False
    return any(fits(card, cat, o, r, sentence) for (o, r), cat in zip(edits, categories, strict=True))


class RuleLookup:
    def __init__(
        self,
        retriever: Retriever,
        k: int = 3,
        cache_size: int = 4096,
        mode: Mode | None = None,
        busy: Callable[[], bool] | None = None,
    ) -> None:
        self.retriever = retriever
        self.busy = busy  # True while the server has other work: the encoder then stays off
        self.k = k
        self.mode: Mode = mode or retriever.mode
        self.cache_size = cache_size
        self._cache: OrderedDict[Key, RuleAnswer] = OrderedDict()
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rules")
        self._in_flight = 0  # searches on the worker thread
        self.hits = self.misses = self.degraded = 0
        self.warm_ms: float | None = None  # `warm`'s search, once run

    @staticmethod
    def key(correction: Correction) -> Key | None:
        """The query of a correction, or None when it has no edits (nothing to explain)."""
        if not correction.edits:
            return None
        edits = tuple((e.original, e.replacement) for e in correction.edits)
        categories = tuple(e.category for e in correction.edits)  # one per edit
        return correction.sentence, edits, categories

    def lookup(self, correction: Correction) -> RuleAnswer:
        """The top cards, computed on the calling thread."""
        key = self.key(correction)
        if key is None:
            return NO_RULES
        return self._cached(key) or self._without_ranking(key) or self._search(key, self.mode)

    async def find(self, correction: Correction) -> RuleAnswer:
        """`lookup` without blocking the event loop: encoder work goes to the worker thread, or,
        when it is busy, BM25 answers instead."""
        key = self.key(correction)
        if key is None:
            return NO_RULES
        return (await self._find([key]))[0]

    async def cards_for(self, edits: Sequence[tuple[str, Edit]]) -> list[dict | None]:
        """The best card of each (sentence, edit) on its own (`RuleHit.summary()`, or None), found
        as `find` finds answers (the same cache; the searches a cache miss needs in one hop to the
        worker thread, or BM25's answers when it is busy): the learner portal sets each
        highlighted change next to its own rule."""
        keys: list[Key] = [(s, ((e.original, e.replacement),), (e.category,)) for s, e in edits]
        return [answer.hits[0].summary() if answer.hits else None for answer in await self._find(keys)]

    async def _find(self, keys: list[Key]) -> list[RuleAnswer]:
        answers = [self._cached(key) for key in keys]
        missing = [key for key, answer in zip(keys, answers, strict=True) if answer is None]
        if missing:
            found = iter(await self._search_missing(missing))
            answers = [answer or next(found) for answer in answers]
        return [answer for answer in answers if answer is not None]

    async def _search_missing(self, keys: list[Key]) -> list[RuleAnswer]:
        if self.mode == "bm25":  # a fraction of a millisecond: not worth a thread hop
            return [self._search(key, "bm25") for key in keys]
        settled = [self._without_ranking(key) for key in keys]
        ranked = iter(await self._ranked([key for key, answer in zip(keys, settled, strict=True) if answer is None]))
        return [answer or next(ranked) for answer in settled]

    async def _ranked(self, keys: list[Key]) -> list[RuleAnswer]:
        if not keys:
            return []
        server_busy = self.busy is not None and self.busy()
        with self._lock:
            busy = server_busy or self._in_flight > 0
            if not busy:
                self._in_flight += 1
        if busy:
            self.degraded += len(keys)
            return [RuleAnswer(self._search(key, "bm25", store=False).hits, "bm25", degraded=True) for key in keys]
        try:
            search = functools.partial(self._search_each, keys, self.mode)
            return await asyncio.get_running_loop().run_in_executor(self._executor, search)
        finally:
            with self._lock:
                self._in_flight -= 1

    async def warm(self) -> float:
        """One search on the worker thread, neither cached nor counted, so that the first request
        does not pay for first-call costs (the thread's start, the encoder's first forward pass).
        Returns its wall time in ms (the server logs it: the cold figure)."""
        start = time.perf_counter()
        await asyncio.get_running_loop().run_in_executor(self._executor, self._search, WARM_KEY, self.mode, False)
        self.warm_ms = (time.perf_counter() - start) * 1000
        return self.warm_ms

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)

    # ---- internals ----

    def _cached(self, key: Key) -> RuleAnswer | None:
        with self._lock:
            answer = self._cache.get(key)
            if answer is None:
                self.misses += 1
                return None
            self._cache.move_to_end(key)
            self.hits += 1
        return RuleAnswer(answer.hits, answer.mode, cached=True)

    def _without_ranking(self, key: Key) -> RuleAnswer | None:
        """The answer when at most one card fits the edits (most corrections: 3 in 4 on the dev
        sets): every ranking then shows that card alone, so the encoder, the dearest part of a
        one-client correction, is not run. Mode `fit`; None when several cards fit and their order
        is the ranker's call. (BM25 mode ranks as before: it is cheap.)"""
        if self.mode == "bm25":
            return None
        sentence, edits, categories = key
        fitting = [card for card in self.retriever.cards if teaches(card, edits, categories, sentence)]
        if len(fitting) > 1:
            return None
        shown = [with_fitting_example_first(card, _of_category(edits, categories, card.category)) for card in fitting]
        answer = RuleAnswer(tuple(RuleHit(card, 1.0, None, None) for card in shown), "fit")
        self._store(key, answer)
        return answer

    def _store(self, key: Key, answer: RuleAnswer) -> None:
        with self._lock:
            self._cache[key] = answer
            self._cache.move_to_end(key)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)

    def _search_each(self, keys: list[Key], mode: Mode) -> list[RuleAnswer]:
        return [self._search(key, mode) for key in keys]

    def _search(self, key: Key, mode: Mode, store: bool = True) -> RuleAnswer:
        sentence, edits, categories = key
        ranked = self.retriever.search(sentence, edits, categories, k=len(self.retriever.cards), mode=mode)
        answer = RuleAnswer(tuple(teaching(ranked, edits, categories, sentence)[: self.k]), mode)
        if store:
            self._store(key, answer)
        return answer
