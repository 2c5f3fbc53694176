"""Grading (exact / close / wrong), the question bank, and the highlighting of edits."""

from __future__ import annotations

import random

import pytest

from corrige.portal.highlight import answer_segments, segments
from corrige.portal.i18n import TEXTS
from corrige.portal.quiz import Grade, Question, QuestionBank, full_forms, grade, readings, typo_distance_one
from corrige.tutor.categories import CATEGORY_IDS, SYNTHETIC_CATEGORY_IDS
from corrige.tutor.edits import diff_edits

ENGINEER = ("She is a engineer.", "She is an engineer.")
STORE = ("Yesterday I goed to the store.", "Yesterday I went to the store.")
FOR_TO = ("I went there for to buy bread.", "I went there to buy bread.")
CAPITAL = ("Kate is learning english online.", "Kate is learning English online.")
SNOW = ("Is snowing in Ireland.", "It is snowing in Ireland.")  # the exam's question in issue 30
DOESNT = ("Sarah don't have any questions.", "Sarah doesn't have any questions.")
ANYONE = ("We haven't invited no one this week.", "We haven't invited anyone this week.")
CANT = ("He cannot to swim.", "He can't swim.")
POSSESSIVE = ("Peter is the brother of Ana.", "Peter is Ana's brother.")


@pytest.mark.parametrize(
    ("question", "answer", "expected"),
    [
        (ENGINEER, "She is an engineer.", Grade.EXACT),
        (ENGINEER, "  She is   an engineer. ", Grade.EXACT),  # spacing typed by accident
        (ENGINEER, "she is an engineer", Grade.CLOSE),  # case and punctuation
        (ENGINEER, "She is an engineer!", Grade.CLOSE),
        (ENGINEER, "She is a engineer.", Grade.WRONG),  # the question sent back
        (ENGINEER, "She is am engineer.", Grade.CLOSE),  # the fix, mistyped by one letter
        (ENGINEER, "He is an engineer.", Grade.CLOSE),  # fixed, one slip elsewhere
        (ENGINEER, "He is a engineer.", Grade.WRONG),  # a slip and the error left in
        (ENGINEER, "She was an good engineer.", Grade.WRONG),  # two words away
        (STORE, "Yesterday I wnet to the store.", Grade.CLOSE),  # swapped letters in the fix
        (STORE, "Yesterday I go to the store.", Grade.WRONG),  # another wrong verb
        (STORE, "Yesterday I went to the shop.", Grade.CLOSE),
        (STORE, "Yesterday I went to store.", Grade.CLOSE),  # one word dropped elsewhere
        (FOR_TO, "I went there to buy bread.", Grade.EXACT),
        (FOR_TO, "I went there for buy bread.", Grade.WRONG),  # the extra word is the error's spot
        (FOR_TO, "I went there for to buy bread.", Grade.WRONG),
        (FOR_TO, "", Grade.WRONG),
        (CAPITAL, "Kate is learning english online.", Grade.WRONG),  # case is the error here
        (CAPITAL, "Kate is learning English online", Grade.EXACT),  # a final full stop is no grammar
        (CAPITAL, "kate is learning English online.", Grade.CLOSE),  # fixed, one slip elsewhere
        # a contraction and its full form are the same answer, and the final full stop is no grammar
        (SNOW, "It's snowing in Ireland.", Grade.EXACT),
        (SNOW, "It’s snowing in Ireland.", Grade.EXACT),  # a typographic apostrophe
        (SNOW, "It is snowing in Ireland", Grade.EXACT),
        (SNOW, "It's snowing in Ireland", Grade.EXACT),
        (SNOW, "it's snowing in ireland", Grade.CLOSE),  # case still counts for exact
        (SNOW, "It is snowing in Ireland!", Grade.CLOSE),  # another final mark is not a missing one
        (SNOW, "It is snowing in Ireland..", Grade.CLOSE),
        (SNOW, "Is snowing in Ireland", Grade.WRONG),  # the question without its stop is still wrong
        (DOESNT, "Sarah does not have any questions.", Grade.EXACT),
        (DOESNT, "Sarah does not have any questions", Grade.EXACT),
        (DOESNT, "Sarah do not have any questions.", Grade.WRONG),  # the error, written in full
        (DOESNT, "Sarah doesnt have any questions.", Grade.CLOSE),  # the fix, mistyped
        (ANYONE, "We have not invited anyone this week.", Grade.EXACT),
        (ANYONE, "We have not invited no one this week.", Grade.WRONG),
        (CANT, "He cannot swim.", Grade.EXACT),
        (CANT, "He can not swim.", Grade.EXACT),
        (CANT, "He can swim.", Grade.WRONG),  # not a contraction: the meaning turned round
        (POSSESSIVE, "Peter is Ana is brother.", Grade.WRONG),  # a noun's 's is a possessive
        (POSSESSIVE, "Peter is Ana's brother", Grade.EXACT),
    ],
)
def test_grades(question, answer, expected):
    assert grade(question[0], question[1], answer) is expected


def test_contractions_read_as_written_or_in_full():
    assert full_forms("don't") == [("don't",), ("do", "not")]
    assert full_forms("Won't") == [("Won't",), ("Will", "not")]
    assert full_forms("cannot") == [("cannot",), ("can", "not")]
    assert full_forms("It's") == [("It's",), ("It", "is"), ("It", "has")]
    assert full_forms("she'd") == [("she'd",), ("she", "would"), ("she", "had")]
    assert full_forms("Ana's") == [("Ana's",)] and full_forms("ain't") == [("ain't",)]
    assert readings(["It's", "raining"])[0] == ("It's", "raining")  # the first reading is as written
    # an answer of many contractions is read as written, so grading stays cheap
    assert readings(["it's"] * 10) == [("it's",) * 10]
    many = "It's " * 12 + "snowing."
    assert grade(SNOW[0], SNOW[1], many) is Grade.WRONG


def test_typo_distance_is_one_edit_or_one_swap():
    assert typo_distance_one("went", "wnet") and typo_distance_one("an", "am") and typo_distance_one("go", "goe")
    assert typo_distance_one("store", "stor") and typo_distance_one("stor", "store")
    assert not typo_distance_one("went", "went") and not typo_distance_one("go", "goes")
    assert not typo_distance_one("went", "nwet")


def small_bank() -> QuestionBank:
    questions = [Question(f"q{i}", f"S{i}", f"E{i}", "g", CATEGORY_IDS[i % 12], "o", "r") for i in range(40)]
    return QuestionBank(questions)


def test_an_exam_has_ten_distinct_questions_from_ten_categories():
    bank = small_bank()
    for seed in range(5):
        exam = bank.draw_exam(random.Random(seed))
        assert len(exam) == 10 and len({q.id for q in exam}) == 10
        assert len({q.category for q in exam}) == 10


def test_an_exam_from_a_bank_with_few_categories_repeats_categories_never_questions():
    bank = QuestionBank([Question(f"q{i}", "s", "e", "g", ("a_an", "uncountable")[i % 2], "o", "r") for i in range(6)])
    exam = bank.draw_exam(random.Random(0))
    assert sorted(q.id for q in exam) == [f"q{i}" for i in range(6)]


def test_the_bundled_bank_is_deterministic_single_error_and_covers_every_category():
    first, second = QuestionBank.build(n=300), QuestionBank.build(n=300)
    assert [q.id for q in first.questions] == [q.id for q in second.questions]
    for q in first.questions:
        assert q.sentence != q.expected
        assert q.original in q.sentence and q.replacement in q.expected
        assert grade(q.sentence, q.expected, q.expected) is Grade.EXACT
        assert grade(q.sentence, q.expected, q.sentence) is Grade.WRONG
    assert set(first.by_category) == set(SYNTHETIC_CATEGORY_IDS)  # the bank is built from the template grammar


def test_segments_show_what_was_removed_and_added():
    sentence, corrected = "She have 20 years.", "She is 20 years old."
    runs = segments(sentence, diff_edits(sentence, corrected))
    kept = "".join(s.text for s in runs if s.kind != "ins")
    added = "".join(s.text for s in runs if s.kind != "del")
    assert kept == sentence and added.replace("  ", " ") == corrected
    assert [s.kind for s in answer_segments("I go home.", "I go home.")] == ["same"]


def test_both_languages_have_the_same_strings_and_every_category_a_name():
    es, en = TEXTS["es"], TEXTS["en"]
    assert set(es._strings) == set(en._strings)
    for category in CATEGORY_IDS:
        assert es.category(category) and en.category(category) != category
    assert es("exam_question", n=3, total=10) == "Pregunta 3 de 10"


def test_the_bank_is_cached_as_json_and_rebuilt_when_the_file_is_bad(tmp_path):
    built = QuestionBank.cached(tmp_path, n=80)  # a small split: each build runs the tutors over it
    (cache,) = tmp_path.glob("questions-*.json")
    read = QuestionBank.cached(tmp_path, n=80)
    assert read.questions == built.questions
    assert read.verdicts == built.verdicts and read.left_out == built.left_out  # the check's verdicts too
    assert set(built.verdicts) >= set(built.by_id) and built.verdicts
    cache.write_text("{not json", encoding="utf-8")
    assert QuestionBank.cached(tmp_path, n=80).questions == built.questions
    kept = [p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")]  # the builders' lock file stays
    assert kept == [cache.name] and cache.read_text().startswith('{"format": 3,')


def test_apps_starting_at_once_build_the_bank_once(tmp_path, monkeypatch):
    """Each app builds its bank on a thread as it starts; several at once (a test run, workers) wait
    for the first to write it instead of each checking every question with the model."""
    import threading
    import time

    real_build, calls = QuestionBank.build, []

    def counted_build(*args, **kwargs):
        calls.append(threading.current_thread().name)
        time.sleep(0.3)  # long enough for the others to be waiting
        return real_build(*args, **kwargs)

    monkeypatch.setattr(QuestionBank, "build", counted_build)
    banks: list[QuestionBank] = []
    threads = [threading.Thread(target=lambda: banks.append(QuestionBank.cached(tmp_path, n=40))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and len(banks) == 4
    assert all(bank.questions == banks[0].questions for bank in banks)


def test_the_feedback_shows_the_tutors_correction_only_where_the_grader_agrees_with_it():
    """The bank is checked with the seed model; a server running another model may keep the error
    the question tests, and the feedback must not show that as the tutor's correction."""
    from test_portal_store import submission  # "She is a engineer." answered exactly

    from corrige.portal.i18n import TEXTS
    from corrige.portal.views import feedback_view

    def feedback(tutor: str) -> str:
        return feedback_view(submission(tutor=tutor), None, None, TEXTS["en"])["tutor"]

    assert feedback("She is an engineer.") == "She is an engineer."
    assert feedback("She is a engineer.") == ""  # the error kept: not shown
