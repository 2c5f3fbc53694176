"""The model's edits that the sentence itself shows to be wrong (`edit_checks.py`), and the ones
it leaves alone."""

import pytest

from corrige.tutor.agent import Correction, _without_wrong_edits
from corrige.tutor.edit_checks import against_the_sentence
from corrige.tutor.edits import Edit


def edit(sentence: str, original: str, replacement: str, category: str) -> Edit:
    start = sentence.index(original)
    return Edit(start, start + len(original), original, replacement, category)


@pytest.mark.parametrize(
    ("sentence", "original", "replacement", "category"),
    [
        ("They buy too many things.", "too", "to", "word_confusion"),
        ("It was too late.", "too", "to", "word_confusion"),
        ("The room was too small for us.", "too", "to", "word_confusion"),
        ("We have a party on the 15th.", "on", "in", "preposition"),
        ("We meet on Monday.", "on", "at", "preposition"),
        ("My grandparents moved to a village.", "grandparents", "grandparent", "noun_number"),
        ("The music is great and makes me happy.", "makes", "made", "verb_tense"),
        ("We had to wear a uniform at school.", "a uniform", "uniform", "determiner"),
        ("She bought a new car.", "a new car", "new car", "determiner"),
        ("She is a good teacher.", "is", "was", "verb_tense"),
        ("Is very cold there in March?", "Is", "It is", "missing_subject"),  # a question made a statement
        ("People in small villages know each other.", "small", "a small", "determiner"),  # "a" before a plural
        ("The life of my grandfather was hard.", "The life", "Life", "generic_the"),  # "of" says whose
        ("I will work from home today.", "from home", "home", "preposition"),
        ("I wanted to take on more responsibility.", "more", "a more", "determiner"),
        ("I would like to renew it for one more year.", "year", "years", "noun_number"),  # after "one"
        ("I have one brother and two sisters.", "brother", "brothers", "noun_number"),
        ("I work from home three days per week.", "week", "weeks", "noun_number"),  # "per" asks for one
        ("I was born in the 1990s.", "the 1990s", "1990s", "determiner"),  # a decade keeps "the"
        ("Shopping with children is even worse.", "is", "are", "there_is_plural"),  # no "there"
        ("It needs both regulation and education.", "regulation", "regulations", "noun_number"),
        ("The hotel where we stayed was clean.", "where", "were", "word_confusion"),  # a clause after it
        ("Seldom have I felt so happy.", "have", "has", "third_person"),  # the subject comes after it
        ("Neither have we.", "have", "has", "third_person"),
        ("Only once have they been late.", "have", "has", "third_person"),
        ("Has he finished?", "Has", "Have", "agreement"),
        ("Neither of my brothers likes football.", "likes", "like", "agreement"),  # "neither of": either
        ("One of my friends lives in London.", "lives", "live", "agreement"),  # one lives
        ("We request that all guests be quiet after midnight.", "quiet", "quite", "word_confusion"),
        ("The street is quiet.", "quiet", "quite", "word_confusion"),
        ("There is music in all the streets.", "is", "are", "there_is_plural"),  # a mass noun after it
        ("There is not hot water.", "is", "are", "agreement"),
        ("There was a lot of noise.", "was", "were", "there_is_plural"),
        ("I worked in a children's hospital.", "a children's", "children's", "determiner"),
        ("I'm married to a Scottish man.", "a Scottish", "Scottish", "determiner"),
        ("We have more bad news.", "more bad", "worse", "comparative"),  # "more" counts the news
        ("She is the most good-natured person.", "most good", "best", "comparative"),
        ("I go to the gym every Monday.", "every", "this", "determiner"),
        ("The life insurance policy covers accidents.", "The life", "Life", "generic_the"),
        ("The price of transport has risen.", "transport has", "transports have", "verb_tense"),  # "of"
        ("I saw a dog that was eating.", "was", "that was", "determiner"),  # "that that"
        ("We talked about who was going to wash.", "who", "which", "pronoun"),  # asks who
        ("Prices have gone up, and so has the rent.", "has", "had", "verb_tense"),  # the reply's tense
        ("Each of the reports that were sent has been read.", "were", "was", "agreement"),
        ("She was born on a Tuesday.", "a Tuesday", "Tuesday", "determiner"),
        ("They need better training.", "better", "a better", "determiner"),
        ("The company was founded in 1952.", "founded", "found", "verb_tense"),
        ("I need an X-ray of my arm.", "an", "a", "a_an"),  # "eks": a vowel sound
        ("She has an 11-year-old daughter.", "an", "a", "a_an"),
        ("She finished first, and I came second.", "second", "a second", "determiner"),  # a place in a race
        ("Some people prefer tea; others, coffee.", "; others", ", other", "noun_number"),  # the pronoun
        ("I am chair of the committee this year.", "chair", "a chair", "determiner"),  # a post
        ("It should arrive within three working days.", "three working days", "three days working", "word_order"),
        ("The will to live kept him going.", "will to live", "will live", "verb_form"),  # a noun
        ("I found an empty can to recycle.", "to recycle", "recycle", "verb_form"),
        ("She was worried for her safety.", "for", "about", "preposition"),
        ("The real problem is the lack of housing.", "the lack", "a lack", "determiner"),
        ("The real problem is the lack of housing.", "the", "a", "determiner"),
        ("He returned from the French border.", "the French", "French", "determiner"),
        ("The four-day week will become the norm.", "week", "weeks", "noun_number"),
        ("They work in a tiny office above a café.", "a café", "café", "determiner"),  # a word it does not know
        ("She drives a Volkswagen Golf.", "a Volkswagen", "Volkswagen", "determiner"),  # a make
        ("She married a Scotsman.", "a Scotsman", "Scotsman", "determiner"),
        ("Traffic was terrible on the motorway.", "on", "in", "preposition"),  # on a road
        ("When their mother dies, they leave.", "their", "there", "word_confusion"),  # before its noun
    ],
)
def test_an_edit_the_sentence_shows_wrong_is_found(sentence, original, replacement, category):
    e = edit(sentence, original, replacement, category)
    assert against_the_sentence(sentence, [e]) == [e]


@pytest.mark.parametrize(
    ("sentence", "original", "replacement", "category"),
    [
        ("I went too the shop.", "too", "to", "word_confusion"),  # a place after it
        ("I want too go home.", "too", "to", "word_confusion"),
        ("We arrived on the station.", "on", "at", "preposition"),
        ("I have a friends in Madrid.", "friends", "friend", "noun_number"),  # "a" asks for one
        ("I see every days the sea.", "days", "day", "noun_number"),
        ("Yesterday I go to the cinema.", "go", "went", "past_marker"),  # a past in the sentence
        ("When I was young I play football.", "play", "played", "verb_tense"),
        ("Can you give me a advice?", "a advice", "advice", "determiner"),  # no "a" in the general sense
        ("We had a breakfast at eight.", "a breakfast", "breakfast", "determiner"),
        ("In a such situation we left.", "a such", "such", "determiner"),  # the article is the mistake
        ("He is a your friend.", "a your friend", "your friend", "determiner"),
        ("Last year she is our teacher.", "is", "was", "verb_tense"),
        ("Is very cold today.", "Is", "It is", "missing_subject"),
        ("I have new car.", "new", "a new", "determiner"),
        ("The most of them came.", "The most", "Most", "determiner"),
        ("The life is hard.", "The life", "Life", "generic_the"),
        ("It is more difficult task.", "more", "a more", "determiner"),  # "a more" before an adjective
        ("They play the guitar in 2015.", "play", "played", "past_marker"),  # a year
        ("Is there any cats in my street?", "Is", "Are", "there_is_plural"),  # "there" after it
        ("I have an house.", "an", "a", "a_an"),
        ("The shops where closed on Sunday.", "where", "were", "word_confusion"),  # no clause after it
        ("We stayed for two more week.", "week", "weeks", "noun_number"),  # "two" counts more than one
        ("I have one of my friend here.", "friend", "friends", "noun_number"),
        ("Have he finished?", "Have", "Has", "third_person"),  # the pronoun after it agrees
        ("Were I right?", "Were", "Was", "agreement"),
        ("Do she like it?", "Do", "Does", "third_person"),
        ("One of my friends live in London.", "live", "lives", "agreement"),
        ("Each of the rooms have a bath.", "have", "has", "agreement"),
        ("One of the people who lives here is ill.", "lives", "live", "agreement"),  # a relative clause
        ("It was quiet good.", "quiet", "quite", "word_confusion"),
        ("It was quiet a long trip.", "quiet", "quite", "word_confusion"),
        ("There is many cats.", "is", "are", "there_is_plural"),
        ("There was two problems.", "was", "were", "there_is_plural"),
        ("My brother is more bad than me.", "more bad", "worse", "comparative"),
        ("The life is hard.", "The life", "Life", "generic_the"),
        ("The life in the city is hard.", "The life", "Life", "generic_the"),
        ("My friend have a car.", "friend have", "friends have", "noun_number"),
        ("I have a book who is old.", "who", "which", "pronoun"),  # a thing before it
        ("She is tired, and so are my brother.", "are", "is", "agreement"),  # agreement, not tense
        ("The boy that were here is ill.", "were", "was", "agreement"),
        ("She has better job.", "better", "a better", "determiner"),
        ("I need second chance.", "second", "a second", "determiner"),  # its noun after it
        ("I like others students.", "others", "other", "adjective_plural"),  # before its noun
        ("I am member of the club.", "member", "a member", "determiner"),  # not a post
        ("I am a Spanish.", "a Spanish", "Spanish", "determiner"),  # an adjective: the learner's slip
        ("We went on the beach.", "on", "to", "preposition"),
        ("I think their is a problem.", "their", "there", "word_confusion"),  # before a verb
        ("They can to swim.", "can to swim", "can swim", "verb_form"),
        ("I am worried for my exam.", "for", "about", "preposition"),
        ("We went to the Spain.", "the Spain", "Spain", "determiner"),
    ],
)
def test_an_edit_the_sentence_allows_is_kept(sentence, original, replacement, category):
    assert against_the_sentence(sentence, [edit(sentence, original, replacement, category)]) == []


def test_a_correction_loses_only_the_wrong_edit_and_abstains_with_none_left():
    sentence = "My grandparents moved to a small vilage."
    wrong, spelling = (
        edit(sentence, "grandparents", "grandparent", "noun_number"),
        edit(sentence, "vilage", "village", "spelling"),
    )
    c = Correction(sentence, "My grandparent moved to a small village.", "", [wrong, spelling])
    kept = _without_wrong_edits(c)
    assert kept.edits == [spelling] and kept.corrected == "My grandparents moved to a small village."
    alone = _without_wrong_edits(Correction(sentence, "My grandparent moved to a small vilage.", "", [wrong]))
    assert alone.abstained and alone.abstain_reason == "against_the_sentence" and alone.corrected == sentence
