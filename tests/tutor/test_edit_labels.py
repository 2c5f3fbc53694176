"""Naming an edit from its own words, for answers whose gloss does not describe them."""

import pytest
from tiny_tutor import read, tiny_tutor

from corrige.tutor.agent import TutorConfig
from corrige.tutor.consistency import gloss_disagreement, gloss_from_words
from corrige.tutor.edit_labels import name_edit, name_in_context
from corrige.tutor.edits import Edit, diff_edits


@pytest.mark.parametrize(
    "original, replacement, before, category",
    [
        ("speaked", "spoke", "guide", "past_irregular"),
        ("buyed", "bought", "father", "past_irregular"),
        ("writed", "wrote", "I", "past_irregular"),
        ("wrote", "written", "had", "verb_form"),
        ("should to live", "should live", "animals", "verb_form"),
        ("let me to go", "let me go", "don't", "verb_form"),
        ("suggested to go", "suggested going", "Carlos", "verb_form"),
        ("lives", "has lived", "who", "present_perfect"),
        ("go", "went", "Yesterday I", "verb_tense"),
        ("know", "knows", "everybody", "agreement"),
        ("reads", "read", "students", "agreement"),
        ("has", "have", "students", "agreement"),
        ("child", "children", "two", "noun_number"),
        ("book", "books", "two", "noun_number"),
        ("wich", "which", "food,", "spelling"),
        ("dissapointed", "disappointed", "very", "spelling"),
        ("english", "English", "speak", "capitalisation"),
        ("monday", "Monday", "on", "capitalisation"),
        ("a apple", "an apple", "eat", "a_an"),
        ("the life", "life", "", "determiner"),
        ("teacher", "a teacher", "am", "determiner"),
        ("arrived to", "arrived at", "we", "preposition"),
        ("to home", "home", "went", "preposition"),
        ("depends of", "depends on", "future", "preposition"),
        ("your", "you're", "", "word_confusion"),
        ("then", "than", "nicer", "word_confusion"),
        ("exciting", "excited", "very", "word_confusion"),  # how a person feels, not how a thing is
        ("bored", "boring", "was", "word_confusion"),
        ("which", "who", "man", "pronoun"),
        ("his", "her", "loves", "possessive_his_her"),
        ("more safe", "safer", "is", "comparative"),
        ("car red", "red car", "a", "word_order"),
    ],
)
def test_an_edit_is_named_from_its_words(original, replacement, before, category):
    assert name_edit(original, replacement, before) == category


@pytest.mark.parametrize(
    "original, replacement, before",
    [
        ("few", "many", "after"),  # a different word, not a form of the same one
        ("economy", "Economy", "Spain's"),  # a common noun capitalised mid-sentence is no fix
        ("on weekdays", "on a weekdays", "out"),  # "a" before a plural
        ("eat fast", "eat fast food", "teenagers"),  # a content word added
        ("teageners", "parrots", "of"),  # a non-word replaced by an unrelated word
    ],
)
def test_an_edit_its_words_do_not_explain_is_not_named(original, replacement, before):
    assert name_edit(original, replacement, before) is None


def test_a_noun_or_verb_form_needs_the_word_before_to_decide():
    assert name_edit("book", "books", "she") == "agreement"
    assert name_edit("book", "books", "two") == "noun_number"
    assert name_edit("book", "books", "") is None


def test_a_gloss_written_from_the_edits_describes_them():
    source, corrected = "Yesterday the guide speaked to we.", "Yesterday the guide spoke to us."
    edits = diff_edits(source, corrected, "sin errores")
    assert gloss_disagreement(source, corrected, "sin errores", edits) == "gloss_says_no_errors"
    fixed, gloss, named = gloss_from_words(source, edits)
    assert fixed == corrected
    assert gloss == "pasado irregular: speaked → spoke; pronombre: we → us"
    assert [e.category for e in named] == ["past_irregular", "pronoun"]
    assert gloss_disagreement(source, fixed, gloss, named) is None


def test_an_edit_that_cannot_be_named_is_dropped_or_blocks_the_answer():
    source, corrected = (
        "My parents don't let me to go out on weekdays.",
        "My parents don't let me go out on a weekdays.",
    )
    edits = diff_edits(source, corrected, "artículo: a Paris → Paris")
    assert gloss_from_words(source, edits) is None
    fixed, gloss, named = gloss_from_words(source, edits, partial=True)
    assert fixed == "My parents don't let me go out on weekdays."
    assert gloss == "forma verbal: to go → go"
    assert len(named) == 1


def test_the_tutor_writes_the_gloss_itself_only_when_configured():
    answers = ["I have two children. / sin errores", "She go home. / tercera persona: go → goes"]
    strict = read(tiny_tutor(answers, TutorConfig(min_token_prob=0.5)), "I have two child.", answers[0])
    assert strict.abstained and strict.abstain_reason == "gloss_says_no_errors"
    tutor = tiny_tutor(answers, TutorConfig(min_token_prob=0.5, gloss_from_edits=True))
    named = read(tutor, "I have two child.", answers[0])
    assert not named.abstained and named.corrected == "I have two children."
    assert named.gloss == "número del sustantivo: child → children"
    # an edit no rule names still leaves the sentence alone
    unnamed = read(tutor, "I have two child.", "I have two parrots. / sin errores")
    assert unnamed.abstained and unnamed.corrected == "I have two child."


@pytest.mark.parametrize(
    ("sentence", "original", "replacement", "category", "named"),
    [
        ("She doesn't likes coffee.", "likes", "like", "agreement", "third_person"),  # after does: no -s
        ("Does she plays the piano?", "plays", "play", "agreement", "third_person"),
        ("The people there was very friendly.", "was", "were", "there_is_plural", "people_plural"),  # allí
        ("The rooms there was clean.", "was", "were", "there_is_plural", "agreement"),
        ("In the streets there was many cars.", "was", "were", "there_is_plural", None),
        ("I work with others people.", "others", "other", "noun_number", "adjective_plural"),
        ("I have two childrens.", "childrens", "children", "spelling", "noun_number"),
        ("We had a lot of funs.", "funs", "fun", "spelling", "uncountable"),
        ("I have two chidren.", "chidren", "children", "spelling", None),
        ("We stayed in a campsite.", "in", "at", "word_confusion", "preposition"),  # a preposition chosen
        ("There is too much people.", "much", "many", "there_is_plural", "noun_number"),  # the counting word
        ("Thank you for you email.", "you", "your", "pronoun", "determiner"),  # a possessive
        ("My favourite food is the pizza.", "the pizza", "pizza", "determiner", "generic_the"),  # in general
        ("I go to the bed at ten.", "the bed", "bed", "determiner", None),  # go to bed: its own reason
        ("We spent a week in the Spain.", "the Spain", "Spain", "determiner", None),
        # named rightly already
        ("My friends likes it.", "likes", "like", "agreement", None),
        ("Last year there was many tourists.", "was", "were", "there_is_plural", None),
        ("In the town, there was many shops.", "was", "were", "there_is_plural", None),
        ("I have two friend.", "friend", "friends", "noun_number", None),
    ],
)
def test_an_edit_is_named_for_what_its_neighbours_show(sentence, original, replacement, category, named):
    start = sentence.index(original)
    e = Edit(start, start + len(original), original, replacement, category)
    assert name_in_context(sentence, e) == named
