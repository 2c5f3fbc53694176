"""Word-level edits between a learner sentence and its correction.

Edits are what the metrics count (M2-style: an edit is its source span plus its replacement),
so the reference and the prediction must be aligned the same way: both go through
``diff_edits``. Conventions:

* tokens are words (apostrophes inside words kept: "don't", "o'clock") and punctuation marks;
* a pure insertion or deletion is widened to the neighbouring word (the next one, or the
  previous one before final punctuation), so every edit has a non-empty original and
  replacement, as in the gloss (``teacher → a teacher``);
* edits that touch or overlap after widening are merged, so a swap is one edit
  (``car red → red car``).

Offsets are character offsets into the source; ``source[start:end] == original``. Applying the
edits gives the corrected sentence whenever the two sentences space their unchanged words the
same way (always true for generated data).
"""

from __future__ import annotations

import difflib
import functools
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from corrige.tutor.answer_text import GlossItem, split_gloss
from corrige.tutor.categories import OTHER
from corrige.tutor.function_words import FUNCTION_WORDS

_TOKEN = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]")


@dataclass(frozen=True)
class Edit:
    """Replace ``source[start:end]`` (== ``original``) by ``replacement``."""

    start: int
    end: int
    original: str
    replacement: str
    category: str = OTHER

    @property
    def key(self) -> tuple[int, int, str]:
        """Identity used when comparing edits (category ignored)."""
        return (self.start, self.end, self.replacement)


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int

    @property
    def is_word(self) -> bool:
        return self.text[0].isalnum() or self.text[0] == "_"


def tokenize(text: str) -> list[Token]:
    """Words and punctuation marks with their character offsets."""
    return list(_tokens(text))


@functools.lru_cache(maxsize=2048)
def _tokens(text: str) -> tuple[Token, ...]:
    # one correction tokenizes the same few texts again and again (the answer, the edits, the
    # patterns, the candidates, the speller): building the tokens was 5% of the server's CPU
    return tuple(Token(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text))


def apply_edits(source: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits (any order) to ``source``."""
    out = source
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        out = out[: e.start] + e.replacement + out[e.end :]
    return out


def start_in_corrected(e: Edit, edits: Iterable[Edit]) -> int:
    """Where `e`'s replacement starts once all of `edits` (which hold `e`) are applied: its start,
    shifted by what the edits before it changed in length."""
    return e.start + sum(len(o.replacement) - (o.end - o.start) for o in edits if o.end <= e.start and o != e)


def non_overlapping(edits: Iterable[Edit]) -> list[Edit]:
    """`edits` in order of position, each one overlapping an earlier one left out."""
    kept: list[Edit] = []
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        if not kept or edit.start >= kept[-1].end:
            kept.append(edit)
    return kept


def _widen(span: list[int], a: Sequence[Token], b: Sequence[Token] = ()) -> list[int]:
    """Give an empty side of a change a neighbouring unchanged token (see module docstring).

    The next word is preferred; before punctuation (or at the end) the previous token is
    used instead, so that no space is left dangling before the punctuation mark. Content words
    put in after a content word belong with it ("years → years old", not "and → old and"); a
    function word put in goes with the next ("nurse → a nurse").
    """
    i1, i2, j1, j2 = span[:4]
    if i1 < i2 and j1 < j2:
        return span
    inserted = b[j1:j2] if i1 == i2 else ()
    if (
        inserted
        and i1 > 0
        and a[i1 - 1].is_word
        and a[i1 - 1].text.lower() not in FUNCTION_WORDS
        and all(t.is_word and t.text.lower() not in FUNCTION_WORDS for t in inserted)
    ):
        return [i1 - 1, i2, j1 - 1, j2, *span[4:]]
    if i2 < len(a) and (a[i2].is_word or i1 == 0):
        return [i1, i2 + 1, j1, j2 + 1, *span[4:]]
    if i1 > 0:
        return [i1 - 1, i2, j1 - 1, j2, *span[4:]]
    return span  # both sentences are this change alone


def _align(a: Sequence[Token], b: Sequence[Token], source: str, corrected: str) -> list[list[int]]:
    """Changed token ranges ``[i1, i2, j1, j2, core1, core2]``: source range, corrected range
    and the source range before widening (used to match gloss items)."""
    words_a = [t.text for t in a]
    words_b = [t.text for t in b]
    matcher = difflib.SequenceMatcher(None, words_a, words_b, autojunk=False)
    spans = [_widen([i1, i2, j1, j2, i1, i2], a, b) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
    spans = [_fit_spacing(span, a, b, source, corrected) for span in _merge(spans)]
    return _merge(spans)


def _merge(spans: list[list[int]]) -> list[list[int]]:
    """Merge spans that touch or overlap (in the source)."""
    merged: list[list[int]] = []
    for span in spans:
        if merged and span[0] <= merged[-1][1]:
            last = merged[-1]
            merged[-1] = [min(last[k], span[k]) if k % 2 == 0 else max(last[k], span[k]) for k in range(6)]
        else:
            merged.append(span)
    return merged


def _gap(tokens: Sequence[Token], k: int, text: str) -> str:
    """The text between token ``k - 1`` and token ``k`` (from/to the text edges)."""
    start = tokens[k - 1].end if k > 0 else 0
    end = tokens[k].start if k < len(tokens) else len(text)
    return text[start:end]


def _fit_spacing(span: list[int], a: Sequence[Token], b: Sequence[Token], source: str, corrected: str) -> list[int]:
    """Grow a span over unchanged tokens until the spacing just outside it is the same in
    both sentences, so that replacing it reproduces the corrected sentence (an inserted
    comma attaches to the previous word: "I I" → "I, I", not "I" → ", I")."""
    i1, i2, j1, j2 = span[:4]
    while True:
        if _gap(a, i1, source) != _gap(b, j1, corrected) and i1 > 0 and j1 > 0:
            i1, j1 = i1 - 1, j1 - 1
        elif _gap(a, i2, source) != _gap(b, j2, corrected) and i2 < len(a) and j2 < len(b):
            i2, j2 = i2 + 1, j2 + 1
        else:
            return [i1, i2, j1, j2, *span[4:]]


def changed_spans(source: str, corrected: str) -> list[tuple[int, int]]:
    """Character spans of ``corrected`` that its edits from ``source`` wrote (widened as edits
    are, so an insertion or deletion holds its neighbouring word): what later fixes leave alone."""
    a, b = tokenize(source), tokenize(corrected)
    if [t.text for t in a] == [t.text for t in b]:
        return []
    return [_char_span(b, j1, j2, corrected) for _, _, j1, j2, _, _ in _align(a, b, source, corrected)]


def _char_span(tokens: Sequence[Token], i1: int, i2: int, text: str) -> tuple[int, int]:
    if i1 < i2:
        return tokens[i1].start, tokens[i2 - 1].end
    pos = tokens[i1].start if i1 < len(tokens) else len(text)
    return pos, pos


def diff_edits(source: str, corrected: str, gloss: str | None = None) -> list[Edit]:
    """Edits turning ``source`` into ``corrected``, categorised from ``gloss`` when given.

    An edit takes the category of a gloss item whose original words occur in the source
    where the edit is (overlapping it, or at its edge for an insertion). Items not yet used
    are preferred, so two identical items go to two edits; else ``other``.
    """
    a, b = tokenize(source), tokenize(corrected)
    if [t.text for t in a] == [t.text for t in b]:
        return []
    items = split_gloss(gloss) if gloss else []
    occurrences = _occurrences(a, items)
    used: set[int] = set()
    edits = []
    cores: list[tuple[int, int]] = []  # the source tokens each edit changes, before widening
    for i1, i2, j1, j2, c1, c2 in _align(a, b, source, corrected):
        start, end = _char_span(a, i1, i2, source)
        rstart, rend = _char_span(b, j1, j2, corrected)
        touching = [o for o in occurrences if _touches(c1, c2, o[1], o[2])]
        edit = Edit(start, end, source[start:end], corrected[rstart:rend], OTHER)
        parts = _split_by_items(edit, touching, a, items, source)
        if parts:  # one changed stretch that is two explained edits side by side
            used.update(o[0] for o in touching)
            edits.extend(parts)
            cores.extend([(-1, -1)] * len(parts))
            continue
        hits = [(k, cat) for (k, _, _, cat) in touching]
        fresh = [h for h in hits if h[0] not in used]
        k, category = (fresh or hits or [(-1, OTHER)])[0]
        used.add(k)
        if (
            category != OTHER
            and edit.original != edit.replacement
            and edit.original.lower() == edit.replacement.lower()
        ):
            category = "capitalisation"  # a piece of a wider fix that changes a letter's case only (i → I)
        edits.append(replace(edit, category=category))
        cores.append((c1, c2))
    return _as_items(edits, cores, occurrences, a, items, source)


def _as_items(
    edits: list[Edit],
    cores: list[tuple[int, int]],
    occurrences: list[tuple[int, int, int, str]],
    a: Sequence[Token],
    items: Sequence[GlossItem],
    source: str,
) -> list[Edit]:
    """The edits told as the gloss item that makes the same change, where one does: a word moved
    ("very much the tennis → the tennis very much", not "very → the tennis very" and "the tennis
    but → but") or put in after the word it goes with ("enjoyed → enjoyed ourselves", not
    "a → ourselves a")."""
    for k, s, e, category in occurrences:
        group = [i for i, (c1, c2) in enumerate(cores) if c1 >= 0 and _touches(c1, c2, s, e)]
        start, end = a[s].start, a[e - 1].end
        if not group:
            continue
        outside = any(edits[i].start < start or edits[i].end > end for i in group)
        if not outside and not _moves_words([edits[i] for i in group]):
            continue  # edits inside the item's words say it more exactly ("hardly → hard")
        lo = min(start, *(edits[i].start for i in group))
        hi = max(end, *(edits[i].end for i in group))
        if any(lo < x.end and x.start < hi for i, x in enumerate(edits) if i not in group):
            continue
        item = Edit(start, end, source[start:end], items[k].replacement, category)
        if apply_edits(source, [edits[i] for i in group]) != apply_edits(source, [item]):
            continue
        edits = [x for i, x in enumerate(edits) if i not in group]
        cores = [c for i, c in enumerate(cores) if i not in group]
        at = sum(1 for x in edits if x.start < start)
        edits.insert(at, item)
        cores.insert(at, (-1, -1))
    return edits


def _split_by_items(
    edit: Edit, touching: list[tuple[int, int, int, str]], a: Sequence[Token], items: Sequence[GlossItem], source: str
) -> list[Edit] | None:
    """The edit as one edit per gloss item when two or more distinct items lie side by side over
    exactly its words and their replacements, joined by the same spaces, are its replacement
    ("enjoy to meet → enjoys meeting" is "enjoy → enjoys" and "to meet → meeting"); else None."""
    keys = {o[0] for o in touching}
    if len(keys) < 2 or len(keys) != len(touching):
        return None
    spans = sorted((a[s].start, a[e - 1].end, k, cat) for k, s, e, cat in touching)
    if spans[0][0] != edit.start or spans[-1][1] != edit.end:
        return None
    gaps = [source[end:start] for (_, end, _, _), (start, _, _, _) in zip(spans, spans[1:], strict=False)]
    if any(gap.strip() or not gap for gap in gaps):
        return None  # overlapping, or something between them that no item explains
    replacements = [items[k].replacement for _, _, k, _ in spans]
    if "".join(r + g for r, g in zip(replacements, [*gaps, ""], strict=True)) != edit.replacement:
        return None
    return [Edit(s, e, source[s:e], r, cat) for (s, e, _, cat), r in zip(spans, replacements, strict=True)]


def _moves_words(edits: Sequence[Edit]) -> bool:
    """Whether one of `edits` takes out words another puts back elsewhere (a word moved)."""
    removed: Counter[str] = Counter()
    added: Counter[str] = Counter()
    for e in edits:
        # a word moved may change its ending on the way ("What means this word" → "does … mean")
        before = Counter(w.removesuffix("s") for w in e.original.lower().split())
        after = Counter(w.removesuffix("s") for w in e.replacement.lower().split())
        removed += before - after
        added += after - before
    return bool(removed & added)


def _touches(c1: int, c2: int, s: int, e: int) -> bool:
    """Does the changed source range ``[c1, c2)`` (empty for an insertion) belong to the gloss
    item found at ``[s, e)``? Overlap, or an insertion at its edge (has → has had)."""
    if c1 == c2:
        return s <= c1 <= e
    return c1 < e and s < c2


def _occurrences(a: Sequence[Token], items: Sequence[GlossItem]) -> list[tuple[int, int, int, str]]:
    """(item index, start, end, category) for every place each gloss item's original words
    occur in the source tokens (case-insensitive only when there is no exact occurrence)."""
    words = [t.text for t in a]
    lowered = [w.lower() for w in words]
    found: list[tuple[int, int, int, str]] = []
    for k, item in enumerate(items):
        target = [t.text for t in tokenize(item.original)]
        if not target:
            continue
        starts = _find_all(words, target) or _find_all(lowered, [w.lower() for w in target])
        found.extend((k, i, i + len(target), item.category) for i in starts)
    return found


def _find_all(words: Sequence[str], target: Sequence[str]) -> list[int]:
    n = len(target)
    return [i for i in range(len(words) - n + 1) if list(words[i : i + n]) == list(target)]
