"""The error catalogue: every category is produced, exactly, with well-formed glosses."""

import random
import re

import pytest

from corrige.synth.data import _Sampler
from corrige.synth.error_catalogue import CATALOGUE, inject
from corrige.synth.grammar import PRONOUNS, Builder
from corrige.tutor.answer_text import ARROW, TARGET_SEPARATOR, split_gloss
from corrige.tutor.categories import CATEGORIES, SYNTHETIC_CATEGORY_IDS, id_of, label_of
from corrige.tutor.edits import apply_edits


@pytest.fixture(scope="module")
def sampler():
    return _Sampler(data_seed=0, rng=random.Random(0), train=False, max_words=16, max_chars=100)


def test_catalogue_shape():
    assert list(CATALOGUE) == list(SYNTHETIC_CATEGORY_IDS)
    assert len(SYNTHETIC_CATEGORY_IDS) == 25 and len(CATEGORIES) == 36
    assert len({c.label for c in CATEGORIES}) == len(CATEGORIES)
    for c in CATEGORIES:
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", c.id)
        assert c.level in ("A1", "A2", "B1", "B2")
        assert not any(sep in c.label for sep in (":", ";", TARGET_SEPARATOR))
        assert id_of(label_of(c.id)) == c.id
    assert id_of("no such label") == "other"


@pytest.mark.parametrize("category", SYNTHETIC_CATEGORY_IDS)
def test_every_category_generates_exact_examples(sampler, category):
    made = []
    for _ in range(400):
        ex = sampler.erroneous(category)
        if ex is not None:
            made.append(ex)
        if len(made) >= 5:
            break
    assert made, f"no example for {category}"
    for ex in made:
        assert category in ex.categories
        assert ex.source != ex.corrected
        assert apply_edits(ex.source, ex.edits) == ex.corrected
        for edit in ex.edits:
            assert ex.source[edit.start : edit.end] == edit.original
            assert edit.original and edit.replacement and edit.original != edit.replacement
        items = split_gloss(ex.gloss)
        assert [i.category for i in items] == ex.categories
        assert [(i.original, i.replacement) for i in items] == [(e.original, e.replacement) for e in ex.edits]
        assert TARGET_SEPARATOR not in ex.gloss
        assert ex.gloss.count(ARROW) == len(ex.edits)


def _sentence(build):
    b = Builder(random.Random(0))
    build(b)
    return b.done("test")


def _one(category, build, seed=0):
    injected = inject(_sentence(build), [category], random.Random(seed))
    assert injected is not None
    return injected.source, injected.gloss


def test_worked_examples():
    he = PRONOUNS["he"]
    i = PRONOUNS["I"]
    assert _one("third_person", lambda b: (b.verb(he, "go", "pres"), b.phrase("to school"))) == (
        "He go to school.",
        "tercera persona: go → goes",
    )
    assert _one("past_irregular", lambda b: (b.verb(i, "go", "past"), b.phrase("home"))) == (
        "I goed home.",
        "pasado irregular: goed → went",
    )
    assert _one("a_an", lambda b: (b.verb(i, "eat", "pres"), b.phrase("an apple"))) == (
        "I eat a apple.",
        "artículo a/an: a → an",
    )

    def teacher(b):
        b.verb(i, "be", "pres")
        b.add("a", "DET", pa="1")
        b.add("teacher", "N")

    assert _one("profession_article", teacher) == ("I am teacher.", "artículo con profesión: teacher → a teacher")

    def raining(b):
        b.add("it", "S", person="3s", dummy="1")
        b.add("is", "AUX", lemma="be")
        b.add("raining", "V", lemma="rain", form="ing")

    assert _one("missing_subject", raining) == ("Is raining.", "falta el sujeto: Is → It is")

    def age(b):
        v = b.verb(i, "be", "pres")
        b.toks[v].f["age"] = "1"
        b.phrase("20 years old")

    assert _one("age_have", age) == ("I have 20 years.", "edad con be: have 20 years → am 20 years old")

    def life(b):
        b.add("life", "N", gen="1")
        b.phrase("is hard")

    assert _one("generic_the", life) == ("The life is hard.", "artículo genérico: The life → Life")
    assert _one("adjective_order", lambda b: (b.verb(i, "have", "pres"), b.phrase("an old car"))) == (
        "I have a car old.",
        "orden del adjetivo: a car old → an old car",
    )


def test_several_errors_in_sentence_order(sampler):
    rng = random.Random(5)
    seen = 0
    for _ in range(3000):
        sentence = sampler.probe.functions["act"](rng)
        cats = [
            c for c in ("third_person", "a_an", "capitalisation", "preposition") if CATALOGUE[c].propose(sentence, rng)
        ]
        injected = inject(sentence, cats, rng) if len(cats) >= 2 else None
        if injected is None:
            continue
        seen += 1
        starts = [e.start for e in injected.edits]
        assert starts == sorted(starts)
        assert apply_edits(injected.source, injected.edits) == injected.corrected
        assert injected.gloss.count("; ") == len(injected.edits) - 1
    assert seen >= 10


def test_injection_never_returns_the_clean_sentence(sampler):
    rng = random.Random(9)
    for _ in range(1500):
        sentence = sampler.probe.functions["act"](rng)
        for cid in SYNTHETIC_CATEGORY_IDS:
            injected = inject(sentence, [cid], rng)
            if injected:
                assert injected.source != injected.corrected == sentence.text
