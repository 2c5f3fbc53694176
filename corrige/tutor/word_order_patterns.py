"""Words a Spanish speaker puts where Spanish puts them: "I like very much football" (me gusta
mucho el fútbol) and "Can you explain me the problem?" (¿me puedes explicar el problema?). English
wants the object right after its verb, then "very much", then "to me".

Both rules move a short object, up to the end of its clause, and only after the verbs that take
it; an object that goes on into another clause ("I like very much that you came") is left alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from corrige.tutor import pattern_words as shared
from corrige.tutor.edits import Edit, Token

LIKING_VERBS = frozenset("like likes liked love loves loved enjoy enjoys enjoyed".split())
AMOUNTS = (("very", "much"), ("so", "much"))
EXPLAIN_FORMS = frozenset("explain explains explained explaining".split())
OBJECT_PRONOUNS = frozenset("me us him".split())
# words an object of a few words does not hold: another clause or subject begins at them
CLAUSE_WORDS = frozenset(
    """and but or because when while if that so than where which who how why what i you he she we they
    it""".split()
)
LONGEST_OBJECT = 6  # words


def _object_end(tokens: Sequence[Token], words: list[str], start: int) -> int | None:
    """Where an object that starts at `start` ends: at the clause's end (a punctuation mark or the
    sentence's end), if it is one to six words with no other clause in them; None otherwise."""
    end = start
    while end < len(words) and tokens[end].is_word:
        if words[end] in CLAUSE_WORDS or end - start >= LONGEST_OBJECT:
            return None
        end += 1
    ends_clause = end == len(words) or words[end] in shared.ENDS_A_PHRASE
    return end if end > start and ends_clause else None


def adverb_after_object(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I like very much football → I like football very much; we enjoyed so much the trip → the
    trip so much."""
    for i in range(len(words) - 3):
        if words[i] not in LIKING_VERBS or tuple(words[i + 1 : i + 3]) not in AMOUNTS:
            continue
        end = _object_end(tokens, words, i + 3)
        if end is not None:
            moved = f"{shared.span_text(tokens, text, i + 3, end)} {shared.span_text(tokens, text, i + 1, i + 3)}"
            yield shared.replace_tokens(tokens, i + 1, end, moved, "adverb_position", text)


def object_before_to_me(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """Can you explain me the problem? → explain the problem to me ("explain me how it works",
    with a question word, is `patterns.verb_patterns`': explain to me how)."""
    for i in range(len(words) - 2):
        if words[i] not in EXPLAIN_FORMS or words[i + 1] not in OBJECT_PRONOUNS:
            continue
        end = _object_end(tokens, words, i + 2)
        if end is not None:
            moved = f"{shared.span_text(tokens, text, i + 2, end)} to {shared.span_text(tokens, text, i + 1, i + 2)}"
            yield shared.replace_tokens(tokens, i + 1, end, moved, "verb_pattern", text)


WORD_ORDER_RULES = (adverb_after_object, object_before_to_me)
