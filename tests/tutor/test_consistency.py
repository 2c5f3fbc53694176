"""The gloss must describe the edits the answer makes, or the tutor abstains."""

import csv
import math
from pathlib import Path

import pytest

from corrige.model import preset
from corrige.model.numpy_gpt import prepare
from corrige.model.weights import random_params
from corrige.tokenizer import BPETokenizer
from corrige.tutor.agent import Tutor, TutorConfig, TutorFront
from corrige.tutor.answer_text import split_gloss
from corrige.tutor.categories import OTHER
from corrige.tutor.consistency import gloss_disagreement, keep_explained
from corrige.tutor.edits import diff_edits, tokenize

TUTOR_DIR = Path(__file__).resolve().parents[2] / "corrige" / "tutor"


def check(source: str, corrected: str, gloss: str) -> str | None:
    return gloss_disagreement(source, corrected, gloss, diff_edits(source, corrected, gloss))


@pytest.mark.parametrize(
    "source, corrected, gloss, reason",
    [
        # the three answers a learner saw: each gloss contradicts its own edits
        (
            "She has been working at the hospital for five years.",
            "She has been worked at the hospital for five years.",
            "sin errores",
            "gloss_says_no_errors",
        ),
        (
            "My sister is married with an english man since three years.",
            "My sister has been married to an English man for three years.",
            "presente perfecto: is → has heed",
            "gloss_names_missing_edit",
        ),
        (
            "I like very much the football.",
            "I like the football very much.",
            "posición del adverbio: very much the football → the football very mu",
            "gloss_names_missing_edit",
        ),
        ("He go to work.", "He goes to work.", "tercera persona: go → go", "gloss_names_no_change"),
        ("He go to work.", "He goes to work.", "algo raro: go → goes", "gloss_unknown_label"),
        # the gloss explains one edit, the answer makes two
        ("He go to work by bus.", "He goes to work by car.", "tercera persona: go → goes", "edit_unexplained"),
        # an item names words the answer left as they were ("a very" is still there)
        (
            "He is a very good person and always helps to everybody.",
            "He is a very good person and always help you.",
            "ortografía: helps → help; artículo: a very → very",
            "gloss_names_missing_edit",
        ),
        # an item names part of an edit: "trainers → train" is no item's
        (
            "They didn't let us to wear trainers.",
            "They didn't let us wear train.",
            "forma verbal: to wear → wear",
            "edit_partly_explained",
        ),
        # an item cut short leaves a small word out: the edits stand, their gloss is written anew
        (
            "When Jorge had 17 years, he went out.",
            "When Jorge was 17 years old, he went out.",
            "edad con be: had 17 years → was 17",
            "gloss_cut_short",
        ),
    ],
)
def test_a_gloss_that_does_not_describe_the_edits_is_caught(source, corrected, gloss, reason):
    assert check(source, corrected, gloss) == reason


@pytest.mark.parametrize(
    "source, corrected, gloss",
    [
        ("Yesterday I goed to the store.", "Yesterday I went to the store.", "pasado irregular: goed → went"),
        ("I am teacher.", "I am a teacher.", "artículo con profesión: teacher → a teacher"),
        (
            "I like very much football.",
            "I like football very much.",
            "posición del adverbio: very much football → football very much",
        ),
        ("We are fine.", "We are fine.", "sin errores"),
        # a move named loosely: every word it puts in and takes out is named
        ("What your job is?", "What is your job?", "orden de la pregunta: your job → is your job"),
    ],
)
def test_a_gloss_that_describes_the_edits_passes(source, corrected, gloss):
    assert check(source, corrected, gloss) is None


def test_the_tutor_abstains_on_a_disagreeing_gloss():
    corpus = ["She has been working here. / sin errores", "She go home. / tercera persona: go → goes"] * 30
    cfg = preset("smoke")
    tok = BPETokenizer.train(corpus, vocab_size=cfg.vocab_size)
    cfg = cfg.with_(vocab_size=tok.vocab_size)
    tutor = Tutor(prepare(random_params(cfg), cfg), TutorFront(cfg, tok, TutorConfig(min_token_prob=0.5)))
    ids = tok.encode("She has been worked here. / sin errores") + [tok.special.eos]
    c = tutor.interpret("She has been working here.", ids, [math.log(0.99)] * len(ids))
    assert c.abstained and c.abstain_reason == "gloss_says_no_errors"
    assert c.corrected == c.sentence and c.edits == []


def _sources(name: str) -> list[str]:
    with open(TUTOR_DIR / name, encoding="utf-8", newline="") as f:
        return [row["source"] for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)]


@pytest.mark.slow
def test_over_the_whole_dev_set_every_shown_edit_is_explained_by_its_gloss():
    """The bundled tutor on every sentence of both dev sets: what a learner sees is consistent."""
    tutor = Tutor.load()
    sentences = [s for s in _sources("learner_dev.tsv") + _sources("realistic.tsv") if tutor.fits(s)]
    corrections = tutor.correct_many(sentences)
    shown = [c for c in corrections if c.changed]
    assert shown  # the check is only meaningful if the tutor still corrects something
    for c in shown:
        assert not c.abstained and c.edits
        assert all(e.category != OTHER for e in c.edits), (c.sentence, c.corrected, c.gloss)
        source_words, corrected_words = [t.text for t in tokenize(c.sentence)], [t.text for t in tokenize(c.corrected)]
        for item in split_gloss(c.gloss):
            assert " ".join(t.text for t in tokenize(item.original)) in " ".join(source_words), (c.sentence, c.gloss)
            assert " ".join(t.text for t in tokenize(item.replacement)) in " ".join(corrected_words), (
                c.corrected,
                c.gloss,
            )
    unchanged = [c for c in corrections if not c.changed]
    assert all(c.edits == [] for c in unchanged)


def test_repair_keeps_only_the_explained_edits_with_their_own_words():
    source, corrected = "Yesterday my sister buyed a dress red.", "Yesterday my sister bought a red dress."
    gloss = "pasado irregular: buyed → boughtt"  # garbled, and the word order edit is not explained
    edits = diff_edits(source, corrected, gloss)
    assert check(source, corrected, gloss) == "gloss_names_missing_edit"
    repaired, new_gloss, kept = keep_explained(source, edits, gloss)
    assert repaired == "Yesterday my sister bought a dress red."
    assert new_gloss == "pasado irregular: buyed → bought"
    assert [(e.original, e.replacement) for e in kept] == [("buyed", "bought")]
    assert check(source, repaired, new_gloss) is None


@pytest.mark.parametrize(
    ("original", "replacement", "category", "label"),
    [
        ("most nice", "nicest", "comparative", "superlativo"),
        ("better", "best", "comparative", "superlativo"),
        ("more big", "bigger", "comparative", "comparativo"),
        ("honester", "more honest", "comparative", "comparativo"),  # "honest" is no superlative
        ("much", "many", "noun_number", "cuantificador"),
        ("less", "fewer", "noun_number", "cuantificador"),
        ("child", "children", "noun_number", "número del sustantivo"),
        ("bad", "badly", "word_confusion", "adverbio en -ly"),
        ("very easy", "very easily", "word_confusion", "adverbio en -ly"),
        ("then", "than", "word_confusion", "palabra confundida"),
        ("the", "your", "determiner", "determinante"),  # a possessive for the article
        ("of teenagers", "teenagers", "determiner", "determinante"),
        ("the Spain", "Spain", "determiner", "artículo"),
        ("a", "the", "determiner", "artículo"),
    ],
)
def test_a_gloss_names_what_the_edit_is_and_reads_back_as_its_category(original, replacement, category, label):
    from corrige.tutor.categories import id_of
    from corrige.tutor.consistency import explain
    from corrige.tutor.edits import Edit

    gloss = explain([Edit(0, len(original), original, replacement, category)])
    assert gloss.startswith(f"{label}: ")
    assert [id_of(item.label) for item in split_gloss(gloss)] == [category]
