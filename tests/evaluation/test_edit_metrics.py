"""Metrics on small cases computed by hand."""

import pytest

from corrige.evaluation.edit_metrics import Record, evaluate, f_beta


def test_f_beta():
    assert f_beta(1.0, 1.0) == 1.0
    assert f_beta(0.0, 0.0) == 0.0
    # P=0.5, R=1: (1.25 * 0.5) / (0.25 * 0.5 + 1) = 0.625 / 1.125
    assert f_beta(0.5, 1.0) == pytest.approx(0.5555555)


def test_hand_computed_corpus():
    records = [
        # 1. erroneous, fixed exactly: tp=1
        Record("He go home.", "He goes home.", "He goes home.", "tercera persona: go → goes", False, ["third_person"]),
        # 2. correct source, left alone: nothing
        Record("I like tea.", "I like tea.", "I like tea.", "sin errores", False, []),
        # 3. correct source changed (false alarm): fp=1
        Record("I like tea.", "I like tea.", "I like the tea.", "artículo genérico: tea → the tea", False, []),
        # 4. two reference edits, one found, plus a wrong one: tp=1, fp=1, fn=1
        Record(
            "She have a car in Monday.",
            "She has a car on Monday.",
            "She has a big car in Monday.",
            None,
            False,
            ["third_person", "preposition"],
            "tercera persona: have → has; preposición: in → on",
        ),
        # 5. abstained on an erroneous sentence: fn=1, counts as unchanged
        Record("I have 20 years.", "I am 20 years old.", "", None, True, ["age_have"]),
    ]
    m = evaluate(records)
    assert m.n == 5
    assert m.exact_match == pytest.approx(2 / 5)
    # Record 5: reference edits "have→am", "years→years old" (widened insertion): fn 2.
    assert (m.true_positives, m.false_positives, m.false_negatives) == (2, 2, 3)
    assert m.precision == pytest.approx(0.5)
    assert m.recall == pytest.approx(2 / 5)
    assert m.f05 == pytest.approx(f_beta(0.5, 2 / 5))
    assert m.correct_sources == 2
    assert m.false_alarm_rate == pytest.approx(0.5)
    assert m.abstain_rate == pytest.approx(0.2)
    # Glosses given for records 1-3: categories match for 1 and 2, not for 3.
    assert m.gloss_category_match == pytest.approx(2 / 3)
    tp = m.per_category["third_person"]
    assert (tp.sentences, tp.reference_edits, tp.recall, tp.exact_match) == (2, 2, 1.0, 0.5)
    assert m.per_category["preposition"].recall == 0.0
    assert m.per_category["age_have"].reference_edits == 2
    assert m.per_category["age_have"].recall == 0.0
    assert m.per_category["generic_the"].precision == 0.0


def test_tuples_are_accepted_and_empty_corpus():
    m = evaluate([("I goed.", "I went.", "I went.", None, False, ["past_irregular"])])
    assert (m.exact_match, m.precision, m.recall, m.f05) == (1.0, 1.0, 1.0, 1.0)
    empty = evaluate([])
    assert empty.n == 0 and empty.precision == 1.0 and empty.exact_match == 0.0
