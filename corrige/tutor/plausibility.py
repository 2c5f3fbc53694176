"""Checks that a proposed correction only makes the kinds of change the tutor was taught.

The model learned a closed set of edits: it swaps a word for a related one (goed → went),
inserts or drops a few function words (the, do, to, it…), and moves words around. It never
learned to delete a noun or to invent a word. When an answer does either, the model is out
of its depth (an unfamiliar word, an unusual sentence) and a learner must not see it, however
confident the model was. These checks are cheap, word-level and independent of the model.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

WORDS_FILE = "words.txt"

# Words an error category may remove or add without a counterpart (articles, auxiliaries,
# prepositions, comparative markers, the dummy subject, "old" in ages, ...).
FUNCTION_WORDS = frozenset(
    """
    a an the for to of with in on at by from about into
    am is are was were be been being do does did have has had will would can could
    more most very much that it there old any anything anybody anyone anywhere
    no not nothing nobody none never one someone something somebody everyone everything everybody
    """.split()
)

ARTICLES = frozenset({"a", "an", "the"})

_WORD = re.compile(r"[A-Za-zÀ-ÿ]+(?:'[A-Za-z]+)?")


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def content_mismatch(source: str, corrected: str) -> str | None:
    """Why `corrected` is not a plausible edit of `source`, or None when it is.

    Compare the words the answer removes with those it adds. Removed function words pair
    with added function words first (with → to); a content word (anything outside
    FUNCTION_WORDS) may then be replaced by any remaining word (goed → went, make → do,
    haved → had, more old → older), but content words may not be dropped or added without
    such a counterpart, and an added article never stands in for a dropped noun. A word
    moved elsewhere (a car red → a red car) must not end up there twice.
    """
    src, out = Counter(words(source)), Counter(words(corrected))
    removed, added = src - out, out - src
    rc = sum(n for w, n in removed.items() if w not in FUNCTION_WORDS)
    rf = sum(removed.values()) - rc
    ac = sum(n for w, n in added.items() if w not in FUNCTION_WORDS)
    af = sum(added.values()) - ac
    paired = min(rf, af)
    added_articles = sum(n for w, n in added.items() if w in ARTICLES)
    if rc > ac + max(af - paired - added_articles, 0):
        return "content_dropped"
    if ac > rc + (rf - paired):
        return "content_added"
    if any(out[w] > src[w] for w in out if w in src and w not in FUNCTION_WORDS):
        return "content_repeated"
    return None


def common_word_capitalised(source: str, corrected: str, names: frozenset[str]) -> bool:
    """Whether the answer writes, inside the sentence, a capitalised word the learner did not:
    a common English word given a capital (lemminflect lists it), or a new word altogether, unless
    English capitalises it (`names`: days, languages, nationalities; `edit_labels.CAPITALISED`).
    "to err is human" is not "to Er is human"; "london" may become "London"."""
    from lemminflect import getAllLemmas

    written = set(_WORD.findall(source))
    lowered = {w.lower() for w in written}
    for w in _WORD.findall(corrected)[1:]:
        lower = w.lower()
        if not w[:1].isupper() or w in written or lower in names:
            continue
        if lower not in lowered or getAllLemmas(lower):
            return True
    return False


def unknown_words(source: str, corrected: str, known: frozenset[str]) -> list[str]:
    """Words the answer introduces that are neither in the source nor in the known vocabulary."""
    src = set(words(source))
    return [w for w in words(corrected) if w not in src and w not in known]


def inflections(word: str) -> set[str]:
    """Regular inflections of a word (over-generating is harmless: it only excuses real-looking words)."""
    forms = {word, word + "s", word + "es", word + "ed", word + "d", word + "ing", word + "er", word + "est"}
    if word.endswith("y"):
        forms |= {word[:-1] + "ies", word[:-1] + "ied", word[:-1] + "ier", word[:-1] + "iest"}
    if word.endswith("e"):
        forms |= {word[:-1] + "ing"}
    return forms


def load_known_words(model_dir: Path) -> frozenset[str] | None:
    """The training vocabulary and its regular inflections; None when the model ships no list."""
    path = model_dir / WORDS_FILE
    if not path.is_file():
        return None
    seen = {line.split("\t")[0].strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}
    # carried / carries → carry, so that every regular form of a seen verb or noun counts as seen
    seen |= {w[:-3] + "y" for w in seen if w.endswith(("ied", "ies"))}
    return frozenset(form for w in seen for form in inflections(w))


def load_word_counts(model_dir: Path) -> dict[str, int]:
    """How often each word occurs in the training sentences (empty for a list without counts)."""
    path = model_dir / WORDS_FILE
    counts: dict[str, int] = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            word, _, count = line.partition("\t")
            if count.strip().isdigit():
                counts[word.strip()] = int(count)
    return counts


def write_known_words(model_dir: Path, texts: Iterable[str]) -> Path:
    """The vocabulary the model saw in training: a lower-cased word and its count per line, most
    frequent first (the counts rank spelling suggestions)."""
    counts = Counter(w for t in texts for w in words(t))
    path = model_dir / WORDS_FILE
    lines = [f"{w}\t{n}" for w, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
