"""Target rendering and parsing."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from corrige.tutor.answer_text import (
    NO_ERRORS_GLOSS,
    GlossItem,
    parse_target,
    render_gloss,
    render_target,
    split_gloss,
)


def test_round_trip():
    corrected = "Yesterday I went to the store."
    gloss = "pasado irregular: goed → went"
    target = render_target(corrected, gloss)
    assert target == "Yesterday I went to the store. / pasado irregular: goed → went"
    assert parse_target(target) == (corrected, gloss)


def test_split_on_last_separator():
    assert parse_target("either / or is fine. / sin errores") == ("either / or is fine.", "sin errores")


@pytest.mark.parametrize("bad", ["", "no separator here", " / sin errores", "Hello. / ", "Hello./sin errores"])
def test_unparsable_targets(bad):
    assert parse_target(bad) is None


def test_render_target_rejects_separator_in_gloss():
    with pytest.raises(ValueError):
        render_target("Hi.", "a / b")


def test_split_gloss_items_and_categories():
    gloss = "tercera persona: go → goes; artículo a/an: a → an"
    items = split_gloss(gloss)
    assert items == [GlossItem("tercera persona", "go", "goes"), GlossItem("artículo a/an", "a", "an")]
    assert [i.category for i in items] == ["third_person", "a_an"]
    assert render_gloss(items) == gloss
    assert split_gloss(NO_ERRORS_GLOSS) == []
    assert render_gloss([]) == NO_ERRORS_GLOSS


def test_split_gloss_skips_malformed_items():
    items = split_gloss("tercera persona: go → goes; nonsense; : →")
    assert items == [GlossItem("tercera persona", "go", "goes")]
    assert split_gloss("inventado: x → y")[0].category == "other"


words = st.text(alphabet="abcdefghij ", min_size=1, max_size=12).map(str.strip).filter(bool)


@given(
    st.lists(st.tuples(st.sampled_from(["tercera persona", "comparativo", "mayúscula"]), words, words), max_size=3),
    words,
)
def test_gloss_and_target_round_trip(items, corrected):
    gloss = render_gloss([GlossItem(*i) for i in items])
    assert split_gloss(gloss) == [GlossItem(*i) for i in items]
    assert parse_target(render_target(corrected, gloss)) == (corrected, gloss)
