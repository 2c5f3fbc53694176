"""A text's sentences (`split_sentences`): lines first (a blank line, a list item or a line that
does not continue in lower case ends a sentence), then spaCy's tokenizer and its rule-based
`sentencizer` inside each block, with the repairs `_boundaries` describes."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Span:
    start: int
    end: int


LIST_MARKER = re.compile(r"(?:[-*•·–—]|\(?\d{1,3}[.)]|\(?[a-zA-Z][)]|[ivxIVX]{1,4}[.)])[ \t]+(?=\S)")
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


# a letter's greeting or sign-off standing alone ("Hi!", "Dear Mr Brown,", "Best wishes,"): formulas,
# nothing for the tutor to correct nor for the learner to check again; a line of its own even when
# the next starts in lower case ("Hello,⏎my name is Tomás")
GREETING = re.compile(
    r"(?:(?i:hi|hello|hey|dear|good (?:morning|afternoon|evening))"
    r"(?:\s+(?:(?!I\b)[A-Z][\w.'’-]*|(?i:or|and|my|everybody|everyone|all|guys|there|friends?|teachers?|team|family)))"
    r"{0,4}"
    r"|(?i:(?:best|kind|warm|warmest)\s+(?:wishes|regards)|regards|best|yours(?:\s+(?:sincerely|faithfully|truly))?"
    r"|(?:lots of\s+|with\s+)?love|kisses|hugs|cheers|take care|see you(?:\s+soon)?|thanks(?:\s+again)?"
    r"|thank you(?:\s+again)?|all the best|bye))\s*[,.!]*"
)


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
            and not LIST_MARKER.match(stripped)
            and not _ENDS_SENTENCE.search(text[current[0] : current[1]])
            and not LIST_MARKER.match(text[current[0] : current[1]].strip())
            and not GREETING.fullmatch(text[current[0] : current[1]].strip())
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
            if merged and not has_letters(text[merged[-1].start : merged[-1].end]):
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


def has_letters(text: str) -> bool:
    return any(ch.isalpha() for ch in text)
