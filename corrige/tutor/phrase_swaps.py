"""Whole phrases that are wrong wherever they stand, swapped for what English says (data:
`phrase_swaps.txt`): "despite of", "On my opinion", "do a mistake", "said me", "when I was child".

A learner's calque of a Spanish phrase is often several words long, and the words alone are each
right ("do", "a", "mistake"): neither the model's word-level candidates nor a trigram's window
see it, and a rule in code for each would be a rule per phrase. The table is read once; each of
its phrases is matched as whole words, in lower case, at any place in the sentence (or at its
start, `^`; or before the end of its noun phrase, `$`), and proposes one edit of the phrase's
words with its category, so the tutor glosses it as it glosses the fixed patterns.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from corrige.tutor.categories import BY_ID
from corrige.tutor.edits import Edit, Token
from corrige.tutor.pattern_words import replace_tokens

SWAPS_FILE = Path(__file__).with_name("phrase_swaps.txt")
# words after which a `$` phrase has ended: prepositions, conjunctions, time words, a new subject
ENDS = frozenset(
    """of in at on for with and but or to from by about into there here every yesterday today tomorrow
    tonight last this next because when while before after together again now i you he she we they""".split()
)
_GROUP = re.compile(r"\{([^}]*)\}")
CLAUSE_BREAKS = frozenset(",;:")  # after one of these, `^` holds too: "Dear Mr Smith, On my opinion"


@dataclass(frozen=True, slots=True)
class Swap:
    wrong: tuple[str, ...]  # lower-case words
    right: str
    category: str
    at_start: bool  # `^`: at the sentence's start, or after a comma, semicolon or colon
    ends_phrase: bool  # `$`


def _fill(template: str, words: list[str]) -> str:
    """`template` with its `{...}` groups replaced, in order, by `words`."""
    parts = _GROUP.split(template)  # text, group, text, group, ..., text
    parts[1::2] = words
    return "".join(parts)


def _expand(left: str, right: str) -> Iterator[tuple[str, str]]:
    """Every (wrong, right) pair a line's `{a|b}` groups stand for (the file's header)."""
    lefts, rights = _GROUP.findall(left), _GROUP.findall(right)
    options = [g.split("|") for g in lefts]
    # each right group follows the same group on the left, else the one left group of its size
    # that no right group stands the same as ({do|did} {a mistake|mistakes} => {make|made} {...})
    kept = {k for k, g in enumerate(lefts) if g in rights}
    follows = []
    for group in rights:
        size = len(group.split("|"))
        match = next((k for k, g in enumerate(lefts) if g == group), None)
        if match is None:
            sized = [k for k, o in enumerate(options) if len(o) == size and k not in kept]
            if len(sized) > 1:  # which one it follows would be a guess: {very|so} {boring|tiring}
                raise ValueError(f"{SWAPS_FILE.name}: {right!r}: several groups on the left have {size} words")
            match = sized[0] if sized else None
        if match is None:
            raise ValueError(f"{SWAPS_FILE.name}: {right!r}: no group on the left has {size} words")
        follows.append(match)
    for choice in itertools.product(*(range(len(o)) for o in options)):
        wrong = _fill(left, [o[c] for o, c in zip(options, choice, strict=True)])
        fixed = _fill(right, [group.split("|")[choice[k]] for group, k in zip(rights, follows, strict=True)])
        yield wrong, fixed


def parse(text: str) -> tuple[Swap, ...]:
    """The swaps of a table in `phrase_swaps.txt`'s format; a bad line raises ValueError naming it."""
    swaps = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            rule, category = line.split("\t")
            left, right = (side.strip() for side in rule.split("=>"))
        except ValueError:
            raise ValueError(f"{SWAPS_FILE.name}:{n}: want `wrong => right<TAB>category`, got {line!r}") from None
        if category not in BY_ID:
            raise ValueError(f"{SWAPS_FILE.name}:{n}: unknown category {category!r}")
        at_start, ends_phrase = left.startswith("^"), left.endswith("$")
        left = left.strip("^$")
        for wrong, fixed in _expand(left, right):
            swaps.append(Swap(tuple(wrong.lower().split()), fixed, category, at_start, ends_phrase))
    return tuple(swaps)


@lru_cache(maxsize=1)
def table() -> dict[str, dict[int, dict[tuple[str, ...], Swap]]]:
    """The file's swaps by their first word, then by their length in words, then by their words:
    a sentence's word is looked up once per length, however many phrases its groups expand to
    (a line of three groups is hundreds of phrases)."""
    by_first: dict[str, dict[int, dict[tuple[str, ...], Swap]]] = {}
    for swap in parse(SWAPS_FILE.read_text(encoding="utf-8")):
        by_first.setdefault(swap.wrong[0], {}).setdefault(len(swap.wrong), {}).setdefault(swap.wrong, swap)
    return by_first


def phrase_swaps(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """The table's phrases in the sentence, each as an edit of its words (a pattern rule)."""
    swaps = table()
    for i, word in enumerate(words):
        for length, phrases in swaps.get(word, {}).items():
            j = i + length
            swap = phrases.get(tuple(words[i:j]))
            if swap is None or (swap.at_start and i > 0 and words[i - 1] not in CLAUSE_BREAKS):
                continue
            if j < len(words) and words[j] in ("'", "’"):
                continue  # a possessive's apostrophe: the phrase goes on (each others' houses)
            if swap.ends_phrase and j < len(words) and tokens[j].is_word and words[j] not in ENDS:
                continue
            edit = replace_tokens(tokens, i, j, _capital_i(swap.right), swap.category, text)
            if edit.replacement != edit.original:  # "in August" as written: nothing to change
                yield edit


_I = re.compile(r"\bi(?=$|\s|['’])")


def _capital_i(phrase: str) -> str:
    """The table writes in lower case; "i", "i'm", "i've" are written "I" ("i am interesting in"
    → "I am interested in")."""
    return _I.sub("I", phrase)
