"""Whole texts: split into sentences, correct them together, edits as offsets into the text.

A learner pastes an email or an essay, not one sentence. `correct_text` (and the server's text
path, which sends the same pieces through the batching engine) works in three steps:

1. `split_sentences`: lines first (a blank line, a list item or a line that does not continue
   in lower case ends a sentence), then spaCy's tokenizer and its rule-based `sentencizer`
   inside each block, with a few repairs (see `_boundaries`): the tokenizer keeps "Mr.",
   "e.g.", "19.30" and "3.50" whole, an ellipsis before a capital ends a sentence, a "?" or "!"
   inside quotes or brackets followed by a lower-case word does not, an abbreviation followed by
   a sentence opener ("etc. My ...", "in the U.S. It ...") does, and a list marker stays with
   its item.
2. `plan_text`: each sentence becomes the pieces the model reads (`Piece`). A list marker and a
   trailing comma or colon (a salutation, "Dear Ana,") are left out of what the model sees; a
   sentence too long for the model's window is split at a clause boundary (";", ", and", a
   comma, ...); a piece that still does not fit is passed through, flagged `too_long`. A
   sentence with no letters, in another language or mixing scripts is not sent (`skipped`).
3. `assemble`: the tutor's corrections of the pieces become `TextEdit`s whose `offset` and
   `length` point into the text exactly as typed (line breaks, double spaces and quotes kept):
   ``text[offset:offset + length] == original``, and applying every edit gives `corrected`.

The text as a whole is refused (`TextRefused`, with a stable code) when it is empty, longer
than `MAX_TEXT_CHARS`, has no words, or is not English (the language named when its stop words
tell it, or the script).
"""

from __future__ import annotations

import functools
import logging
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from corrige.tutor.answer_text import split_gloss
from corrige.tutor.edits import Edit

if TYPE_CHECKING:
    from corrige.tutor.agent import Correction, Tutor

log = logging.getLogger(__name__)

MAX_TEXT_CHARS = 5000
Status = Literal["corrected", "unchanged", "abstained", "too_long", "skipped"]
STATUSES: tuple[str, ...] = ("corrected", "unchanged", "abstained", "too_long", "skipped")


# ---------------------------------------------------------------- result types


@dataclass(frozen=True)
class TextEdit:
    """Replace ``text[offset:offset + length]`` (== ``original``) by ``replacement``."""

    offset: int
    length: int
    original: str
    replacement: str
    category: str
    gloss: str  # the gloss item that explains it, e.g. "pasado irregular: goed → went"
    sentence: int  # index of its sentence in `TextCorrection.sentences`

    @property
    def end(self) -> int:
        return self.offset + self.length


@dataclass(frozen=True)
class SentenceResult:
    """One sentence of the text: where it is, what the tutor made of it."""

    index: int
    offset: int
    length: int
    text: str  # text[offset:offset + length], as typed
    corrected: str  # `text` with this sentence's edits applied
    status: Status
    edits: list[TextEdit] = field(default_factory=list)
    gloss: str = ""  # the Spanish glosses of its pieces, joined with "; "
    reason: str | None = None  # why skipped, abstained or too long (e.g. "not_english", "low_confidence")
    language: str | None = None  # skipped as not English: the language ("es") or script ("Cyrillic") when known
    parts: int = 1  # pieces the model read (more than 1: split at clause boundaries)
    corrections: list[Correction] = field(default_factory=list, repr=False)  # the tutor's, one per piece read

    @property
    def changed(self) -> bool:
        return bool(self.edits)


@dataclass(frozen=True)
class TextCorrection:
    """A whole text corrected: its sentences, and every edit with offsets into `text`."""

    text: str
    corrected: str
    sentences: list[SentenceResult]

    @property
    def edits(self) -> list[TextEdit]:
        return [e for s in self.sentences for e in s.edits]

    @property
    def changed(self) -> bool:
        return any(s.edits for s in self.sentences)


class TextRefused(ValueError):
    """A text the tutor does not take as a whole: `code` is stable (error_codes.py)."""

    def __init__(self, code: str, message: str, language: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.language = language


# ---------------------------------------------------------------- sentence splitting


@dataclass(frozen=True)
class Span:
    start: int
    end: int


_LIST_MARKER = re.compile(r"(?:[-*•·–—]|\(?\d{1,3}[.)]|\(?[a-zA-Z][)]|[ivxIVX]{1,4}[.)])[ \t]+(?=\S)")
_ENDS_SENTENCE = re.compile(r"[.!?…:;]['\"”’)\]]*\s*$")
# words that open a sentence after an abbreviation ("... in the U.S. It is ...")
_OPENERS = frozenset(
    "I It It's We They He She You This That These Those There The My Our Their His Her Your A An "
    "But And So Then Now Also However Yesterday Today Tomorrow Last Next In On At After Before When "
    "If Please Thanks Thank Can Could Would Will Do Does Did Is Are Was Were What Where Who Why How".split()
)
_TITLES = frozenset({"mr.", "mrs.", "ms.", "dr.", "prof.", "sr.", "jr.", "st.", "mt.", "no.", "vs.", "e.g.", "i.e."})
_QUOTES = frozenset("\"'“‘«")
_CLOSERS = frozenset("\"'”’)]»")
# abbreviations the tokenizer splits from their full stop ("approx ."): a lower-case word after them goes on
_LOWER_ABBREVIATIONS = frozenset("approx incl esp dept min max fig vol ca cf vs etc".split())
_SPEAKERS = frozenset("I he she we they you".split())
_SPEECH_VERBS = frozenset("said asked shouted replied answered told thought wondered cried whispered".split())


@functools.cache
def _sentencizer() -> Any:
    """spaCy's English tokenizer (its abbreviation and number rules) and rule-based sentencizer."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


def _blocks(text: str) -> list[Span]:
    """Line blocks: a line break ends a block unless the next line goes on in lower case after a
    line that does not end a sentence (a hard-wrapped sentence). Blank lines and list items
    always end one."""
    lines = [(m.start(), m.end()) for m in re.finditer(r"[^\n]*", text) if m.end() > m.start() or m.start() == 0]
    blocks: list[Span] = []
    current: list[int] | None = None
    for start, end in lines:
        line = text[start:end]
        stripped = line.strip()
        if not stripped:
            current = None
            continue
        continues = (
            current is not None
            and stripped[0].islower()
            and not _LIST_MARKER.match(stripped)
            and not _ENDS_SENTENCE.search(text[current[0] : current[1]])
            and not _LIST_MARKER.match(text[current[0] : current[1]].strip())
        )
        if continues and current is not None:
            current[1] = end
            blocks[-1] = Span(current[0], end)
        else:
            current = [start, end]
            blocks.append(Span(start, end))
    return blocks


def _is_ellipsis(token: str) -> bool:
    return token == "…" or (len(token) >= 2 and set(token) == {"."})


def _boundaries(doc: Any) -> list[int]:
    """Token indices where a sentence starts: the sentencizer's, repaired (module docstring)."""
    tokens = list(doc)
    starts = {s.start for s in doc.sents}
    for i in range(1, len(tokens)):
        prev, tok = tokens[i - 1].text, tokens[i].text
        if _is_ellipsis(prev) and tok[:1].isupper() and tok != "I":
            starts.add(i)
        elif (
            len(prev) > 2
            and prev.endswith(".")
            and prev[0].isalpha()
            and prev.lower() not in _TITLES
            and tok in _OPENERS
        ):
            starts.add(i)  # "U.S. It", "p.m. We", "etc. My"
        elif prev.lower() == "etc." and tok[:1].isupper():
            starts.add(i)
    for i in sorted(starts):
        if i == 0 or i >= len(tokens):
            continue
        # '... park. "Nice!"': an opening quote (space before it, none after) starts the next sentence
        if i >= 2 and tokens[i - 1].text in _QUOTES and tokens[i - 2].whitespace_ and not tokens[i - 1].whitespace_:
            starts.discard(i)
            starts.add(i - 1)
            continue
        before, word = tokens[i - 1].text, tokens[i].text
        after = tokens[i + 1].text if i + 1 < len(tokens) else ""
        quoted = before in _CLOSERS and i >= 2 and tokens[i - 2].text in {"?", "!"}
        # "He asked "Why?" and left", ""Where is it?" I asked": a quoted question goes on
        if quoted and (word[:1].islower() or (word in _SPEAKERS and after in _SPEECH_VERBS)):
            starts.discard(i)
        # "in approx. three months": the tokenizer split the abbreviation's full stop
        elif before == "." and i >= 2 and tokens[i - 2].text.lower() in _LOWER_ABBREVIATIONS and word[:1].islower():
            starts.discard(i)
    return sorted(starts | {0})


def split_sentences(text: str) -> list[Span]:
    """The sentences of `text` as character spans (whitespace around them left out)."""
    spans: list[Span] = []
    nlp = _sentencizer()
    for block in _blocks(text):
        chunk = text[block.start : block.end]
        doc = nlp(chunk)
        starts = _boundaries(doc)
        bounds = [doc[i].idx for i in starts] + [len(chunk)]
        pieces = [Span(block.start + a, block.start + b) for a, b in zip(bounds, bounds[1:], strict=False)]
        merged: list[Span] = []
        for piece in pieces:
            # a piece without letters ("1.", "-") goes with the sentence after it in the block
            if merged and not _has_letters(text[merged[-1].start : merged[-1].end]):
                merged[-1] = Span(merged[-1].start, piece.end)
            else:
                merged.append(piece)
        spans += [s for s in (_trim(text, p) for p in merged) if s.end > s.start]
    return spans


def _trim(text: str, span: Span) -> Span:
    start, end = span.start, span.end
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return Span(start, end)


def _has_letters(text: str) -> bool:
    return any(ch.isalpha() for ch in text)


# ---------------------------------------------------------------- language and script

_STOPWORDS = {
    "en": "the and is are was were of to in that it you he she we they this with for not have has be my your "
    "what there their would can will do does did at on from but i am an a",
    "es": "el la los las del que y en es por con para una unos unas pero como más muy está estoy soy son "
    "tengo tiene hay yo tú usted nosotros ellos ella su sus mi mis este esta esto eso porque cuando donde "
    "qué cómo también gracias hola ya lo le les se al sí entre sobre todo mucho",
    "fr": "le la les des une est et je tu il elle nous vous ils sont avec pour dans pas que qui ce cette "
    "mais très aussi bonjour merci suis ai au aux du",
    "pt": "o os as um uma é são não com para por mas muito também eu você ele ela nós eles obrigado olá "
    "está estou tenho do da dos das em",
    "it": "il lo gli le una è sono non con per ma molto anche io tu lui lei noi loro grazie ciao sono ho "
    "della delle degli che",
    "de": "der die das und ist sind nicht mit für aber sehr auch ich du er sie wir ihr danke hallo bin "
    "habe ein eine einen einer im in dem den zu von",
}
_STOPWORD_SETS = {lang: frozenset(words.split()) for lang, words in _STOPWORDS.items()}
LANGUAGE_NAMES = {
    "en": "English",
    "es": "Spanish",
    "fr": "French",
    "pt": "Portuguese",
    "it": "Italian",
    "de": "German",
}
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")


def script_of(ch: str) -> str:
    """The script of a letter from its Unicode name ("LATIN", "CYRILLIC", "CJK", ...)."""
    name = unicodedata.name(ch, "")
    first = name.split(" ", 1)[0]
    return "CJK" if first in {"CJK", "HIRAGANA", "KATAKANA", "HANGUL"} else first or "UNKNOWN"


def scripts(text: str) -> dict[str, int]:
    """Letters per script."""
    counts: dict[str, int] = {}
    for ch in text:
        if ch.isalpha():
            script = script_of(ch)
            counts[script] = counts.get(script, 0) + 1
    return counts


def guess_language(text: str) -> str | None:
    """ "en", another language code (by its stop words), a script's name for letters that are
    mostly not Latin ("Cyrillic"), or None when there are no words to tell from."""
    counts = scripts(text)
    letters = sum(counts.values())
    if not letters:
        return None
    latin = counts.get("LATIN", 0)
    if latin < letters / 2:
        top = max(counts, key=lambda s: counts[s])
        return top.title() if top != "CJK" else "CJK"
    if "¿" in text or "¡" in text:
        return "es"
    words = [w.lower() for w in _WORD.findall(text)]
    hits = {lang: sum(w in stop for w in words) for lang, stop in _STOPWORD_SETS.items()}
    best = max(hits, key=lambda lang: hits[lang])
    if best != "en" and hits[best] > hits["en"] and hits[best] >= max(2, len(words) // 5):
        return best
    if best != "en" and len(words) <= 3 and hits[best] > hits["en"]:
        return best  # "Muchas gracias por todo" is too short for the share
    return "en"


def language_name(code: str) -> str:
    return LANGUAGE_NAMES.get(code, f"{code} script")


def check_text_language(text: str) -> None:
    """Refuse (`TextRefused`) a text that is empty, too long, has no words or is not English."""
    if not text.strip():
        raise TextRefused("empty_text", "text: the text is empty; send English sentences")
    if len(text) > MAX_TEXT_CHARS:
        raise TextRefused(
            "text_too_long", f"text: the text has {len(text)} characters; at most {MAX_TEXT_CHARS} are accepted"
        )
    language = guess_language(text)
    if language is None:
        raise TextRefused("no_words", "text: the text has no words (only punctuation, digits or symbols)")
    if language != "en":
        raise TextRefused(
            "not_english",
            f"text: the text looks {language_name(language)} ({language}); corrige corrects English written "
            "by Spanish speakers",
            language,
        )


# ---------------------------------------------------------------- planning


@dataclass(frozen=True)
class Piece:
    """What the model reads of a sentence: ``text[start:end]``; `fits` the model's window."""

    start: int
    end: int
    source: str  # text[start:end]
    fits: bool


@dataclass(frozen=True)
class PlannedSentence:
    span: Span
    pieces: list[Piece]
    skip: str | None = None  # "no_words", "not_english", "mixed_scripts": not sent
    language: str | None = None


@dataclass(frozen=True)
class TextPlan:
    text: str
    sentences: list[PlannedSentence]

    @property
    def to_correct(self) -> list[tuple[int, int, Piece]]:
        """(sentence index, piece index, piece) of every piece the model reads."""
        return [(i, k, p) for i, s in enumerate(self.sentences) for k, p in enumerate(s.pieces) if p.fits]


# clause boundaries, best first: where a sentence too long for the window is cut (the boundary
# itself, conjunction included, stays out of both pieces)
_CLAUSE_BOUNDARIES = (
    re.compile(r"\s*;\s+"),
    re.compile(r",?\s+(?:and|but|so|or|because|although|while|which|when)\s+", re.IGNORECASE),
    re.compile(r"\s*[:—–]\s+"),
    re.compile(r",\s+"),
)
_TRAILING = re.compile(r"[\s,;:]+$")


def _model_span(text: str, span: Span) -> Span:
    """The part of a sentence the model reads: no list marker before it, no comma or colon after it."""
    start, end = span.start, span.end
    marker = _LIST_MARKER.match(text, start, end)
    if marker and _has_letters(text[marker.end() : end]):
        start = marker.end()
    trailing = _TRAILING.search(text, start, end)
    if trailing and _has_letters(text[start : trailing.start()]):
        end = trailing.start()
    return Span(start, end)


def _cut(text: str, span: Span, fits: Callable[[str], bool]) -> list[Piece]:
    """The span as pieces that fit, cut at the clause boundary nearest its middle (recursively);
    a piece with no boundary left that still does not fit is returned with `fits=False`."""
    source = text[span.start : span.end]
    if fits(source):
        return [Piece(span.start, span.end, source, True)]
    middle = (span.start + span.end) / 2
    for pattern in _CLAUSE_BOUNDARIES:
        found = [
            m for m in pattern.finditer(text, span.start, span.end) if m.start() > span.start and m.end() < span.end
        ]
        found = [
            m for m in found if _has_letters(text[span.start : m.start()]) and _has_letters(text[m.end() : span.end])
        ]
        if found:
            m = min(found, key=lambda m: abs((m.start() + m.end()) / 2 - middle))
            return _cut(text, Span(span.start, m.start()), fits) + _cut(text, Span(m.end(), span.end), fits)
    return [Piece(span.start, span.end, source, False)]


def plan_text(text: str, fits: Callable[[str], bool]) -> TextPlan:
    """Sentences and the pieces the model reads (`fits`: the tutor's window check, `Tutor.fits`)."""
    check_text_language(text)
    planned = []
    for span in split_sentences(text):
        source = text[span.start : span.end]
        if not _has_letters(source):
            planned.append(PlannedSentence(span, [], "no_words"))
            continue
        counts = scripts(source)
        if counts.get("LATIN", 0) < sum(counts.values()):
            language = guess_language(source)
            skip = "mixed_scripts" if counts.get("LATIN", 0) else "not_english"
            planned.append(PlannedSentence(span, [], skip, None if language == "en" else language))
            continue
        language = guess_language(source)
        if language not in (None, "en"):
            planned.append(PlannedSentence(span, [], "not_english", language))
            continue
        planned.append(PlannedSentence(span, _cut(text, _model_span(text, span), fits)))
    return TextPlan(text, planned)


# ---------------------------------------------------------------- offsets and results


def collapse_map(source: str) -> tuple[str, list[int]]:
    """`normalize_sentence`'s whitespace collapse, with each character's offset in `source`
    (one entry more: the end)."""
    chars: list[str] = []
    where: list[int] = []
    pending_space = -1
    for i, ch in enumerate(source):
        if ch.isspace():
            if chars and pending_space < 0:
                pending_space = i
            continue
        if pending_space >= 0:
            chars.append(" ")
            where.append(pending_space)
            pending_space = -1
        chars.append(ch)
        where.append(i)
    where.append(where[-1] + 1 if where else 0)
    return "".join(chars), where


def _gloss_items(gloss: str, edits: Sequence[Edit]) -> list[str]:
    """The gloss item that explains each edit: same category, words in common first."""
    items = split_gloss(gloss)
    used: set[int] = set()
    found = []
    for edit in edits:
        words = set(edit.original.lower().split())
        ranked = sorted(
            (k for k, item in enumerate(items) if item.category == edit.category),
            key=lambda k: (k in used, not words & set(items[k].original.lower().split())),
        )
        if ranked:
            used.add(ranked[0])
            found.append(str(items[ranked[0]]))
        else:
            found.append("")
    return found


def _piece_edits(text: str, piece: Piece, correction: Correction, index: int, first: bool) -> list[TextEdit]:
    collapsed, where = collapse_map(piece.source)
    if correction.sentence != collapsed:  # the tutor reads what normalize_sentence makes of the piece
        log.warning("piece %r came back as %r; its edits are dropped", collapsed, correction.sentence)
        return []
    edits = []
    for edit, gloss in zip(correction.edits, _gloss_items(correction.gloss, correction.edits), strict=True):
        if not first and edit.start == 0 and edit.original.lower() == edit.replacement.lower():
            continue  # a piece cut out of a sentence starts in lower case; that is no error
        start = piece.start + where[edit.start]
        end = piece.start + where[edit.end - 1] + 1 if edit.end > edit.start else start
        edits.append(TextEdit(start, end - start, text[start:end], edit.replacement, edit.category, gloss, index))
    return edits


def apply_text_edits(text: str, edits: Sequence[TextEdit]) -> str:
    out = text
    for e in sorted(edits, key=lambda e: e.offset, reverse=True):
        out = out[: e.offset] + e.replacement + out[e.end :]
    return out


def assemble(plan: TextPlan, corrections: dict[tuple[int, int], Correction]) -> list[SentenceResult]:
    """The plan's sentences with the tutor's corrections of their pieces (keyed by
    (sentence index, piece index)), in the text's order."""
    return [sentence_result(plan, i, corrections) for i in range(len(plan.sentences))]


def sentence_result(plan: TextPlan, index: int, corrections: dict[tuple[int, int], Correction]) -> SentenceResult:
    """One sentence's result, once the corrections of its pieces are in."""
    text, planned = plan.text, plan.sentences[index]
    span = planned.span
    source = text[span.start : span.end]
    if planned.skip is not None:
        return SentenceResult(
            index,
            span.start,
            span.end - span.start,
            source,
            source,
            "skipped",
            [],
            "",
            planned.skip,
            planned.language,
            0,
        )
    edits: list[TextEdit] = []
    glosses: list[str] = []
    done: list[Correction] = []
    abstained: list[str] = []
    too_long = False
    for k, piece in enumerate(planned.pieces):
        if not piece.fits:
            too_long = True
            continue
        correction = corrections[(index, k)]
        done.append(correction)
        if correction.abstained:
            abstained.append(correction.abstain_reason or "abstained")
            continue
        piece_edits = _piece_edits(text, piece, correction, index, first=k == 0)
        edits += piece_edits
        if piece_edits:
            glosses.append(correction.gloss)
    status: Status
    reason = None
    if too_long:
        status, reason = "too_long", "too_long"
    elif edits:
        status = "corrected"
    elif abstained:
        status, reason = "abstained", abstained[0]
    else:
        status = "unchanged"
    local = [
        TextEdit(e.offset - span.start, e.length, e.original, e.replacement, e.category, e.gloss, index) for e in edits
    ]
    gloss = "; ".join(glosses) if glosses else (done[0].gloss if len(done) == 1 else "")
    return SentenceResult(
        index,
        span.start,
        span.end - span.start,
        source,
        apply_text_edits(source, local),
        status,
        edits,
        gloss,
        reason,
        None,
        sum(p.fits for p in planned.pieces),
        done,
    )


def correct_text(tutor: Tutor, text: str) -> TextCorrection:
    """Split `text`, correct every piece in one batched call (`Tutor.correct_many`), and give the
    edits as offsets into `text`. Raises `TextRefused` for a text the tutor does not take."""
    (result,) = correct_texts(tutor, [text])
    if isinstance(result, TextRefused):
        raise result
    return result


def correct_texts(tutor: Tutor, texts: Sequence[str]) -> list[TextCorrection | TextRefused]:
    """`correct_text` for several texts, every piece of all of them in one `correct_many` call; a
    text the tutor does not take gives its `TextRefused` in its place."""
    plans: list[TextPlan | TextRefused] = []
    for text in texts:
        try:
            plans.append(plan_text(text, tutor.fits))
        except TextRefused as exc:
            plans.append(exc)
    todo = [(n, i, k, piece.source) for n, plan in enumerate(plans) if isinstance(plan, TextPlan)
            for i, k, piece in plan.to_correct]  # fmt: skip
    results = tutor.correct_many([t[3] for t in todo]) if todo else []
    corrections: dict[int, dict[tuple[int, int], Correction]] = {}
    for (n, i, k, _), c in zip(todo, results, strict=True):
        corrections.setdefault(n, {})[(i, k)] = c
    return [
        plan if isinstance(plan, TextRefused) else finish(plan, corrections.get(n, {})) for n, plan in enumerate(plans)
    ]


def finish(plan: TextPlan, corrections: dict[tuple[int, int], Correction]) -> TextCorrection:
    sentences = assemble(plan, corrections)
    edits = [e for s in sentences for e in s.edits]
    return TextCorrection(plan.text, apply_text_edits(plan.text, edits), sentences)
