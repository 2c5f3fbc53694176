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
        ("past_irregular", "runned", "ran", "past_irregular_vowel", "past_irregular_frequent"),
        # several words, a content word changed in form: by the ending it gains
        ("comparative", "more short", "shorter", "comparative_er", "comparative_irregular"),
        ("comparative", "more happy", "happier", "comparative_er", "comparative_est"),
        ("verb_pattern", "to cook", "cooking", "verb_pattern_ing", "verb_pattern_modal"),
        # a card's words: "good → better" is not the card of every comparative that drops "more"
        ("comparative", "more longer", "longer", "comparative_er", "comparative_irregular"),
        ("comparative", "more better", "better", "comparative_irregular", None),
        # a case change looks the same for every capital-letter card: each has its own words
        ("capitalisation", "portuguese", "Portuguese", "capitalisation_nationalities", "capitalisation_days_months"),
        ("capitalisation", "friday", "Friday", "capitalisation_days_months", "capitalisation_nationalities"),
        ("capitalisation", "i'm", "I'm", "capitalisation_i", "capitalisation_days_months"),
        ("word_confusion", "its", "it's", "word_confusion_its", "word_confusion_there_their"),
        ("preposition", "since", "for", "preposition_for_period", "preposition_at_in_time"),
        ("agreement", "has", "have", "agreement_have_do", "agreement_plural_subject"),
        # a word for one of another stem: the same word put in, in any form, not just any swap
        ("collocation", "make", "do", "collocation_do_tasks", "collocation_make_mistake"),
        ("collocation", "did", "made", "collocation_make_mistake", "collocation_do_tasks"),
        ("collocation", "make", "ask", "collocation_ask_question", "collocation_do_tasks"),
        ("collocation", "make", "do", "collocation_do_tasks", "collocation_ask_question"),
    ],
)
def test_a_card_fits_the_edit_that_goes_its_way(category, original, replacement, right, wrong):
    assert fits(BY_ID[right], category, original, replacement)
    if wrong is not None:
        assert not fits(BY_ID[wrong], category, original, replacement)


@pytest.mark.parametrize(
    ("sentence", "category", "original", "replacement", "right", "wrong"),
    [
        # "When I was…" only beside a sentence about a time with "when"
        ("Last Monday we watch a film.", "past_marker", "watch", "watched", "past_marker_simple", "past_marker_when"),
        ("When we were kids, we watch cartoons.", "past_marker", "watch", "watched", "past_marker_when", None),
        # "Are there…?" only beside a question
        (
            "There was many people at the concert.",
            "there_is_plural",
            "was",
            "were",
            "there_were_past",
            "there_are_question",
        ),
        ("There is many trees in my street.", "there_is_plural", "is", "are", "there_are_plural", "there_are_question"),
        ("Is there any shops near here?", "there_is_plural", "Is", "Are", "there_are_question", None),
        # every + singular, not a plural dropped anywhere
        ("She phones her grandmother every weeks.", "noun_number", "weeks", "week", "noun_number_every_singular", None),
        # "on + días" only beside a day or a date: "depends of → on" is another rule
        ("We meet in Friday.", "preposition", "in", "on", "preposition_on_days", None),
        ("It depends of the weather.", "preposition", "of", "on", "preposition_depend_on", "preposition_on_days"),
        # a card of one verb's or adjective's preposition only beside that word ("for visit → to
        # visit" is no "married to"; "didn't understand nothing" has no "never")
        ("She is married with a doctor.", "preposition", "with", "to", "preposition_married_to", None),
        ("I went to Málaga for visit my family.", "preposition", "for", "to", None, "preposition_married_to"),
        ("He is afraid from dogs.", "preposition", "from", "of", "preposition_afraid_of", "preposition_different_from"),
        (
            "I didn't understand nothing.",
            "double_negation",
            "nothing",
            "anything",
            "double_negation_any",
            "double_negation_never",
        ),
        ("I want that you come.", "verb_pattern", "that you come", "you to come", "verb_pattern_want_to", None),
        (
            "We made a photo of the lake.",
            "collocation",
            "made",
            "took",
            "collocation_take_photo",
            "collocation_miss_train",
        ),
        # a cue may name the edit's place: "can" right before it, a preposition right before it
        (
            "I look forward to meet you.",
            "verb_form",
            "meet",
            "meeting",
            "verb_form_after_preposition",
            "verb_form_after_modal_and_have",
        ),
        (
            "I'm sure she is study now.",
            "verb_form",
            "study",
            "studying",
            "verb_form_after_modal_and_have",
            "verb_form_after_preposition",
        ),
        ("I can to swim.", "verb_form", "to swim", "swim", "verb_form_after_modal_and_have", None),
        # the age in the past only beside a past
        ("My brother has 15 years.", "age_have", "has 15 years", "is 15 years old", None, "age_be_past"),
        ("When I had 16 years, I lived there.", "age_have", "had", "was", "age_be_past", None),
        # the sports, meals and languages cards only beside their own words
        ("I love the nature.", "generic_the", "the nature", "nature", "generic_the_abstract", "generic_the_sports"),
        ("The pollution is bad.", "generic_the", "The pollution", "Pollution", None, "generic_the_languages"),
        ("I play the tennis.", "generic_the", "the tennis", "tennis", "generic_the_sports", "generic_the_meals"),
        # a time's preposition only where the time follows (not "one of the best players of the history")
        ("He is one of the best of the history.", "preposition", "of the", "in", None, "preposition_at_in_time"),
        ("We meet on 7 o'clock.", "preposition", "on", "at", "preposition_at_in_time", None),
        # a day's "on" only before a day; a past's card only beside its own kind of past
        ("She got lost in the metro.", "preposition", "in", "on", None, "preposition_on_days"),
        ("He teached me maths.", "past_irregular", "teached", "taught", "past_irregular_ought", "past_irregular_vowel"),
        # "didn't" is no modal; "If it will rain" is no past time
        ("I didn't went there.", "verb_form", "went", "go", None, "verb_form_after_modal_and_have"),
        ("If it will rain, we stay.", "verb_tense", "will rain", "rains", None, "verb_tense_perfect_past_time"),
        # an article put in and one taken out are two cards
        (
            "I went to the bed early.",
            "determiner",
            "the bed",
            "bed",
            "determiner_no_article",
            "determiner_singular_noun",
        ),
        ("I have car.", "determiner", "car", "a car", "determiner_singular_noun", "determiner_no_article"),
        # a length of time after it, a word of its own, an adjective before the job
        ("She is responsible of the shop.", "preposition", "of", "for", None, "preposition_for_period"),
        ("I lived there since five years.", "preposition", "since", "for", "preposition_for_period", None),
        (
            "A lot of people thinks so.",
            "people_plural",
            "thinks",
            "think",
            "people_plural_verb",
            "people_plural_person",
        ),
        ("He works as waiter.", "profession_article", "waiter", "a waiter", None, "profession_article_adjective"),
        ("He works as good waiter.", "profession_article", "good", "a good", "profession_article_adjective", None),
        ("I need more informations.", "uncountable", "informations", "information", None, "uncountable_furniture"),
        ("The man which lives here.", "pronoun", "which", "who", "pronoun_who_which", "pronoun_not_reflexive"),
        (
            "I feel myself tired.",
            "pronoun",
            "feel myself tired",
            "feel tired",
            "pronoun_not_reflexive",
            "pronoun_who_which",
        ),
        # "passed" is a past, not "pass" made regular: "passed → had" is no "pass → spend"
        ("We passed a great time.", "collocation", "passed", "had", "collocation_have_party", "collocation_spend_time"),
        # a time word beyond another preposition is not the edit's ("arrived to Lisbon at night")
        (
            "We arrived to Lisbon at night.",
            "preposition",
            "to",
            "in",
            "preposition_arrive_at",
            "preposition_at_in_time",
        ),
        ("I never drive in night.", "preposition", "in", "at", "preposition_at_in_time", None),
        ("We arrived to Lisbon on Monday.", "preposition", "to", "in", None, "preposition_on_days"),
        (
            "My sister is nurse.",
            "profession_article",
            "nurse",
            "a nurse",
            "profession_article_be",
            "profession_article_as",
        ),
        ("She works as waitress.", "profession_article", "waitress", "a waitress", "profession_article_as", None),
        # "it is" + an adjective, not + a noun phrase
        ("Is very important to study.", "missing_subject", "Is", "It is", "missing_subject_it_adjective", None),
        (
            "I study it because is the language of work.",
            "missing_subject",
            "is",
            "it is",
            None,
            "missing_subject_it_adjective",
        ),
        (
            "I have much friends.",
            "noun_number",
            "much",
            "many",
            "noun_number_many_fewer",
            "noun_number_plural_after_numbers",
        ),
    ],
)
def test_a_card_with_a_cue_fits_only_the_sentences_it_names(sentence, category, original, replacement, right, wrong):
    if right is not None:
        assert fits(BY_ID[right], category, original, replacement, sentence)
    if wrong is not None:
        assert not fits(BY_ID[wrong], category, original, replacement, sentence)


def test_no_card_for_a_plural_dropped_without_every():
    assert fitting(CARDS, "noun_number", "others", "other", "Others students went home early.") == []


def test_every_card_fits_its_own_examples():
    """A card's words and cue hold for its own examples: each one, in its sentence, fits the card."""
    from corrige.tutor.edits import diff_edits

    for card in CARDS:
        for ex in card.examples:
            edits = diff_edits(ex.wrong, ex.right)
            assert any(fits(card, card.category, e.original, e.replacement, ex.wrong) for e in edits), (
                card.id,
                ex.wrong,
            )


@pytest.mark.parametrize(
    ("category", "original", "replacement"),
    [
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
        # every days → day: the plural card teaches the other way; the "every + singular" card this way
        ("I go to the gym every days.", ("days", "day", "noun_number"), "noun_number_every_singular"),
        ("I am writting a letter.", ("writting", "writing", "spelling"), None),
        ("I will recieve the letter.", ("recieve", "receive", "spelling"), None),
    ],
)
def test_the_named_counter_examples_get_the_card_of_their_edit_or_none(lookup, sentence, edit, first):
    hits = lookup.lookup(correction(sentence, edit)).hits
    assert (hits[0].card.id if hits else None) == first
    assert all(fits(h.card, edit[2], edit[0], edit[1], sentence) for h in hits)


@pytest.mark.parametrize(
    ("sentence", "edit", "first"),
    [
        # cards that share the edit's words with the right one, but whose rule is not this one's
        ("Yesterday I clean my room.", ("clean", "cleaned", "past_marker"), "past_marker_simple"),
        ("Last year there was many tourists in the town.", ("was", "were", "there_is_plural"), "there_were_past"),
        ("There is many reasons to learn English.", ("is", "are", "there_is_plural"), "there_are_plural"),
        ("This flat is more cheaper than the other one.", ("more cheaper", "cheaper", "comparative"), "comparative_er"),
        ("Her cooking is more better than mine.", ("more better", "better", "comparative"), "comparative_irregular"),
        ("My aunt loves german food.", ("german", "German", "capitalisation"), "capitalisation_nationalities"),
        ("Its too late to call her.", ("Its", "It's", "word_confusion"), "word_confusion_its"),
        ("We lived in Lima since four years.", ("since", "for", "preposition"), "preposition_for_period"),
    ],
)
def test_the_card_shown_teaches_the_edit_and_not_a_neighbour_rule(lookup, sentence, edit, first):
    hits = lookup.lookup(correction(sentence, edit)).hits
    assert hits and hits[0].card.id == first, [h.card.id for h in hits]
    assert all(fits(h.card, edit[2], edit[0], edit[1], sentence) for h in hits)


@pytest.mark.parametrize(
    ("sentence", "edit", "card", "example_wrong"),
    [
        # the card's example that goes the edit's way is the one shown, not the opposite one
        ("The dog is eating it's food.", ("it's", "its", "word_confusion"), "word_confusion_its", "it's food"),
        ("Its very cold today.", ("Its", "It's", "word_confusion"), "word_confusion_its", "Its very cold"),
        ("We waited during two hours.", ("during", "for", "preposition"), "preposition_for_period", "during"),
        ("He told that he was tired.", ("told", "said", "verb_pattern"), "verb_pattern_tell_say", "told that"),
        ("He said me that he was tired.", ("said", "told", "verb_pattern"), "verb_pattern_tell_say", "said me"),
    ],
)
def test_the_example_shown_goes_the_way_of_the_edit(lookup, sentence, edit, card, example_wrong):
    hits = {h.card.id: h for h in lookup.lookup(correction(sentence, edit)).hits}
    assert card in hits, list(hits)
    assert example_wrong in hits[card].summary()["example"]["wrong"]


def test_the_only_fitting_card_shows_its_example_that_goes_the_edits_way():
    """The "fit" path (one card fits, no ranking) shows the same example as the ranked one."""
    fit_only = RuleLookup(Retriever.load(dense=False, cache_dir=None), k=3, mode="hybrid")
    answer = fit_only.lookup(correction("The dog is eating it's food.", ("it's", "its", "word_confusion")))
    assert answer.mode == "fit" and answer.hits
    assert "it's food" in answer.hits[0].summary()["example"]["wrong"]


def test_the_for_card_wants_for_or_a_period_after_since():
    card = next(c for c in bundled_cards() if c.id == "present_perfect_for")
    assert fits(card, "present_perfect", "study", "have studied", "I study here for two years.")
    assert fits(card, "present_perfect", "study", "have studied", "I study here since two years.")
    assert not fits(card, "present_perfect", "play", "have played", "I play football since I was seven years old.")
