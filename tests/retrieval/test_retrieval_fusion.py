"""Reciprocal rank fusion on a case worked out by hand."""

import pytest

from corrige.tutor.retrieval import rrf


def test_rrf_hand_computed():
    # BM25 ranks a, b, c; dense ranks c, a (b missing). With k = 60:
    #   a = 1/61 + 1/62 = 0.0325224...   c = 1/63 + 1/61 = 0.0322664...   b = 1/62 = 0.0161290...
    fused = rrf([["a", "b", "c"], ["c", "a"]], k=60)
    assert [item for item, _ in fused] == ["a", "c", "b"]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[1][1] == pytest.approx(1 / 63 + 1 / 61)
    assert fused[2][1] == pytest.approx(1 / 62)


def test_rrf_ties_go_to_the_best_single_rank():
    # x: ranks 1 and 4, y: ranks 2 and 3 with k = 0 -> x = 1 + 1/4 = 1.25, y = 1/2 + 1/3 = 0.83;
    # with k = 1: x = 1/2 + 1/5 = 0.7, y = 1/3 + 1/4 = 0.583. Equal scores: best rank wins.
    assert [i for i, _ in rrf([["x", "y"], ["p", "q", "y", "x"]], k=1)][:2] == ["x", "y"]
    tie = rrf([["u", "v"], ["v", "u"]], k=60)
    assert tie[0][1] == pytest.approx(tie[1][1])
    assert [i for i, _ in tie] == ["u", "v"]  # both have best rank 1: first seen first


def test_rrf_single_list_keeps_its_order():
    assert [i for i, _ in rrf([[3, 1, 2]])] == [3, 1, 2]
    assert rrf([[], []]) == []


def test_a_weighted_list_counts_less():
    # BM25 ranks p first and q fourth; the encoder ranks q first and p fourth. Even, they tie
    # (p wins on first appearance); with the encoder's list at half weight p leads by a clear margin.
    even = dict(rrf([["p", "x", "y", "q"], ["q", "x", "y", "p"]], k=60))
    assert even["p"] == pytest.approx(even["q"])
    weighted = dict(rrf([["p", "x", "y", "q"], ["q", "x", "y", "p"]], k=60, weights=[1.0, 0.5]))
    assert weighted["p"] == pytest.approx(1 / 61 + 0.5 / 64) and weighted["q"] == pytest.approx(1 / 64 + 0.5 / 61)
    assert weighted["p"] > weighted["q"]


def test_the_served_fusion_finds_the_gerund_card_for_enjoy_to():
    """The encoder alone puts "explain to me" first for "she enjoy to meet → meeting"; fused at
    DENSE_WEIGHT the card the learner needs, "enjoy + -ing", comes first."""
    from corrige.tutor.edits import Edit
    from corrige.tutor.retrieval import Retriever, build_query

    retriever = Retriever.load()
    if retriever.dense is None:
        pytest.skip("the dense model is not installed")
    sentence = "My sister works as waitress and she enjoy to meet people."
    start = sentence.index("to meet")
    query = build_query(sentence, [Edit(start, start + 7, "to meet", "meeting", "verb_pattern")])
    hits = retriever.search_query(query, k=3)
    assert hits[0].card.id == "verb_pattern_ing"
