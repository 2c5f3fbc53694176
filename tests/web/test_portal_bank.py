"""The question bank the server serves, over all of it: every reference answer holds up under the
bundled tutor and the grader, and docs/portal.md's figures are the bank's own."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from corrige.portal.quiz import Grade, QuestionBank, check_answers, collapse, grade
from corrige.tutor.agent import SEED_MODEL, Tutor
from corrige.tutor.retrieval import default_cache_dir

PORTAL_DOC = Path(__file__).resolve().parents[2] / "docs" / "portal.md"


@pytest.fixture(scope="module", autouse=True)
def _one_blas_thread():
    """One BLAS thread, as the server runs the tutor: two fighting for a busy core are many times slower."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1, user_api="blas"):
        yield


@pytest.fixture(scope="module")
def tutor() -> Tutor:
    return Tutor.load(SEED_MODEL)  # the model that checks the bank


@pytest.fixture(scope="module")
def generated() -> QuestionBank:
    return QuestionBank.build()  # every single-error example, unchecked


@pytest.fixture(scope="module")
def served() -> QuestionBank:
    return QuestionBank.cached(default_cache_dir())  # the server's bank (built and checked once per machine)


def test_every_question_of_the_bank_has_a_reference_the_tutor_and_the_grader_agree_with(served, tutor):
    questions = served.questions
    assert all(tutor.fits(q.sentence) and tutor.fits(q.expected) for q in questions)
    references = tutor.correct_many([q.expected for q in questions])
    own = tutor.correct_many([q.sentence for q in questions])
    for q, reference, correction in zip(questions, references, own, strict=True):
        assert collapse(reference.corrected) == collapse(q.expected), (q.id, q.expected, reference.corrected)
        assert grade(q.sentence, q.expected, q.expected) is Grade.EXACT, q.id
        assert grade(q.sentence, q.expected, q.sentence) is Grade.WRONG, q.id  # the error is really one
        assert grade(q.sentence, q.expected, correction.corrected) is not Grade.WRONG, (q.id, correction.corrected)


def test_the_check_leaves_out_the_questions_whose_feedback_contradicted_itself(served, generated):
    left_out = set(generated.by_id) - set(served.by_id)
    assert set(served.by_id) <= set(generated.by_id)
    # the exam's "want that Lucia dreams": the tutor's correction kept the error being tested
    assert generated.get("q169").sentence == "My friends want that Lucia dreams about her family."
    assert "q169" in left_out
    # a check that kept almost nothing would be no bank: most questions stay, in every category
    assert len(served.questions) >= 0.8 * len(generated.questions)
    assert set(served.by_category) == set(generated.by_category)
    assert min(len(qs) for qs in served.by_category.values()) >= 20


def test_a_wrong_reference_or_a_tutor_that_keeps_the_error_is_left_out(tutor, generated, served):
    lucia = generated.get("q169")
    fine = served.by_category[lucia.category][0]  # one the tutor corrects
    long = " and ".join([fine.expected.rstrip(".")] * 6) + "."
    broken = [
        lucia,  # the tutor keeps the error
        replace(fine, id="x1", expected=fine.sentence),  # a reference that kept the error: the tutor fixes it
        replace(fine, id="x2", expected=long),  # a reference too long for the tutor's window
    ]
    kept, dropped = check_answers([fine, *broken], tutor)
    assert dropped == {"q169": "tutor_wrong", "x1": "reference_changed", "x2": "too_long"}
    assert kept == [fine]


def test_the_portal_doc_states_the_banks_real_figures(served, generated, tutor):
    text = " ".join(PORTAL_DOC.read_text(encoding="utf-8").split())
    number = r"(\d[\d,]*)"
    single = re.search(rf"keeping the {number} examples with exactly one error", text)
    remain = re.search(
        rf"{number} questions remain \({number} too long for the window, {number} reference the tutor would "
        rf"change, {number} the tutor gets wrong\)",
        text,
    )
    spread = re.search(rf"every one of the {number} categories has {number} to {number}\.", text)
    assert single and remain and spread, "docs/portal.md no longer states the bank's figures in these words"

    def figure(match, group=1) -> int:
        return int(match.group(group).replace(",", ""))

    assert figure(single) == len(generated.questions)
    served_by_server = [q for q in served.questions if tutor.fits(q.sentence)]  # what its log counts
    assert figure(remain) == len(served.questions) == len(served_by_server)
    too_long = sum(1 for q in generated.questions if not (tutor.fits(q.sentence) and tutor.fits(q.expected)))
    assert figure(remain, 2) == too_long
    assert figure(remain, 3) + figure(remain, 4) == len(generated.questions) - len(served.questions) - too_long
    sizes = Counter(q.category for q in served.questions)
    assert (figure(spread), figure(spread, 2), figure(spread, 3)) == (
        len(sizes),
        min(sizes.values()),
        max(sizes.values()),
    )
