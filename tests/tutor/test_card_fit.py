"""A card beside an edit teaches that edit: its category, and an example that goes its way."""

from __future__ import annotations

import pytest

from corrige.tutor.agent import Correction
from corrige.tutor.card_fit import fits, fitting, same_way
from corrige.tutor.edits import Edit
from corrige.tutor.knowledge import bundled_cards
from corrige.tutor.retrieval import Retriever
from corrige.tutor.rule_lookup import RuleLookup

CARDS = bundled_cards()
BY_ID = {c.id: c for c in CARDS}


@pytest.mark.parametrize(
    ("category", "original", "replacement", "right", "wrong"),
    [
        ("preposition", "in", "on", "preposition_on_days", "preposition_interested_in"),
        ("preposition", "at", "on", "preposition_on_days", "preposition_at_in_time"),
        ("third_person", "speak", "speaks", "third_person_s", "third_person_does"),
        ("third_person", "don't", "doesn't", "third_person_does", "third_person_s"),
        ("spelling", "realy", "really", "spelling_double_letters", "spelling_spanish_sounds"),
        ("spelling", "goverment", "government", "spelling_spanish_sounds", "spelling_double_letters"),
        ("past_irregular", "runned", "ran", "past_irregular_frequent", None),
    ],
)
def test_a_card_fits_the_edit_that_goes_its_way(category, original, replacement, right, wrong):
    assert fits(BY_ID[right], category, original, replacement)
    if wrong is not None:
        assert not fits(BY_ID[wrong], category, original, replacement)


@pytest.mark.parametrize(
    ("category", "original", "replacement"),
    [
        ("noun_number", "days", "day"),  # every day: the plural card teaches the other way
        ("spelling", "writting", "writing"),  # a letter too many, not one missing
        ("spelling", "recieve", "receive"),  # not a word spelt as in Spanish
    ],
)
def test_no_card_fits_an_edit_no_card_teaches(category, original, replacement):
    assert fitting(CARDS, category, original, replacement) == []


def test_a_card_of_another_category_never_fits():
    assert not fits(BY_ID["preposition_on_days"], "determiner", "in", "on")


def test_same_way_reads_direction_not_just_words():
    assert same_way(("on", "in"), ("on", "in")) and not same_way(("on", "in"), ("in", "on"))
    assert same_way(("the", ""), ("the", "")) and not same_way(("the", ""), ("a", ""))
    assert same_way(("years", "years old"), ("years", "years old"))


def correction(sentence: str, *edits: tuple[str, str, str]) -> Correction:
    found = []
    for original, replacement, category in edits:
        start = sentence.index(original)
        found.append(Edit(start, start + len(original), original, replacement, category))
    corrected = sentence
    for e in reversed(found):
        corrected = corrected[: e.start] + e.replacement + corrected[e.end :]
    return Correction(sentence=sentence, corrected=corrected, gloss="", edits=found)


@pytest.fixture(scope="module")
def lookup():
    return RuleLookup(Retriever.load(dense=False, cache_dir=None), k=3)


@pytest.mark.parametrize(
    ("sentence", "edit", "first"),
    [
        ("They invited me to a party in Friday.", ("in", "on", "preposition"), "preposition_on_days"),
        ("She speak English very well.", ("speak", "speaks", "third_person"), "third_person_s"),
        ("I go to the gym every days.", ("days", "day", "noun_number"), None),
        ("I am writting a letter.", ("writting", "writing", "spelling"), None),
        ("I will recieve the letter.", ("recieve", "receive", "spelling"), None),
    ],
)
def test_the_named_counter_examples_get_the_card_of_their_edit_or_none(lookup, sentence, edit, first):
    hits = lookup.lookup(correction(sentence, edit)).hits
    assert (hits[0].card.id if hits else None) == first
    assert all(fits(h.card, edit[2], edit[0], edit[1]) for h in hits)
