"""Agreement edits checked against the verb's subject, with spaCy's real parser."""

from __future__ import annotations

import pytest

from corrige.tutor import agreement
from corrige.tutor.agent import Correction, _agree_with_subject
from corrige.tutor.edits import Edit

pytestmark = pytest.mark.skipif(not agreement.available(), reason="spaCy's small English pipeline is not installed")


def edit(sentence: str, original: str, replacement: str, category: str = "agreement") -> Edit:
    start = sentence.index(f" {original} ") + 1
    return Edit(start, start + len(original), original, replacement, category)


@pytest.mark.parametrize(
    ("original", "replacement", "number"),
    [
        ("is", "are", "plural"),
        ("has", "have", "plural"),
        ("was", "were", "plural"),
        ("don't", "doesn't", "singular"),
        ("works", "work", "plural"),
        ("go", "goes", "singular"),
        ("live", "lives", "singular"),
        ("in", "on", None),
        ("go", "went", None),
    ],
)
def test_the_number_an_edit_gives_the_verb(original, replacement, number):
    assert agreement.number_of(original, replacement) == number


@pytest.mark.parametrize(
    ("sentence", "original", "replacement"),
    [
        ("The relation between parents and children is something about love.", "is", "are"),  # subject: relation
        ("Another disadvantage that affects other people is that we only show a part of our lives.", "is", "are"),
        ("The list of my favourite books has changed a lot.", "has", "have"),
        ("My parents live in a small town near the sea.", "live", "lives"),  # subject: parents
        ("The staff were really friendly.", "were", "was"),  # a group: either number is right
        ("My family is very big.", "is", "are"),
        ("Ten euros is less than I expected.", "is", "are"),  # an amount: one sum
        ("Fish and chips is a typical British dish.", "is", "are"),  # one dish
        ("The number of cars on the roads is growing.", "is", "are"),  # the number itself
        ("The poor were the worst affected.", "were", "was"),  # the poor: people, plural
        ("The crowd were singing.", "were", "was"),  # a group: either
        ("The injured were taken to hospital.", "were", "was"),  # the injured: people, plural
        ("Every one of the players was exhausted.", "was", "were"),  # one of them: singular
        ("Wales is smaller than Scotland.", "is", "are"),  # a place named in -s
        ("All that glitters is not gold.", "is", "are"),  # all that: one whole
        ("Manchester United have won the league.", "have", "has"),  # a team: either
    ],
)
def test_an_edit_against_the_subject_is_dropped(sentence, original, replacement):
    e = edit(sentence, original, replacement)
    assert agreement.against_subject(sentence, [e]) == [e]


@pytest.mark.parametrize(
    ("sentence", "original", "replacement", "category"),
    [
        ("People is very friendly here.", "is", "are", "people_plural"),
        ("My friends has a new car.", "has", "have", "agreement"),
        ("My brother live in Madrid.", "live", "lives", "third_person"),
        ("She go to work by bus.", "go", "goes", "third_person"),  # a pronoun: left to the model
        ("They was at home yesterday.", "was", "were", "agreement"),
        ("My father and my mother is teachers.", "is", "are", "agreement"),  # two subjects joined: plural
        ("A lot of people thinks it is dangerous.", "thinks", "think", "people_plural"),  # "lot" counts people
        ("The majority of students is happy.", "is", "are", "agreement"),
        ("A number of cars was damaged.", "was", "were", "agreement"),  # "a number of" counts the cars
        ("My brother and my sister is doctors.", "is", "are", "agreement"),  # not a pair named as one
        ("I have two brothers and one of them live in Miami.", "live", "lives", "agreement"),  # two clauses
        ("Carlos have two brothers.", "have", "has", "third_person"),  # a name in -s, one person
    ],
)
def test_an_edit_that_agrees_with_the_subject_stays(sentence, original, replacement, category):
    assert agreement.against_subject(sentence, [edit(sentence, original, replacement, category)]) == []


def test_other_categories_are_not_checked():
    sentence = "The relation between parents and children is something about love."
    assert agreement.against_subject(sentence, [edit(sentence, "is", "are", "verb_tense")]) == []


def test_a_correction_loses_the_wrong_edit_and_keeps_the_rest():
    sentence = "The relation between parents and chidren is something about love."
    wrong, spelling = edit(sentence, "is", "are"), edit(sentence, "chidren", "children", "spelling")
    c = Correction(
        sentence, "The relation between parents and children are something about love.", "", [spelling, wrong]
    )
    kept = _agree_with_subject(c)
    assert kept.edits == [spelling] and not kept.abstained
    assert kept.corrected == "The relation between parents and children is something about love."
    assert "is → are" not in kept.gloss and "chidren → children" in kept.gloss


def test_a_correction_with_only_the_wrong_edit_becomes_an_abstention():
    sentence = "The relation between parents and children is something about love."
    c = Correction(sentence, sentence.replace(" is ", " are "), "concordancia: is → are", [edit(sentence, "is", "are")])
    kept = _agree_with_subject(c)
    assert kept.abstained and kept.abstain_reason == "agreement" and kept.corrected == sentence and not kept.edits


def test_the_subject_is_read_with_the_other_edits_made():
    """The parser reads "peopie" as the word the speller made of it: people, plural."""
    sentence = "I think that young peopie is not able to think deeply."
    spelling, verb = edit(sentence, "peopie", "people", "spelling"), edit(sentence, "is", "are", "people_plural")
    assert agreement.against_subject(sentence, [spelling, verb]) == []


def test_the_reader_leaves_a_verb_that_agrees_with_its_subject():
    """The reader's model writes "children are" here; its tutor.json turns the check on."""
    from corrige.tutor.agent import READER_MODEL, Tutor

    tutor = Tutor.load(READER_MODEL)
    assert tutor.config.check_agreement
    sentence = "The relation between parents and children is something about love and dedication."
    assert "children are" not in tutor.correct(sentence).corrected
    assert tutor.correct("People is very friendly here.").corrected == "People are very friendly here."
