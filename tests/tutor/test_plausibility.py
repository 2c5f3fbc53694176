import pytest

from corrige.tutor.plausibility import content_mismatch, load_known_words, unknown_words, write_known_words


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
