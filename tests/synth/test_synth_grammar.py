"""The clean-sentence grammar: determinism, sentence shape, morphology and vocabulary."""

import random
import re

import pytest

from corrige.synth import lexicon as lx
from corrige.synth.grammar import FEATURES, Builder, render
from corrige.synth.morphology import (
    article_for,
    comparative,
    gerund,
    past,
    plural,
    superlative,
    third_person,
)
from corrige.synth.template_registry import registry


def _sample(seed: int, n: int = 300):
    rng = random.Random(seed)
    reg = registry()
    names = [k for k, (w, _) in reg.items() if w > 0]
    return [reg[rng.choice(names)][1](rng) for _ in range(n)]


def test_same_seed_same_sentences():
    assert [s.text for s in _sample(3)] == [s.text for s in _sample(3)]
    assert [s.text for s in _sample(3)] != [s.text for s in _sample(4)]


def test_sentences_look_like_sentences():
    for s in _sample(11, 2000):
        text = s.text
        assert text[0].isupper(), text
        assert text[-1] in ".?", text
        assert "  " not in text and " ." not in text and " ," not in text, text
        assert "{" not in text and "|" not in text and "_" not in text, text
        assert re.fullmatch(r"[a-z_]+(\.[a-z0-9 _]+)*", s.template), s.template


def test_length_distribution_is_mostly_five_to_twelve_words():
    lengths = [s.n_words for s in _sample(5, 2000)]
    assert min(lengths) >= 2
    mostly = sum(5 <= n <= 12 for n in lengths) / len(lengths)
    assert mostly > 0.75


def test_every_template_generates():
    rng = random.Random(0)
    for name, (_, fn) in registry().items():
        for _ in range(20):
            sentence = fn(rng)
            assert sentence.toks and sentence.template, name


@pytest.mark.parametrize(
    ("fn", "word", "expected"),
    [
        (past, "go", "went"),
        (past, "study", "studied"),
        (past, "stop", "stopped"),
        (past, "travel", "travelled"),
        (past, "live", "lived"),
        (past, "play", "played"),
        (third_person, "watch", "watches"),
        (third_person, "study", "studies"),
        (third_person, "have", "has"),
        (third_person, "play", "plays"),
        (gerund, "swim", "swimming"),
        (gerund, "write", "writing"),
        (gerund, "see", "seeing"),
        (plural, "city", "cities"),
        (plural, "child", "children"),
        (plural, "bus", "buses"),
        (plural, "day", "days"),
        (comparative, "big", "bigger"),
        (comparative, "easy", "easier"),
        (comparative, "good", "better"),
        (comparative, "expensive", "more expensive"),
        (superlative, "nice", "nicest"),
        (superlative, "bad", "worst"),
        (article_for, "apple", "an"),
        (article_for, "hour", "an"),
        (article_for, "university", "a"),
        (article_for, "car", "a"),
    ],
)
def test_morphology(fn, word, expected):
    assert fn(word) == expected


def test_render_capitalises_and_attaches_punctuation():
    text, spans = render(["it", "is", "cold", ",", "isn't", "it", "?"], [False, False, False, True, False, False, True])
    assert text == "It is cold, isn't it?"
    assert text[spans[0][0] : spans[0][1]] == "It"
    assert text[spans[4][0] : spans[4][1]] == "isn't"


def test_phrase_notation_and_tags():
    b = Builder(random.Random(1))
    b.phrase("at|p=in_the night with {p} red cars", None)
    tags = [(t.text, t.tag) for t in b.toks]
    assert tags == [("at", "PREP"), ("night", "X"), ("with", "PREP"), ("my", "POSS"), ("red", "ADJ"), ("cars", "N")]
    assert b.toks[0].f["p"] == "in the"
    assert b.toks[5].f["number"] == "pl"


def test_vocabulary_has_several_hundred_words():
    words = set(
        lx.MALE_NAMES
        + lx.FEMALE_NAMES
        + lx.PROFESSIONS
        + lx.CITIES
        + lx.COUNTRIES
        + lx.NATIONALITIES
        + lx.LANGUAGES
        + lx.DAYS
        + lx.MONTHS
        + lx.SPORTS
    )
    words |= set(lx.IRREGULAR) | set(lx.ACTIVITIES) | set(lx.PLACES) | set(lx.DESCRIBABLE)
    words |= {a for group in lx.ADJ_GROUPS.values() for a in group}
    for phrases in list(lx.ACTIVITIES.values()) + list(lx.PLACES.values()):
        for phrase in phrases:
            words |= {w.split("|")[0] for w in phrase.split() if not w.startswith("{")}
    assert len(words) >= 400


def test_fast_rendering_matches_rendering_with_spans():
    from corrige.synth.grammar import PUNCT_TAG, render_text

    for s in _sample(13, 500):
        words = [t.text for t in s.toks]
        assert render_text(words) == render(words, [t.tag == PUNCT_TAG for t in s.toks])[0]


def test_token_features_are_the_declared_ones():
    """Every feature a template sets is declared in FEATURES, and every declared one is set."""
    used: set[str] = set()
    rng = random.Random(0)
    for _, fn in registry().values():
        for _ in range(200):
            used.update(key for tok in fn(rng).toks for key in tok.f)
    assert used == set(FEATURES)
