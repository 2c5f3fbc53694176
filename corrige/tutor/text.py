"""Whole texts: split into sentences, correct them together, edits as offsets into the text.

A learner pastes an email or an essay, not one sentence. `correct_text` (and the server's text
path, which sends the same pieces through the batching engine) works in three steps:

1. `split_sentences`: lines first (a blank line, a list item or a line that does not continue
   in lower case ends a sentence), then spaCy's tokenizer and its rule-based `sentencizer`
   inside each block, with a few repairs (see `corrige.tutor.sentences`): the tokenizer keeps "Mr.",
   "e.g.", "19.30" and "3.50" whole, an ellipsis before a capital ends a sentence, a "?" or "!"
   inside quotes or brackets followed by a lower-case word does not, an abbreviation followed by
   a sentence opener ("etc. My ...", "in the U.S. It ...") does, and a list marker stays with
   its item.
2. `plan_text`: each sentence becomes the pieces the model reads (`Piece`). A list marker and a
   trailing comma or colon (a salutation, "Dear Ana,") are left out of what the model sees; a
   sentence too long for the model's window is split at a clause boundary (";", ", and", a
   comma, ...); a piece that still does not fit is passed through, flagged `too_long`. A
   sentence with no letters, in another language or mixing scripts is not sent (`skipped`), nor
   is a signature: the text's last line when it is only a name ("Lucía", "Ana García").
3. `assemble`: the tutor's corrections of the pieces become `TextEdit`s whose `offset` and
   `length` point into the text exactly as typed (line breaks, double spaces and quotes kept):
   ``text[offset:offset + length] == original``, and applying every edit gives `corrected`.

The text as a whole is refused (`TextRefused`, with a stable code) when it is empty, longer
than `MAX_TEXT_CHARS`, has no words, or is not English (the language named when its stop words
tell it, or the script).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from corrige.tutor.answer_text import split_gloss
from corrige.tutor.edits import Edit
from corrige.tutor.language import guess_language, not_english_message, scripts
from corrige.tutor.sentences import GREETING, LIST_MARKER, Span, has_letters, split_sentences

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

    @property
    def more_errors(self) -> bool:
        """Corrected, and the tutor says more errors may remain (`Correction.more_errors`)."""
        return bool(self.edits) and any(c.more_errors for c in self.corrections)


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


# ---------------------------------------------------------------- the text as a whole


def check_text_language(text: str, field: str = "text") -> None:
    """Refuse (`TextRefused`) a text that is empty, too long, has no words or is not English
    (`field`: the request field the messages name)."""
    if not text.strip():
        raise TextRefused("empty_text", f"{field}: the text is empty; send English sentences")
    if len(text) > MAX_TEXT_CHARS:
        raise TextRefused(
            "text_too_long", f"{field}: the text has {len(text)} characters; at most {MAX_TEXT_CHARS} are accepted"
        )
    language = guess_language(text)
    if language is None:
        raise TextRefused("no_words", f"{field}: the text has no words (only punctuation, digits or symbols)")
    if language != "en":
        raise TextRefused("not_english", not_english_message(field, language), language)


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
    skip: str | None = None  # "no_words", "not_english", "mixed_scripts", "signature", "greeting": not sent
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
    marker = LIST_MARKER.match(text, start, end)
    if marker and has_letters(text[marker.end() : end]):
        start = marker.end()
    trailing = _TRAILING.search(text, start, end)
    if trailing and has_letters(text[start : trailing.start()]):
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
            m for m in found if has_letters(text[span.start : m.start()]) and has_letters(text[m.end() : span.end])
        ]
        if found:
            m = min(found, key=lambda m: abs((m.start() + m.end()) / 2 - middle))
            return _cut(text, Span(span.start, m.start()), fits) + _cut(text, Span(m.end(), span.end), fits)
    return [Piece(span.start, span.end, source, False)]


def plan_text(text: str, fits: Callable[[str], bool], field: str = "text") -> TextPlan:
    """Sentences and the pieces the model reads (`fits`: the tutor's window check, `Tutor.fits`;
    `field`: the request field a refusal names)."""
    check_text_language(text, field)
    planned = []
    for span in split_sentences(text):
        source = text[span.start : span.end]
        if not has_letters(source):
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
        if _is_signature(text, span):
            planned.append(PlannedSentence(span, [], "signature"))
            continue
        if GREETING.fullmatch(source.strip()):
            planned.append(PlannedSentence(span, [], "greeting"))
            continue
        planned.append(PlannedSentence(span, _cut(text, _model_span(text, span), fits)))
    return TextPlan(text, planned)


# skip reasons that are no loss: a name under a letter, a greeting or sign-off (never listed as unchecked)
NOTHING_TO_CHECK = frozenset({"signature", "greeting"})


def _is_signature(text: str, span: Span) -> bool:
    """The text's last line, after others, when it is one to three capitalised words and nothing
    else: a name under a letter ("Lucía", "Ana García"), nothing for the tutor to correct."""
    words = text[span.start : span.end].split()
    own_line = text[: span.start].rstrip(" \t").endswith("\n") and not text[span.end :].strip()
    capitalised = all(w[0].isupper() and w.replace("-", "").replace("'", "").isalpha() for w in words)
    return own_line and 1 <= len(words) <= 3 and capitalised and words != ["I"]


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
