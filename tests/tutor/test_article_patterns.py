"""The missing article before a singular countable noun (`article_patterns.py`): *I have car*,
*she bought new phone*, *it was good idea*, *I work in factory*; and the readings where a bare noun
is right (*I have family in Spain*, *there is room for*, *its own garden*, *car insurance*)."""

import pytest

from corrige.tutor.edits import apply_edits
from corrige.tutor.patterns import pattern_fixes


def fixed(sentence: str) -> str:
    return apply_edits(sentence, pattern_fixes(sentence))


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("I have car and I drive to work.", "I have a car and I drive to work."),
        ("She bought new phone yesterday.", "She bought a new phone yesterday."),
        ("We need bigger house.", "We need a bigger house."),
        ("We had great time in Madrid.", "We had a great time in Madrid."),
        ("I have big family.", "I have a big family."),
        ("I think it's good idea.", "I think it's a good idea."),
        ("It was very expensive car.", "It was a very expensive car."),
        ("He is friend of mine.", "He is a friend of mine."),
        ("There is problem with my room.", "There is a problem with my room."),
        ("I work in factory near my house.", "I work in a factory near my house."),
        ("I live in flat with two friends.", "I live in a flat with two friends."),
        ("She found interesting job in Madrid.", "She found an interesting job in Madrid."),
        ("I had accident last year.", "I had an accident last year."),
        ("She doesn't have job, she also needs car.", "She doesn't have a job, she also needs a car."),
    ],
)
def test_a_counted_noun_gets_its_article(sentence: str, expected: str) -> None:
    edits = [e for e in pattern_fixes(sentence) if e.category == "determiner"]
    assert edits and fixed(sentence) == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "I have family in Spain.",
        "I have free time on Sundays.",
        "I have more time now.",
        "There is room for everyone.",
        "Each of the houses has its own garden.",
        "He has car insurance.",
        "I need phone numbers.",
        "It was cold.",
        "I have cold hands.",
        "It was so good idea.",
        "I had to book hotel.",
        "I like it's garden.",
        "She has a car and a house.",
        "I bought my first car.",
        "We had dinner at home.",
        "I work in Factory Street.",
        "We have experience in sales.",
        "I want to rent car parks.",
        "Have car, will travel.",
    ],
)
def test_a_bare_noun_that_is_right_or_no_counted_noun_is_left(sentence: str) -> None:
    assert not [e for e in pattern_fixes(sentence) if e.category == "determiner"]
