"""Non-word spelling: "wich" → "which", "goverment" → "government".

Learners' texts are full of words that are no English word at all, and a dictionary finds them
more surely than a small model does. A word is a non-word when neither the model's training
vocabulary (`words.txt`, with counts) nor lemminflect's lexicon knows it. Its suggestion is the
known word within two edits (insertions, deletions, substitutions, swaps of neighbours) that is
fewest edits away (a doubled letter counting half) and then most frequent, found through an index
of one-letter deletions in the manner of SymSpell: a word and a candidate two edits apart share a
string with one letter deleted from each (or one of them whole).

Precision first, as everywhere in the tutor: a capitalised word (a name: Valencia, Carlos) is left
alone, and so is a short word, a word with digits, a word with no suggestion, or one whose two best
suggestions are about as likely (then a guess would be wrong too often).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping

from lemminflect import getAllLemmas

from corrige.tutor.edit_labels import CLOSED_CLASS
from corrige.tutor.edits import Edit

MIN_LENGTH = 3  # shorter non-words are mostly abbreviations ("pm", "st")
MIN_COUNT = 3  # a suggestion must have been seen this often in training
MIN_LENGTH_FOR_TWO_EDITS = 6  # two edits from a short word reach too many words
# what a suggestion may be besides a word lemminflect lists (it lists open-class words only)
FUNCTION_WORDS = CLOSED_CLASS | frozenset("because although though until unless whether while than then also".split())
AMBIGUITY_RATIO = 4.0  # the best suggestion must be this much more frequent than the next as close
# learners' misspellings the rule above gets wrong or leaves: a split word (alot → lot), a Spanish
# spelling (foto → foot), a misspelling the training texts hold (thier, begining, exemple, adress),
# a near tie (wich: with, which). Each stands for one word only.
LEARNER_MISSPELLINGS = {
    "alot": "a lot",
    "foto": "photo",
    "fotos": "photos",
    "wich": "which",
    "thier": "their",
    "begining": "beginning",
    "exemple": "example",
    "adress": "address",
    "untill": "until",
}

# letters in any script (café, Ántonia are one word each), with an inner apostrophe (don't)
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")


def _undoubled(word: str) -> str:
    return re.sub(r"(.)\1+", r"\1", word)


def _cost(word: str, candidate: str, distance: int) -> float:
    """The edit distance, with a doubled letter dropped or added counting half: Spanish spells
    few double letters, so "realy" stands for "really" sooner than for "real"."""
    return distance - 0.5 if distance == 1 and _undoubled(word) == _undoubled(candidate) else float(distance)


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def edit_distance(a: str, b: str) -> int:
    """Optimal string alignment distance (Levenshtein plus swaps of neighbouring letters)."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[-1]


class Speller:
    """Finds non-words in a sentence and suggests the known word each most likely stands for."""

    def __init__(self, counts: Mapping[str, int], known: frozenset[str] | None = None) -> None:
        self.counts = {w: n for w, n in counts.items() if n >= MIN_COUNT and w.isalpha()}
        self.known = known if known is not None else frozenset(counts)
        self._built: dict[str, list[str]] | None = None

    @property
    def _index(self) -> dict[str, list[str]]:
        """Each word and its one-letter deletions → the words they come from; built on first use
        (about two seconds for 40k words), so a process that never spells never pays for it."""
        if self._built is None:
            index: dict[str, list[str]] = defaultdict(list)
            for word in self.counts:
                for key in _deletes(word) | {word}:
                    index[key].append(word)
            self._built = dict(index)
        return self._built

    def build_index(self) -> None:
        """Build the index now rather than inside the first request that needs it."""
        _ = self._index

    def is_nonword(self, word: str) -> bool:
        w = word.lower()
        return w not in self.known and w not in self.counts and not getAllLemmas(w)

    def suggest(self, word: str) -> str | None:
        """The known word ``word`` most likely misspells, or None when no suggestion is safe."""
        w = word.lower()
        if w in LEARNER_MISSPELLINGS:
            return LEARNER_MISSPELLINGS[w]
        if len(w) < MIN_LENGTH or not w.isalpha() or not self.is_nonword(w):
            return None
        max_distance = 2 if len(w) >= MIN_LENGTH_FOR_TWO_EDITS else 1
        found: dict[str, int] = {}
        for key in _deletes(w) | {w}:
            for candidate in self._index.get(key, ()):
                if candidate not in found:
                    found[candidate] = edit_distance(w, candidate)
        ranked = sorted(
            ((_cost(w, c, d), -self.counts[c], c) for c, d in found.items() if d <= max_distance),
            key=lambda r: (r[0], r[1]),
        )
        if not ranked:
            return None
        best_distance, best_count, best = ranked[0]
        rivals = [r for r in ranked[1:] if r[0] == best_distance]
        if rivals and -best_count < AMBIGUITY_RATIO * -rivals[0][1]:
            return None
        if best not in FUNCTION_WORDS and not getAllLemmas(best):
            return None  # a name or a foreign word of the training texts (paella → pamela): no suggestion
        return best

    def fixes(self, sentence: str) -> list[Edit]:
        """The non-words of ``sentence`` that have a safe suggestion, lower-case words only."""
        out = []
        for m in _WORD.finditer(sentence):
            word = m.group()
            if not word.islower() or sentence[m.end() : m.end() + 1] in ("'", "’"):
                continue  # a name, an acronym, a sentence's first word, a spoken form (runnin'): not ours
            suggestion = self.suggest(word)
            if suggestion is not None:
                out.append(Edit(m.start(), m.end(), word, suggestion, "spelling"))
        return out
