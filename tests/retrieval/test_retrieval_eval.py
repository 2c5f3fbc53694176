"""The retrieval evaluation: labelled queries and the recall targets."""

from collections import Counter

import pytest

from corrige.evaluation import retrieval_eval as reval
from corrige.evaluation.expected_cards import expected_cards


def test_sub_rule_labels(cards):
    def label(cat, o, r, s):
        return expected_cards(cat, o, r, s, cards)

    assert label("preposition", "with", "to", "He is married with Marta.") == (
        frozenset({"preposition_married_to"}),
        True,
    )
    assert label("preposition", "in", "on", "They will buy milk in Saturday.")[0] == {"preposition_on_days"}
    assert label("verb_pattern", "to study", "studying", "She doesn't enjoy to study.")[0] == {"verb_pattern_ing"}
    assert label("comparative", "most best", "best", "It was the most best trip.")[0] == {"comparative_irregular"}
    # The word edited, not its letters inside another word ("is" in "noise"); after be, no noun
    # follows "difficults and"; "to home" is the home card's rule (arrive's card says it too);
    # before a day the preposition is on, whatever verb came earlier.
    assert label("missing_subject", "is", "it is", "The noise is awful because is impossible to rest.")[0] == {
        "missing_subject_clause",
        "missing_subject_it_adjective",
    }
    assert label("missing_subject", "is", "it is", "I stayed in bed because is my day off.")[0] == {
        "missing_subject_clause"
    }
    assert label("adjective_plural", "expensives", "expensive", "The shoes are expensives and ugly.")[0] == {
        "adjective_plural_predicate"
    }
    assert label("adjective_plural", "smalls", "small", "We saw two smalls birds.")[0] == {"adjective_plural_noun"}
    assert label("preposition", "to home", "home", "Text me when you arrive to home.")[0] == {
        "preposition_home",
        "preposition_arrive_at",
    }
    assert label("preposition", "to home", "home", "We walked to home.")[0] == {"preposition_home"}
    assert label("preposition", "in", "on", "They arrive to Rome in Sunday.")[0] == {"preposition_on_days"}
    assert label("preposition", "since", "for", "He has lived in Quito since six years.")[0] == {
        "preposition_for_period"
    }
    # No sub-rule pinned: any card of the category counts.
    relevant, pinned = label("generic_the", "the cinema", "cinema", "I like the cinema.")
    assert not pinned and relevant == {c.id for c in cards if c.category == "generic_the"}


@pytest.fixture(scope="module")
def queries(cards):
    return reval.all_queries(cards)


def test_enough_labelled_queries(queries):
    sources = Counter(q.source for q in queries)
    assert len(queries) >= 200
    assert sources["hand"] >= 40 and sources["generated"] >= 200
    assert sum(q.pinned for q in queries) >= 0.95 * len(queries)


@pytest.mark.slow
def test_hybrid_meets_the_recall_targets(hybrid_retriever, queries):
    report = reval.evaluate(hybrid_retriever, queries)
    r5 = {m: r.at(5) for m, r in report.overall.items()}
    assert r5["hybrid"] >= 0.95
    assert r5["hybrid"] > r5["bm25"] and r5["hybrid"] > r5["dense"], r5
    assert report.overall["hybrid"].at(1) >= report.overall["bm25"].at(1) - 0.02
