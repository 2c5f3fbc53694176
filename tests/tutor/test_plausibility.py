import pytest
from tiny_tutor import read, tiny_tutor

from corrige.tutor.agent import TutorConfig
from corrige.tutor.edit_labels import CAPITALISED
from corrige.tutor.plausibility import (
    common_word_capitalised,
    content_mismatch,
    load_known_words,
    unknown_words,
    write_known_words,
)


@pytest.mark.parametrize(
    "source, corrected",
    [
        ("Yesterday I goed to the store.", "Yesterday I went to the store."),
        ("Julia hasn't seen nobody this week.", "Julia hasn't seen anybody this week."),
        ("Santiago was more old than Madrid.", "Santiago was older than Madrid."),
        ("I have 20 years.", "I am 20 years old."),
        ("Is raining.", "It is raining."),
        ("Where you live?", "Where do you live?"),
        ("What means this?", "What does this mean?"),
        ("She bought a car red.", "She bought a red car."),
        ("They save money for to buy a car.", "They save money to buy a car."),
        ("He haved dinner.", "He had dinner."),
    ],
)
def test_taught_edits_are_plausible(source, corrected):
    assert content_mismatch(source, corrected) is None


@pytest.mark.parametrize(
    "source, corrected, reason",
    [
        ("I am teacher in a secondary school.", "I am a teacher in a secondary.", "content_dropped"),
        ("She is married with a German man.", "She is married to a German.", "content_dropped"),
        ("What you did last weekend?", "What did you make last weekend?", "content_added"),
        ("We stayed in a hotel very nice.", "We stayed in a nice hotel very nice.", "content_added"),
        ("We visited a museum very nice.", "We visited a nice museum nice.", "content_repeated"),
    ],
)
def test_untaught_edits_are_flagged(source, corrected, reason):
    assert content_mismatch(source, corrected) == reason


def test_unknown_words_allow_inflections_of_seen_words(tmp_path):
    write_known_words(tmp_path, ["They carried a black jacket.", "I speak English very well."])
    known = load_known_words(tmp_path)
    assert unknown_words("She carry a jacket.", "She carries a jacket.", known) == []
    assert unknown_words("I want a jacket black.", "I want a blacket.", known) == ["blacket"]
    assert unknown_words("She speaks very well english.", "She speaks very welllish.", known) == ["welllish"]
    assert load_known_words(tmp_path / "missing") is None


@pytest.mark.parametrize(
    "source, corrected, implausible",
    [
        ("To err is human.", "To Er is human.", True),  # a new word, and a name
        ("I like the bill.", "I like the Bill.", True),  # a common word given a capital
        ("I met some canadian friends.", "I met some Canadian friends.", False),  # English capitalises it
        ("I live in london.", "I live in London.", False),  # a name the learner wrote in lower case
        ("i like it.", "I like it.", False),  # the first word
        ("We saw Bill there.", "We saw Bill there.", False),  # the learner's own capital
    ],
)
def test_a_capital_the_learner_did_not_write_must_be_one_english_uses(source, corrected, implausible):
    assert common_word_capitalised(source, corrected, CAPITALISED) is implausible


def test_the_tutor_abstains_on_an_answer_that_capitalises_a_common_word():
    answers = ["To Er is human. / mayúscula: err → Er", "To err is human. / sin errores"]
    tutor = tiny_tutor(answers, TutorConfig(min_token_prob=0.5))
    c = read(tutor, "To err is human.", answers[0])
    assert c.abstained and c.abstain_reason == "common_word_capitalised" and c.corrected == "To err is human."
