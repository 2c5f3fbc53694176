"""The check every quiz and exam item passes (`corrige.portal.bank_check`), on made-up judges: which
items it confirms, which it fails and why, and what the review does with each. Fast: no model loads."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from corrige.portal.bank_check import (
    ANSWER_MARGIN,
    REVIEW_PATH,
    WRONG_MARGIN,
    Review,
    Verdict,
    load_review,
    screen,
    verify,
)
from corrige.portal.quiz import Question


@dataclass
class Fixed:
    corrected: str


class Tutor:
    """Corrects as its table says; leaves every other sentence as it is."""

    def __init__(self, fixes: dict[str, str]) -> None:
        self.fixes = fixes

    def fits(self, sentence: str) -> bool:
        return True

    def correct_many(self, sentences):
        return [Fixed(self.fixes.get(s, s)) for s in sentences]


class LM:
    """Scores as its table says (0 for any other sentence); knows every word but the unknown ones."""

    def __init__(self, scores: dict[str, float], unknown: frozenset[str] = frozenset()) -> None:
        self.scores = scores
        self.index = _Known(unknown)

    def score(self, sentence: str) -> float:
        return self.scores.get(sentence, 0.0)


class _Known(dict):
    def __init__(self, unknown: frozenset[str]) -> None:
        super().__init__()
        self.unknown = unknown

    def __contains__(self, word: object) -> bool:
        return word not in self.unknown


def q(id: str, sentence: str, expected: str, category: str = "purpose_for") -> Question:
    return Question(id, sentence, expected, "g", category, "o", "r")


FOR_TO = q("a", "I went there for buy bread.", "I went there to buy bread.")
FOR_WORK = q("b", "He will go to France for work.", "He will go to France to work.")
GOED = q("c", "Yesterday I goed home.", "Yesterday I went home.", "past_irregular")
LIONS = q("d", "Lions is more slow than dogs.", "Lions is slower than dogs.", "comparative")
HOW_LONG = q("e", "When he fixed his bike?", "When did he fix his bike?", "question_no_do")


def verdict(question: Question, fixes=None, scores=None, unknown=frozenset()) -> Verdict:
    return verify([question], Tutor(fixes or {}), LM(scores or {}, unknown))[question.id]


def test_a_sentence_the_tutor_fixes_is_confirmed_wrong():
    v = verdict(FOR_TO, fixes={FOR_TO.sentence: FOR_TO.expected})
    assert v.tutor_fixes and v.tutor_keeps and v.passes and v.failures() == []
    # a fix graded close (the error fixed, a slip elsewhere) counts; one that keeps the error does not
    assert verdict(FOR_TO, fixes={FOR_TO.sentence: "I went here to buy bread."}).tutor_fixes
    assert not verdict(FOR_TO, fixes={FOR_TO.sentence: "I went there for buying bread."}).tutor_fixes


def test_a_sentence_the_language_model_clearly_prefers_fixed_is_confirmed_wrong():
    clearly = {FOR_TO.expected: -20.0, FOR_TO.sentence: -20.0 - WRONG_MARGIN}
    assert verdict(FOR_TO, scores=clearly).passes
    barely = {FOR_TO.expected: -20.0, FOR_TO.sentence: -20.0 - WRONG_MARGIN + 0.1}
    v = verdict(FOR_TO, scores=barely)
    assert not v.passes and v.failures() == ["sentence not confirmed wrong"]


def test_the_named_purpose_item_fails_the_check():
    """'for work' is for + a noun: the bundled tutor leaves it and the language model scores the two
    alike (0.2 apart in ln-probability), so neither judge confirms the error."""
    v = verdict(FOR_WORK, scores={FOR_WORK.expected: -30.0, FOR_WORK.sentence: -30.24})
    assert not v.wrong_confirmed and v.failures() == ["sentence not confirmed wrong"]


def test_an_answer_the_tutor_changes_or_the_language_model_scores_far_worse_fails():
    fixed = {LIONS.sentence: "Lions are slower than dogs.", LIONS.expected: "Lions are slower than dogs."}
    v = verdict(LIONS, fixes=fixed, scores={LIONS.expected: -10.0, LIONS.sentence: -20.0})
    assert v.wrong_confirmed and not v.tutor_keeps and v.failures() == ["tutor changes the answer"]
    far = {HOW_LONG.expected: -30.0, HOW_LONG.sentence: -30.0 + ANSWER_MARGIN + 0.5}
    v = verdict(HOW_LONG, fixes={HOW_LONG.sentence: HOW_LONG.expected}, scores=far)
    assert v.wrong_confirmed and v.failures() == ["answer scored much worse"]
    near = {HOW_LONG.expected: -30.0, HOW_LONG.sentence: -30.0 + ANSWER_MARGIN - 0.5}
    assert verdict(HOW_LONG, fixes={HOW_LONG.sentence: HOW_LONG.expected}, scores=near).passes


def test_a_non_word_confirms_the_error_and_its_score_judges_nothing():
    """The language model scores every word it does not know as <unk>: 'goed' may score above
    'went', which says nothing of either; the non-word itself shows the sentence is wrong."""
    scores = {GOED.expected: -30.0, GOED.sentence: -22.0}  # <unk> scored high
    v = verdict(GOED, scores=scores, unknown=frozenset({"goed"}))
    assert v.non_word and not v.comparable and v.passes
    # an unknown word in the answer only: the score says nothing, and the sentence is not confirmed
    v = verdict(GOED, scores={GOED.expected: -40.0, GOED.sentence: -20.0}, unknown=frozenset({"went"}))
    assert v.answer_unknown and v.answer_confirmed and not v.wrong_confirmed
    # an unknown word both share (a name) leaves the scores comparable
    shared = q("f", "Yesterday Xochitl goed home.", "Yesterday Xochitl went home.")
    v = verdict(shared, scores={shared.expected: -10.0, shared.sentence: -20.0}, unknown=frozenset({"xochitl"}))
    assert v.comparable and v.passes


def review_of(question: Question, verdict: str, reason: str = "why") -> dict[tuple[str, str], Review]:
    row = Review(question.id, question.category, question.sentence, question.expected, verdict, reason)
    return {(question.sentence, question.expected): row}


def test_the_review_keeps_a_failed_item_and_drops_any_item():
    failing = verdict(FOR_WORK)
    passing = verdict(FOR_TO, fixes={FOR_TO.sentence: FOR_TO.expected})
    verdicts = {FOR_WORK.id: failing, FOR_TO.id: passing}
    both = [FOR_WORK, FOR_TO]
    assert screen(both, verdicts, {}) == ([FOR_TO], {"b": "check_failed"})
    assert screen(both, verdicts, review_of(FOR_WORK, "keep")) == (both, {})
    assert screen(both, verdicts, review_of(FOR_WORK, "drop")) == ([FOR_TO], {"b": "reviewed_drop"})
    # a drop wins over a passing check (the judges miss ambiguity: whose sister?)
    assert screen(both, verdicts, review_of(FOR_TO, "drop")) == ([], {"b": "check_failed", "a": "reviewed_drop"})
    # the review matches by the words, not the id: a generator that renumbers its items keeps it
    moved = replace(FOR_WORK, id="q9")
    assert screen([moved], {"q9": failing}, review_of(FOR_WORK, "keep")) == ([moved], {})


def test_a_review_row_needs_a_known_verdict_a_reason_and_one_row_per_item(tmp_path: Path):
    head = "id\tcategory\tsentence\texpected\tverdict\treason\n"
    row = "q1\tpurpose_for\tHe will go to France for work.\tHe will go to France to work.\t{}\t{}\n"
    path = tmp_path / "review.tsv"
    path.write_text(head + row.format("drop", "for + the noun work"), encoding="utf-8")
    (reviewed,) = load_review(path).values()
    assert reviewed.verdict == "drop" and reviewed.sentence == "He will go to France for work."
    for bad in (row.format("maybe", "unsure"), row.format("keep", " "), row.format("drop", "x") * 2):
        path.write_text(head + bad, encoding="utf-8")
        with pytest.raises(ValueError):
            load_review(path)


def test_the_committed_review_reads_and_names_the_issues_three_items():
    review = load_review(REVIEW_PATH)
    by_sentence = {row.sentence: row for row in review.values()}
    for sentence in (
        "He will go to France for work.",
        "My parents don't visit a museum small twice a week.",
        "Our uncle met her sister yesterday.",
    ):
        assert by_sentence[sentence].verdict == "drop", sentence
