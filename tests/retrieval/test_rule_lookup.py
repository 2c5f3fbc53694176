"""Serve-time rule cards: nothing for unchanged sentences, an LRU cache, and BM25 while the encoder is busy."""

import asyncio
import re
from pathlib import Path

from corrige.tutor.agent import Correction
from corrige.tutor.edits import Edit
from corrige.tutor.rule_lookup import NO_RULES, RuleLookup

SENTENCE = "Is raining a lot today."
CATEGORY = "missing_subject"


def rains() -> Correction:
    """A missing "it" that three cards teach (the weather, a clause, "it is + adjective")."""
    edit = Edit(0, 2, "Is", "It is", CATEGORY)
    return Correction(SENTENCE, "It is raining a lot today.", "falta el sujeto: Is → It is", [edit])


def married(i: int) -> Correction:
    sentence = f"My sister number {i} is married with a doctor."
    start = sentence.index("with")
    edit = Edit(start, start + 4, "with", "to", "preposition")
    return Correction(sentence, sentence.replace("with", "to"), "preposición", [edit])


def raining(i: int) -> Correction:
    """An edit that several cards teach: their order is the ranker's call."""
    sentence = f"Is raining a lot in town number {i} today."
    edit = Edit(0, 2, "Is", "It is", CATEGORY)
    return Correction(sentence, "It" + " is" + sentence[2:], "falta el sujeto: Is → It is", [edit])


def test_an_unchanged_sentence_needs_no_card(hybrid_retriever):
    lookup = RuleLookup(hybrid_retriever)
    unchanged = Correction("I went home.", "I went home.", "sin errores")
    assert lookup.lookup(unchanged) is NO_RULES
    assert asyncio.run(lookup.find(unchanged)).hits == ()


def test_the_cards_explain_the_edit_and_a_repeat_comes_from_the_cache(hybrid_retriever):
    lookup = RuleLookup(hybrid_retriever, k=3)
    first = asyncio.run(lookup.find(rains()))
    assert first.mode == "hybrid" and not first.cached and len(first.hits) == 3
    assert first.hits[0].card.category == CATEGORY
    again = asyncio.run(lookup.find(rains()))
    assert again.cached and [h.card.id for h in again.hits] == [h.card.id for h in first.hits]
    assert (lookup.hits, lookup.misses) == (1, 1)


def test_warming_searches_once_on_the_worker_thread_without_caching_or_counting(hybrid_retriever):
    lookup = RuleLookup(hybrid_retriever, k=3)
    assert lookup.warm_ms is None
    took = asyncio.run(lookup.warm())
    assert took > 0 and lookup.warm_ms == took
    assert (lookup.hits, lookup.misses, lookup.degraded, len(lookup._cache)) == (0, 0, 0, 0)
    first = asyncio.run(lookup.find(rains()))  # not answered by the warm-up's search
    assert first.mode == "hybrid" and not first.cached and lookup.misses == 1


def test_the_cache_keeps_only_the_most_recent_queries(bm25_retriever):
    lookup = RuleLookup(bm25_retriever, cache_size=2)
    for i in range(3):
        lookup.lookup(married(i))
    assert not asyncio.run(lookup.find(married(0))).cached  # evicted
    assert asyncio.run(lookup.find(married(2))).cached


def test_while_the_encoder_is_busy_bm25_answers_at_once(hybrid_retriever):
    lookup = RuleLookup(hybrid_retriever, k=3)

    async def two_at_once():
        return await asyncio.gather(lookup.find(raining(1)), lookup.find(raining(2)))

    first, second = asyncio.run(two_at_once())
    assert first.mode == "hybrid" and not first.degraded
    assert second.mode == "bm25" and second.degraded and second.hits
    assert second.hits[0].card.category == CATEGORY
    assert lookup.degraded == 1
    third = asyncio.run(lookup.find(raining(2)))  # degraded answers are not cached: hybrid next time
    assert third.mode == "hybrid" and not third.cached


def test_only_cards_that_teach_the_edit_are_shown(hybrid_retriever):
    edit = Edit(4, 8, "like", "likes", "third_person")
    she_like = Correction("She like cats.", "She likes cats.", "tercera persona: like → likes", [edit])
    hits = RuleLookup(hybrid_retriever, k=3).lookup(she_like).hits
    # not "I like football very much", nor the third person's "doesn't" card, which goes another way
    assert [h.card.id for h in hits] == ["third_person_s"]


def test_a_busy_server_gets_bm25_without_touching_the_encoder(hybrid_retriever):
    load = {"busy": True}
    lookup = RuleLookup(hybrid_retriever, k=3, busy=lambda: load["busy"])
    under_load = asyncio.run(lookup.find(raining(7)))
    assert under_load.mode == "bm25" and under_load.degraded
    load["busy"] = False
    idle = asyncio.run(lookup.find(raining(7)))
    assert idle.mode == "hybrid" and not idle.degraded


def test_the_portals_cards_are_one_per_edit_from_the_same_cache(hybrid_retriever):
    lookup = RuleLookup(hybrid_retriever, k=3)
    it_is = rains().edits[0]
    to = married(3).edits[0]
    pairs = [(SENTENCE, it_is), (married(3).sentence, to)]
    cards = asyncio.run(lookup.cards_for(pairs))
    assert [c["category"] for c in cards] == [CATEGORY, "preposition"]
    assert (lookup.hits, lookup.misses) == (0, 2)
    # the grammar API's answer for the one-edit sentence is the same query: a cache hit, same first card
    answer = asyncio.run(lookup.find(rains()))
    assert answer.cached and answer.hits[0].summary() == cards[0]
    assert asyncio.run(lookup.cards_for(pairs)) == cards and (lookup.hits, lookup.misses) == (3, 2)


def test_a_busy_server_gets_the_portal_bm25_cards(hybrid_retriever):
    lookup = RuleLookup(hybrid_retriever, k=3, busy=lambda: True)
    (card,) = asyncio.run(lookup.cards_for([(raining(4).sentence, raining(4).edits[0])]))
    assert card["category"] == CATEGORY and lookup.degraded == 1 and not lookup._cache


def test_the_only_card_that_fits_needs_no_ranking(hybrid_retriever):
    """One card fits "married with → to": every ranking shows it alone, so it is answered without
    the encoder (`fit`), busy server or not, and it is the card the hybrid ranking shows."""
    lookup = RuleLookup(hybrid_retriever, k=3, busy=lambda: True)
    answer = asyncio.run(lookup.find(married(5)))
    assert answer.mode == "fit" and not answer.degraded and lookup.degraded == 0
    ranked = RuleLookup(hybrid_retriever, k=3)._search(RuleLookup.key(married(5)), "hybrid", store=False)
    assert [h.card.id for h in answer.hits] == [h.card.id for h in ranked.hits] == ["preposition_married_to"]
    assert asyncio.run(lookup.find(married(5))).cached
    # several cards fit "Is raining → It is raining": ranked as before
    assert asyncio.run(RuleLookup(hybrid_retriever, k=3).find(raining(5))).mode == "hybrid"


def test_the_api_pages_lookup_figure_is_the_retrieval_benchmarks():
    """docs/api.md's cost of a first lookup is `corrige bench retrieval`'s hybrid row in docs/retrieval.md."""
    root = Path(__file__).resolve().parents[2]
    page = " ".join((root / "docs" / "api.md").read_text(encoding="utf-8").split())
    table = (root / "docs" / "retrieval.md").read_text(encoding="utf-8")
    stated = re.search(r"hybrid search p50 ([\d.]+) ms, p95 ([\d.]+) ms in `corrige bench retrieval", page)
    row = re.search(r"^\| hybrid \| \d+ \| ([\d.]+) \| \*{0,2}([\d.]+)\*{0,2} \|", table, re.MULTILINE)
    assert stated and row
    assert [float(x) for x in stated.groups()] == [round(float(x), 1) for x in row.groups()]
