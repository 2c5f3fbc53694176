"""What a verb or a conjunction wants after it (`complement_patterns.py`), and the rules this round
widened: each fires where the words leave no other reading, and nowhere else."""

import pytest

from corrige.tutor.patterns import pattern_fixes


def fixes(sentence: str) -> list[tuple[str, str, str]]:
    return [(e.original, e.replacement, e.category) for e in pattern_fixes(sentence)]


@pytest.mark.parametrize(
    "sentence, expected",
    [
        ("We decided go to the beach.", [("go", "to go", "verb_form")]),
        ("She wanted go home.", [("go", "to go", "verb_form")]),
        ("I would like see the museum.", [("see", "to see", "verb_form")]),
        ("I need buy a new phone.", [("buy", "to buy", "verb_form")]),
        ("We enjoyed a lot.", [("enjoyed", "enjoyed ourselves", "verb_pattern")]),
        ("I enjoyed very much, and she did too.", [("enjoyed", "enjoyed myself", "verb_pattern")]),
        ("We arrived late because the traffic.", [("because", "because of", "preposition")]),
        ("I stayed at home because my illness, so I missed it.", [("because", "because of", "preposition")]),
        ("It was the more interesting experience of my life.", [("more", "most", "comparative")]),
        ("It is the more beautiful city in the world.", [("more", "most", "comparative")]),
        ("It is the more difficult thing I have ever done.", [("more", "most", "comparative")]),
        ("A lot of people thinks it is dangerous.", [("thinks", "think", "people_plural")]),
        ("A lot of my friends lives in Madrid.", [("lives", "live", "agreement")]),
        ("I went to the centre for buy some clothes.", [("for", "to", "purpose_for")]),
        ("I don't have much time for do it.", [("for", "to", "purpose_for")]),
        ("I came here for study English.", [("for", "to", "purpose_for")]),
        ("The tickets costed 80 euros.", [("costed", "cost", "past_irregular")]),
        ("I have payed the bill.", [("payed", "paid", "past_irregular")]),
    ],
)
def test_a_pattern_is_fixed(sentence, expected):
    assert fixes(sentence) == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "I want work, not money.",  # "work" may be the noun ("quiero trabajo")
        "I need help with my homework.",
        "I like go-karts.",  # "like" takes "to" only after "would"
        "Let me go and help me carry it.",  # "let", "help" take a bare verb
        "The film we enjoyed a lot was French.",  # its object is before it
        "What I enjoyed most was the food.",
        "We enjoyed the trip a lot.",
        "We arrived late because the traffic was terrible.",  # a clause after "because"
        "I was late because that happened.",  # "that" is its subject
        "Which is the more expensive of the two?",  # two things: "more" is right
        "The more you read, the more you learn in the end.",
        "The opinion of people is important.",  # its subject is "the opinion"
        "A lot of money was spent.",
        "I need it for work tomorrow.",  # "work" the noun
        "The plan was costed at two million euros.",
        "There were two hundred people and three thousand cars.",  # a number's word stays singular
    ],
)
def test_a_correct_or_ambiguous_sentence_is_left_alone(sentence):
    assert fixes(sentence) == []
