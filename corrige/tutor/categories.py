"""The learner-error categories: ids, Spanish labels and CEFR levels.

Kept free of imports so that the target format, the edit alignment and the error generators can
all share one source of truth without import cycles. The label is what the tutor writes in the
gloss, so labels must be unique and must not contain ":", ";" or " / " (the gloss separators).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Category:
    """One kind of learner error, as the tutor names it."""

    id: str
    label: str
    level: str
    description: str


CATEGORIES: tuple[Category, ...] = (
    Category("past_irregular", "pasado irregular", "A2", "goed, buyed, teached"),
    Category("third_person", "tercera persona", "A1", "he go, she don't, it have"),
    Category("a_an", "artículo a/an", "A1", "a apple, an car"),
    Category("profession_article", "artículo con profesión", "A1", "I am teacher"),
    Category("generic_the", "artículo genérico", "A2", "The life is hard, play the football"),
    Category("age_have", "edad con be", "A1", "I have 20 years"),
    Category("adjective_plural", "adjetivo sin plural", "A1", "reds cars"),
    Category("adjective_order", "orden del adjetivo", "A1", "a car red"),
    Category("missing_subject", "falta el sujeto", "A1", "Is raining"),
    Category("double_negation", "doble negación", "A2", "I don't know nothing"),
    Category("comparative", "comparativo", "A2", "more big, more better, the most big"),
    Category("preposition", "preposición", "A2", "married with, depend of, in Monday"),
    Category("verb_pattern", "patrón verbal", "B1", "I am agree, explain me, enjoy to read"),
    Category("collocation", "colocación", "B1", "make a photo, do a mistake"),
    Category("uncountable", "incontable", "A2", "advices, informations"),
    Category("there_is_plural", "there is/are", "A1", "There is two cats"),
    Category("purpose_for", "finalidad", "A2", "for to buy, for buy"),
    Category("present_perfect", "presente perfecto", "B1", "I live here since 2015"),
    Category("past_marker", "tiempo pasado", "A2", "Yesterday I go"),
    Category("question_no_do", "falta el auxiliar", "A1", "Where you live?"),
    Category("question_order", "orden de la pregunta", "A2", "What means this?, Where she is?"),
    Category("possessive_his_her", "posesivo his/her", "A1", "Carlos loves her mother"),
    Category("capitalisation", "mayúscula", "A1", "on monday, I speak english"),
    Category("people_plural", "people es plural", "A2", "People is friendly"),
    Category("adverb_position", "posición del adverbio", "A2", "I like very much football"),
    # Broader categories for errors in real learners' writing (the injector in corrige.corpus
    # makes them on real sentences; the template grammar does not).
    Category("spelling", "ortografía", "A1", "beacuse, realy, diferent, wich, alot"),
    Category("word_confusion", "palabra confundida", "A2", "there/their, to/too, then/than, its/it's"),
    Category("determiner", "artículo", "A1", "in the Spain, I have car, a friends"),
    Category("verb_tense", "tiempo verbal", "B1", "I have seen him yesterday, If it will rain"),
    Category("verb_form", "forma verbal", "A2", "I can to go, I have went, she is study"),
    Category("agreement", "concordancia", "A1", "they was, my friends is, the people who lives"),
    Category("noun_number", "número del sustantivo", "A1", "two child, one of my friend, many thing"),
    Category("pronoun", "pronombre", "A2", "the man which, the book who, I feel myself tired"),
    Category("word_order", "orden de las palabras", "A2", "Always I go, I don't know what is it, enough big"),
    Category("calque", "calco del español", "B1", "assist to a class, make a party, discuss about"),
    Category("punctuation", "puntuación", "A2", "However I think, In my opinion it is"),
)

SYNTHETIC_CATEGORY_IDS: tuple[str, ...] = tuple(c.id for c in CATEGORIES[:25])
"""The categories the synthetic generator (``corrige.synth.error_catalogue``, ``corrige.synth.data``)
makes: the first 25, which the bundled models were trained on. The others come only from real sentences."""

CATEGORY_IDS: tuple[str, ...] = tuple(c.id for c in CATEGORIES)
RESCORING_CATEGORY_IDS: tuple[str, ...] = ("punctuation",)
"""Categories only the tutor's rescoring stage names (``corrige.tutor.rescoring``): no model was
trained on them, so the corpus injector does not make them."""
INJECTED_CATEGORY_IDS: tuple[str, ...] = tuple(c for c in CATEGORY_IDS if c not in RESCORING_CATEGORY_IDS)
BY_ID: dict[str, Category] = {c.id: c for c in CATEGORIES}
BY_LABEL: dict[str, Category] = {c.label: c for c in CATEGORIES}
LABELS: dict[str, str] = {c.id: c.label for c in CATEGORIES}

OTHER = "other"
"""Category given to an edit that no gloss item explains."""


def label_of(category_id: str) -> str:
    """Spanish label for a category id (KeyError for unknown ids, so typos fail loudly)."""
    return BY_ID[category_id].label


# labels a gloss item may carry besides its category's own, where the edit says more exactly what it
# is: "the most nice → the nicest" is a superlative, taught with the comparative; "much → many" a
# quantity word, taught with the noun's number
LABEL_VARIANTS: dict[str, str] = {
    "superlativo": "comparative",
    "cuantificador": "noun_number",
    "adverbio en -ly": "word_confusion",  # slept bad → badly: the adjective for its adverb
    "determinante": "determiner",  # the → your, most of teenagers → most teenagers: no article involved
}


def id_of(label: str) -> str:
    """Category id for a label as written in a gloss; unknown labels map to ``OTHER``."""
    label = label.strip()
    category = BY_LABEL.get(label)
    return category.id if category else LABEL_VARIANTS.get(label, OTHER)
