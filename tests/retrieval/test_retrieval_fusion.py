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
