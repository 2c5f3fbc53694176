"""A gloss describes exactly the edits made: an inserted word belongs with the word it follows
("years → years old", never "and → old and"), no tense is named where no verb changed, and a
correction that leaves something to fix says so (`more_errors`)."""

from __future__ import annotations

from corrige.tutor.agent import Correction, name_what_changed
from corrige.tutor.consistency import explain
from corrige.tutor.edits import Edit, diff_edits
from corrige.tutor.text import SentenceResult


def pairs(source: str, corrected: str) -> list[tuple[str, str]]:
    return [(e.original, e.replacement) for e in diff_edits(source, corrected)]


def test_an_inserted_content_word_goes_with_the_word_before_it():
    assert pairs("She has 25 years and works as nurse.", "She is 25 years old and works as a nurse.") == [
        ("has", "is"),
        ("years", "years old"),
        ("nurse", "a nurse"),  # a function word goes with the word after it
    ]
    assert pairs("I go to cinema.", "I go to the cinema.") == [("cinema", "the cinema")]
    assert pairs("Yesterday I goed home.", "Yesterday I went home.") == [("goed", "went")]


def test_a_tense_is_not_named_where_no_verb_changed():
    sentence = "I live in Valencia since three years."
    start = sentence.index("since")
    edit = Edit(start, start + 5, "since", "for", "present_perfect")
    c = Correction(sentence, sentence.replace("since", "for"), explain([edit]), [edit])
    named = name_what_changed(c)
    assert [e.category for e in named.edits] == ["preposition"]
    assert named.gloss == "preposición: since → for" and "perfecto" not in named.gloss
    assert named.more_errors  # "live" is still to become "have lived"


def test_a_tense_that_changed_a_verb_keeps_its_name():
    sentence = "I have visited London last year."
    start = sentence.index("have visited")
    edit = Edit(start, start + 12, "have visited", "visited", "past_marker")
    c = Correction(sentence, sentence.replace("have visited", "visited"), explain([edit]), [edit])
    assert name_what_changed(c) is c


def test_a_sentence_says_more_errors_only_when_corrected():
    unsure = Correction("a", "b", "", [Edit(0, 1, "a", "b", "spelling")], more_errors=True)
    corrected = SentenceResult(0, 0, 1, "a", "b", "corrected", [], corrections=[unsure])
    assert corrected.more_errors is False  # no edit of the text kept: nothing to say
    assert SentenceResult(0, 0, 1, "a", "b", "corrected", [object()], corrections=[unsure]).more_errors  # type: ignore[list-item]
