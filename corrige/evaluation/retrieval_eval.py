"""Retrieval evaluation: recall@1 and recall@5 of the right rule card, per ranker.

Labelled queries come from three places:

* ``generated``: test-split examples of the synthetic corpus (``data.make_splits``) with exactly
  one error; query = source sentence + its edit + its category, as the tutor would send it.
* ``realistic``: the hand-written learner sentences of ``realistic.tsv`` with one error
  (edits from ``diff_edits``, category from the file).
* ``hand``: free-text queries in ``knowledge/eval_queries.toml`` (what a user types in
  ``corrige rules search``: English fragments, Spanish questions), some with a category.

The right card for an edit is the card of its category whose sub-rule matches the edit and its
context (``expected_cards.py``: preposition "with → to" after "married" → ``preposition_married_to``).
When no sub-rule can be pinned, any card of the category counts and the query is marked
unpinned; the report gives the share of pinned queries.
"""

from __future__ import annotations

import statistics
import time
import tomllib
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from corrige.evaluation.expected_cards import expected_cards
from corrige.tutor.categories import CATEGORY_IDS
from corrige.tutor.knowledge import CARDS_DIR, Card, bundled_cards
from corrige.tutor.retrieval import Query, Retriever, build_query, rrf

HAND_QUERIES_PATH = CARDS_DIR / "eval_queries.toml"
MODES = ("bm25", "dense", "hybrid")
KS = (1, 5)


@dataclass(frozen=True)
class LabelledQuery:
    query: Query
    relevant: frozenset[str]
    source: str
    category: str
    pinned: bool = True


# ---------------------------------------------------------------------------------------------
# Query sets
# ---------------------------------------------------------------------------------------------


def generated_queries(
    cards: Sequence[Card], n_test: int = 900, data_seed: int = 0, per_category: int = 14
) -> list[LabelledQuery]:
    """Single-error test examples, at most ``per_category`` per category (balanced)."""
    from corrige.synth.data import make_splits

    test = make_splits(data_seed, 0, 0, n_test)["test"]
    taken: Counter[str] = Counter()
    out = []
    for ex in test:
        if len(ex.edits) != 1:
            continue
        e = ex.edits[0]
        if e.category not in CATEGORY_IDS or taken[e.category] >= per_category:
            continue
        relevant, pinned = expected_cards(e.category, e.original, e.replacement, ex.source, cards)
        taken[e.category] += 1
        out.append(LabelledQuery(build_query(ex.source, [e], [e.category]), relevant, "generated", e.category, pinned))
    return out


def realistic_queries(cards: Sequence[Card]) -> list[LabelledQuery]:
    """Hand-written learner sentences with exactly one error and one category."""
    from corrige.synth.data import load_realistic
    from corrige.tutor.edits import diff_edits

    out = []
    for ex in load_realistic():
        if ex.is_correct or len(ex.categories) != 1:
            continue
        edits = diff_edits(ex.source, ex.corrected)
        if len(edits) != 1:
            continue
        cat = ex.categories[0]
        e = edits[0]
        relevant, pinned = expected_cards(cat, e.original, e.replacement, ex.source, cards)
        out.append(
            LabelledQuery(
                build_query(ex.source, [(e.original, e.replacement)], [cat]), relevant, "realistic", cat, pinned
            )
        )
    return out


def hand_queries(cards: Sequence[Card], path: Path = HAND_QUERIES_PATH) -> list[LabelledQuery]:
    """Free-text queries: ``[[query]] text = …, card = … (or cards = […]), category = …?``."""
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    ids = {c.id: c for c in cards}
    out = []
    for q in raw["query"]:
        wanted = [q["card"]] if "card" in q else list(q["cards"])
        unknown = [w for w in wanted if w not in ids]
        if unknown:
            raise KeyError(f"{path.name}: query {q['text']!r} names unknown cards {unknown}")
        cats = [q["category"]] if q.get("category") else []
        out.append(LabelledQuery(build_query(q["text"], (), cats), frozenset(wanted), "hand", ids[wanted[0]].category))
    return out


def all_queries(cards: Sequence[Card] | None = None, n_test: int = 900, data_seed: int = 0) -> list[LabelledQuery]:
    cards = list(cards or bundled_cards())
    return generated_queries(cards, n_test, data_seed) + realistic_queries(cards) + hand_queries(cards)


# ---------------------------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------------------------


@dataclass
class Recall:
    hits: dict[int, int] = field(default_factory=lambda: dict.fromkeys(KS, 0))
    n: int = 0

    def add(self, ranked: Sequence[str], relevant: frozenset[str]) -> None:
        self.n += 1
        for k in KS:
            self.hits[k] += any(c in relevant for c in ranked[:k])

    def at(self, k: int) -> float:
        return self.hits[k] / self.n if self.n else 0.0


@dataclass
class EvalReport:
    overall: dict[str, Recall]
    by_source: dict[str, dict[str, Recall]]
    by_category: dict[str, dict[str, Recall]]
    n_queries: int
    n_pinned: int
    misses: list[tuple[str, LabelledQuery, list[str]]]

    def as_dict(self) -> dict:
        def table(recalls: dict[str, Recall]) -> dict:
            return {m: {f"recall@{k}": round(r.at(k), 4) for k in KS} | {"n": r.n} for m, r in recalls.items()}

        return {
            "n_queries": self.n_queries,
            "n_pinned": self.n_pinned,
            "overall": table(self.overall),
            "by_source": {s: table(v) for s, v in self.by_source.items()},
            "by_category": {c: table(v) for c, v in sorted(self.by_category.items())},
        }


def rankings(retriever: Retriever, query: Query) -> dict[str, list[str]]:
    """Card ids ranked by each mode (the two rankers run once; hybrid fuses their lists)."""
    lexical = [i for i, _ in retriever.bm25.rank(query.lexical_tokens())]
    out = {"bm25": lexical}
    if retriever.dense is not None:
        dense = [i for i, _ in retriever.dense.rank(query.dense_text())]
        out["dense"] = dense
        out["hybrid"] = [i for i, _ in rrf([lexical, dense], k=retriever.rrf_k, weights=retriever.weights)]
    return {m: [retriever.cards[i].id for i in ids] for m, ids in out.items()}


def evaluate(retriever: Retriever, queries: Sequence[LabelledQuery]) -> EvalReport:
    modes = [m for m in MODES if m == "bm25" or retriever.dense is not None]
    overall = {m: Recall() for m in modes}
    by_source: dict[str, dict[str, Recall]] = defaultdict(lambda: {m: Recall() for m in modes})
    by_category: dict[str, dict[str, Recall]] = defaultdict(lambda: {m: Recall() for m in modes})
    misses = []
    for lq in queries:
        ranked = rankings(retriever, lq.query)
        for m in modes:
            overall[m].add(ranked[m], lq.relevant)
            by_source[lq.source][m].add(ranked[m], lq.relevant)
            by_category[lq.category][m].add(ranked[m], lq.relevant)
        top = modes[-1]
        if not any(c in lq.relevant for c in ranked[top][:5]):
            misses.append((top, lq, ranked[top][:5]))
    return EvalReport(overall, dict(by_source), dict(by_category), len(queries), sum(q.pinned for q in queries), misses)


# ---------------------------------------------------------------------------------------------
# Latency
# ---------------------------------------------------------------------------------------------


def latency_ms(
    retriever: Retriever, queries: Sequence[LabelledQuery], k: int = 5, repeats: int = 1, warmup: int = 5
) -> dict[str, dict[str, float]]:
    """p50 / p95 / mean of ``Retriever.search_query`` per mode, in milliseconds.

    Modes are interleaved query by query so that background load hits them alike.
    """
    modes = [m for m in MODES if m == "bm25" or retriever.dense is not None]
    for lq in queries[:warmup]:
        for m in modes:
            retriever.search_query(lq.query, k=k, mode=m)
    times: dict[str, list[float]] = {m: [] for m in modes}
    for _ in range(repeats):
        for lq in queries:
            for m in modes:
                t0 = time.perf_counter()
                retriever.search_query(lq.query, k=k, mode=m)
                times[m].append((time.perf_counter() - t0) * 1000)
    return {m: _percentiles(t) for m, t in times.items()}


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]

    return {
        "p50_ms": round(pct(50), 3),
        "p95_ms": round(pct(95), 3),
        "p99_ms": round(pct(99), 3),
        "mean_ms": round(statistics.fmean(ordered), 3),
        "n": len(ordered),
    }
