"""The rule cards: coverage of the tutor's categories and a schema that fails clearly."""

from collections import Counter

import pytest

from corrige.tutor.categories import CATEGORY_IDS
from corrige.tutor.knowledge import LEVELS, CardError, load_cards, sentences

VALID = """
[[card]]
id = "{id}"
category = "{category}"
level = "A2"
title = "married to, no 'married with'"
explanation = "En español decimos 'casado con', pero en inglés se dice married to."
examples = [
  {{ wrong = "She is married with a doctor.", right = "She is married to a doctor." }},
  {{ wrong = "He is married with Ana.", right = "He is married to Ana." }},
]
"""


def write(tmp_path, text, name="cards_test.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_at_least_sixty_cards_covering_every_category(cards):
    assert len(cards) >= 60
    per_category = Counter(c.category for c in cards)
    assert set(per_category) == set(CATEGORY_IDS)
    assert len({c.id for c in cards}) == len(cards)


def test_cards_follow_the_brief(cards):
    for card in cards:
        assert card.level in LEVELS
        assert 2 <= len(card.examples) <= 3
        assert 1 <= len(sentences(card.explanation)) <= 3
        assert all(ex.wrong != ex.right for ex in card.examples)


def test_summary_has_what_a_response_shows(cards):
    summary = next(c for c in cards if c.id == "preposition_married_to").summary()
    assert summary["id"] == "preposition_married_to"
    assert summary["title"] and summary["explanation"]
    assert summary["explanation"].startswith("En español decimos 'casado con'")
    assert set(summary["example"]) == {"wrong", "right"}


def test_valid_file_loads(tmp_path):
    cards = load_cards([write(tmp_path, VALID.format(id="x_married", category="preposition"))])
    assert [c.id for c in cards] == ["x_married"]


def test_unknown_category_names_file_card_and_choices(tmp_path):
    path = write(tmp_path, VALID.format(id="x_married", category="prepositions"))
    with pytest.raises(CardError) as err:
        load_cards([path])
    message = str(err.value)
    assert "cards_test.toml" in message and "x_married" in message
    assert "unknown category 'prepositions'" in message and "preposition" in message


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda t: t.replace('level = "A2"', 'level = "C2"'), "level"),
        (lambda t: t.replace("title = \"married to, no 'married with'\"\n", ""), "title"),
        (lambda t: t + 'colour = "red"\n', "colour"),
        (lambda t: t.replace('right = "He is married to Ana."', 'right = "He is married with Ana."'), "same"),
        (lambda t: t.replace('id = "x_married"', 'id = "X Married"'), "id"),
    ],
)
def test_schema_errors_are_clear(tmp_path, edit, needle):
    path = write(tmp_path, edit(VALID.format(id="x_married", category="preposition")))
    with pytest.raises(CardError, match=needle):
        load_cards([path])


def test_duplicate_ids_and_bad_toml(tmp_path):
    one = write(tmp_path, VALID.format(id="x_married", category="preposition"), "cards_a.toml")
    two = write(tmp_path, VALID.format(id="x_married", category="preposition"), "cards_b.toml")
    with pytest.raises(CardError, match="duplicate card id 'x_married'"):
        load_cards([one, two])
    with pytest.raises(CardError, match="cannot read"):
        load_cards([write(tmp_path, "[[card]\nid = ", "cards_c.toml")])
