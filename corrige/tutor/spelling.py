"""Non-word spelling: "wich" → "which", "goverment" → "government", "alot" → "a lot".

Learners' texts are full of words that are no English word at all, and a dictionary finds them
more surely than a small model does. A word is a non-word when neither the model's training
vocabulary (`words.txt`, with counts), a modern word list with frequencies (`BookCounts`: the
82,765 words of symspellpy's English dictionary, counted in Google Books) nor lemminflect's
lexicon knows it. Its candidates are the known words within two edits (insertions, deletions,
substitutions, swaps of neighbours; one edit for a word under five letters), a doubled letter
counting half, and the word split in two frequent words ("hardwork" → "hard work").

Which candidate, in the manner of a noisy channel (Kernighan, Church & Gale 1990): with a
language model, the one that makes the sentence most likely once each edit has cost
`SpellerConfig.edit_cost` and each candidate gained `frequency_weight` times the log of its
frequency, when it beats the next by `margin` ("the effect of the wark" → work, "the wark is
dark" → no guess); the weights are tuned on a public learner set's dev half (JFLEG, four
references; docs/tutor.md). Without one, the fewest edits and then the most frequent word, when
it is `AMBIGUITY_RATIO` times more frequent than the next as close.

Precision first, as everywhere in the tutor: a capitalised word (a name: Valencia, Carlos) is left
alone, and so is a short word, a word with digits, a word with no candidate, or one whose two best
candidates are about as likely (then a guess would be wrong too often).
"""

from __future__ import annotations

import importlib.util
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from lemminflect import getAllInflections, getAllLemmas, getInflection

from corrige.model.ngram import UNK, NgramLM, words_of
from corrige.tutor.edit_labels import CLOSED_CLASS
from corrige.tutor.edits import Edit

MIN_LENGTH = 3  # shorter non-words are mostly abbreviations ("pm", "st")
MIN_COUNT = 3  # a word of the training texts must have been seen this often to be suggested
MIN_LENGTH_FOR_TWO_EDITS = 5  # two edits from a shorter word reach too many words
# what a suggestion may be besides a word lemminflect lists (it lists open-class words only)
FUNCTION_WORDS = CLOSED_CLASS | frozenset(
    "because although though until unless whether while than then also as so not can all and or but if".split()
)
AMBIGUITY_RATIO = 4.0  # without a language model, the best must be this much more frequent than the next as close
# a non-word may be two words run together ("alot", "aswell", "infact") when both halves are at
# least this frequent (per million words): "in many", not "i nmany"
SPLIT_MIN_PER_MILLION = 100.0
PER_MILLION = 1e6
# a sentence's capitalised first word is a name as often as a misspelling: only a word at least this
# frequent (per million words) is suggested for it (because, although, therefore, people, technology)
FIRST_WORD_MIN_PER_MILLION = 20.0
# a prefix that turns a word into its opposite: "unnormal" stands for "abnormal", never "normal"
NEGATIVE_PREFIXES = ("un", "in", "im", "ir", "il", "dis", "non", "mis")
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
    # plurals made regular that old texts hold as words ("lifes", "wifes")
    "lifes": "lives",
    "wifes": "wives",
    "futbol": "football",
    "fourty": "forty",
    # misspellings the training texts hold, or that sit between two words, which learners mean one way
    "tecnologic": "technological",
    "intelligente": "intelligent",
    "cemetary": "cemetery",
    "foward": "forward",
    "grammer": "grammar",
    "happend": "happened",
    "millenium": "millennium",
    "noticable": "noticeable",
    "persue": "pursue",
    "publically": "publicly",
    "refered": "referred",
    "wierd": "weird",
    "stablish": "establish",
    "sistem": "system",
    "anual": "annual",
    "specialy": "specially",
    "clotes": "clothes",
    "planing": "planning",
    "siting": "sitting",
    # a contraction without its apostrophe; "cant" and "wont" are words of their own
    **{
        w.replace("'", ""): w
        for w in "don't doesn't didn't isn't wasn't aren't weren't haven't hasn't hadn't shouldn't couldn't "
        "wouldn't".split()
    },
}
# a lower-case word the training texts hold fewer times than this and no word list knows, one
# edit from a common word, is an old novel's spelling of that word as often as a learner's typo
# (ther, thet, woud): it is checked as a non-word (`Speller.is_suspect`)
RARE_TRAINING_COUNT = 40
FIXES_CACHE_SIZE = 1024  # sentences whose fixes a speller keeps (`Speller.fixes`)
RARE_BOOK_PER_MILLION = 3.0  # ... and a word the book counts hold this rarely (yong: Yong, a name)
COMMON_PER_MILLION = 100.0
RAREST_PER_MILLION = 0.001  # a frequency for a word no table counts
# today's words neither the old books nor the word lists hold, which learners write about their lives
# (social media, work, the pandemic): they are words, not misspellings ("influencers", not "influences")
MODERN_WORDS = frozenset(
    """influencer influencers youtuber youtubers selfie selfies vlog vlogs vlogger vloggers hashtag
    hashtags unfollow whatsapp instagram esports ebook ebooks lockdown lockdowns cyberbullying
    coworking chatbot chatbots livestream livestreams emoji emojis airbnb teleworking homeschooling
    podcaster podcasters streamer streamers app apps smartphone smartphones podcast podcasts wifi
    backend frontend fullstack startup startups""".split()
)
# dishes a learner names in a review or a letter, each one slip from a common word (satay/stay,
# arepas/areas): a name, never a misspelling
DISHES = frozenset(
    """satay arepa arepas empanada empanadas churro churros paella gazpacho tortilla tortillas ceviche taco
    tacos burrito burritos nachos sushi ramen tempura hummus falafel kebab kebabs quesadilla quesadillas
    guacamole chorizo sangria mojito mojitos tiramisu risotto gnocchi pesto bruschetta fajitas enchiladas
    tamales pupusas patacones bandeja ajiaco sancocho croquetas croquettes fabada cocido pisco tapas huevos
    rotos patatas bravas pulpo gallega jamon serrano iberico manchego pintxos pinchos calamares fideua
    salmorejo migas""".split()
)
# prefixes written onto a word without a hyphen (`Speller._prefixed_word`), and how common the word
# after one must be for the whole to count as a word
# (not co-, re-, inter-, eco-: "coresponding", "interresting", "ecologistics" are slips of one word)
WORD_PREFIXES = tuple("pre post non multi anti over under sub super self micro mini mega semi tele bio cyber".split())
PREFIXED_MIN_PER_MILLION = 5.0
# words the web-counted lists hold often that a tutor never puts in a learner's sentence for them
NEVER_SUGGESTED = frozenset(
    "porn porno porns sexy fuck fucked fucking shit damn bitch bitches ass asses arse crap dick dicks cock "
    "cocks pussy slut sluts whore whores rape raped nigger fag fags bastard piss pissed tits boob boobs".split()
)
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_VOWELS = "aeiouy"
# the modern word list with frequencies: symspellpy's English dictionary (MIT licence; the words
# of SCOWL counted in the Google Books Ngram corpus, CC BY 3.0), read from the installed package
BOOK_COUNTS_PACKAGE = "symspellpy"
BOOK_COUNTS_FILE = "frequency_dictionary_en_82_765.txt"


@dataclass(frozen=True)
class SpellerConfig:
    """How a language model chooses among a non-word's candidates (chosen on JFLEG's dev half,
    four references; what they give is in docs/tutor.md#spelling)."""

    edit_cost: float = 12.0  # ln-probability one edit costs the candidate (a doubled letter: half)
    frequency_weight: float = 1.0  # times the ln of the candidate's frequency, beside its context
    margin: float = 3.0  # the best candidate's score must beat the next one's by this
    unknown_weight: float = 0.5  # times a candidate's cost for being a word the model lacks (`_unknown_cost`)


@cache
def book_counts() -> dict[str, int]:
    """Google Books counts of 82,765 common English words (see `BOOK_COUNTS_FILE`)."""
    # found, not imported: the package's code is not needed (nor its optional dependencies)
    spec = importlib.util.find_spec(BOOK_COUNTS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"{BOOK_COUNTS_PACKAGE} is not installed (pip install {BOOK_COUNTS_PACKAGE})")
    text = (Path(spec.submodule_search_locations[0]) / BOOK_COUNTS_FILE).read_text(encoding="utf-8")
    counts = {}
    for line in text.splitlines():
        word, _, count = line.partition(" ")
        if count.strip().isdigit():
            counts[word] = int(count)
    return counts


def per_million(*tables: Mapping[str, int]) -> dict[str, float]:
    """Each word's frequency per million words, the highest any table gives it (each table
    counted against its own total): the training texts' words beside the book counts."""
    out: dict[str, float] = {}
    for table in tables:
        total = sum(table.values()) or 1
        for word, n in table.items():
            out[word] = max(out.get(word, 0.0), n * PER_MILLION / total)
    return out


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

    def __init__(
        self,
        counts: Mapping[str, int],
        known: Iterable[str] | None = None,
        *,
        books: Mapping[str, int] | None = None,
        lm: NgramLM | None = None,
        config: SpellerConfig | None = None,
    ) -> None:
        """`counts`: the training texts' words; `books`: a second table of counts (`book_counts`),
        whose words are known and suggested too; `lm`: the language model that chooses in context."""
        seen = {w: n for w, n in counts.items() if n >= MIN_COUNT and w.isalpha()}
        listed = {w: n for w, n in (books or {}).items() if w.isalpha()}
        self.counts = per_million(seen, listed)
        # a word the training texts hold once or twice is no evidence (luxery, prefere)
        self.known = frozenset(known if known is not None else seen) | frozenset(listed) | MODERN_WORDS | DISHES
        self._fixed: dict[str, tuple[Edit, ...]] = {}  # sentence → its fixes (`fixes`)
        books_per_million = per_million(listed)
        self._rare = (
            frozenset(
                w
                for w in set(counts) | set(listed)
                if w.isalpha()
                and w.islower()
                and counts.get(w, 0) < RARE_TRAINING_COUNT
                and (w not in listed or books_per_million[w] < RARE_BOOK_PER_MILLION)
            )
            - DISHES
        )  # a dish's name is as written, however rare in books
        self._suspects: dict[str, bool] = {}
        self.lm = lm
        # how often the language model's `<unk>` stands in the text: all the words it lacks, together
        self._unknown_per_million = math.exp(lm.unigram_logprob(UNK)) * PER_MILLION if lm is not None else None
        self.config = config or SpellerConfig()
        self._built: dict[str, list[str]] | None = None

    def is_common(self, word: str) -> bool:
        """A word the speller knows and has seen often enough to trust as written ("apps", not
        "ther", which old novels hold a few times)."""
        return word in self.known and word not in self._rare

    @property
    def _index(self) -> dict[str, list[str]]:
        """Each word and its one-letter deletions → the words they come from; built on first use
        (a few seconds for 100k words), so a process that never spells never pays for it."""
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
        return (
            w not in self.known
            and w not in self.counts
            and not self._inflection_of_known(w)
            and not self._prefixed_word(w)
        )

    def _prefixed_word(self, w: str) -> bool:
        """A prefix before a common word, written as one: preproduction, multiplatform, nonstop
        (its word of five letters or more, so "untill" is no "un" + "till")."""
        for prefix in WORD_PREFIXES:
            rest = w[len(prefix) :]
            if w.startswith(prefix) and len(rest) >= 5 and self._frequency(rest) >= PREFIXED_MIN_PER_MILLION:
                return True
        return False

    def _inflection_of_known(self, w: str) -> bool:
        """Whether lemminflect knows `w` as a word of its own or as a form of a known word: its
        first spelling of the form, or another that is not the first with a letter doubled or
        undoubled (its lexicon keeps "occuring" beside "occurring")."""
        for lemmas in getAllLemmas(w).values():
            for lemma in lemmas:
                if w == lemma:
                    return True
                if lemma not in self.known:
                    continue
                for forms in getAllInflections(lemma).values():
                    if w == forms[0] or (w in forms and _undoubled(w) != _undoubled(forms[0])):
                        return True
        return False

    def is_suspect(self, w: str) -> bool:
        """A lower-case word rare in the training texts (`RARE_TRAINING_COUNT`) and in the book
        counts (`RARE_BOOK_PER_MILLION`), that lemminflect does not know and that is one edit from a
        common word (`COMMON_PER_MILLION`): the one it is taken for, if the context agrees."""
        if w not in self._rare:
            return False
        if w not in self._suspects:  # a request's words come back: each is looked up once
            near = {c for key in _deletes(w) | {w} for c in self._index.get(key, ()) if c != w}
            self._suspects[w] = not getAllLemmas(w) and any(
                self._frequency(c) >= COMMON_PER_MILLION and _cost(w, c, edit_distance(w, c)) <= 1 for c in near
            )
        return self._suspects[w]

    def candidates(self, word: str) -> dict[str, float]:
        """The known words a lower-case non-word may stand for, each with its cost in edits: within
        one edit, or two for a word of `MIN_LENGTH_FOR_TWO_EDITS` letters or more (found through the
        index from the word and each of its one-edit variants), and two frequent words run together.
        Names and foreign words of the training texts are among them (rivals that make a guess
        unsafe), though never suggested."""
        max_distance = 2 if len(word) >= MIN_LENGTH_FOR_TWO_EDITS else 1
        keys = _two_edit_keys(word) if max_distance == 2 else _deletes(word) | {word}
        found: dict[str, float] = {}
        for key in keys:
            for candidate in self._index.get(key, ()):
                if candidate not in found:
                    found[candidate] = _cost(word, candidate, edit_distance(word, candidate))
        out = {
            c: cost
            for c, cost in found.items()
            if 0 < cost <= max_distance and not any(word == p + c for p in NEGATIVE_PREFIXES)
        }
        if any(_swapped(word, c) for c in out):
            return out  # "infrom" is "inform" with two letters swapped, not "in from"
        for k in range(1, len(word)):
            left, right = word[:k], word[k:]
            frequent = min(self._frequency(left), self._frequency(right)) >= SPLIT_MIN_PER_MILLION
            if frequent and (_splits_into(left, right) or _compound_of(left, right)):
                out[f"{left} {right}"] = 1.0
        return out

    def _frequency(self, word: str) -> float:
        return self.counts.get(word, 0.0)

    def suggest(self, word: str) -> str | None:
        """The known word ``word`` most likely misspells, out of context, or None when no suggestion
        is safe: the fewest edits, then the most frequent by `AMBIGUITY_RATIO`."""
        w = word.lower()
        if w in LEARNER_MISSPELLINGS:
            return LEARNER_MISSPELLINGS[w]
        if not self._checkable(w):
            return None
        if plural := _irregular_plural(w):
            return plural
        ranked = sorted((cost, -self._frequency(c), c) for c, cost in self.candidates(w).items() if " " not in c)
        if not ranked:
            return None
        best_cost, best_frequency, best = ranked[0]
        rivals = [r for r in ranked[1:] if r[0] == best_cost]
        if rivals and -best_frequency < AMBIGUITY_RATIO * -rivals[0][1]:
            return None
        return best if _suggestible(best) else None

    def suggest_in(self, sentence: str, start: int, word: str) -> str | None:
        """The known word ``word`` (at character `start` of `sentence`) most likely misspells there,
        chosen by the language model (see the module's docstring), or None when no choice is safe."""
        if self.lm is None:
            return self.suggest(word)
        w = word.lower()
        if w in LEARNER_MISSPELLINGS:
            return LEARNER_MISSPELLINGS[w]
        if not self._checkable(w):
            return None
        if plural := _irregular_plural(w):
            return plural
        words = words_of(sentence)
        at = len(words_of(sentence[:start]))
        found = self.candidates(w)
        suspect = not self.is_nonword(w)  # `is_suspect`
        if suspect:
            # not its other spelling with a letter doubled (councilor, councillor)
            found = {c: cost for c, cost in found.items() if _undoubled(c) != _undoubled(w)}
        if not found or at >= len(words) or words[at] != w.replace("’", "'"):
            return None
        names = sorted(found)
        cfg = self.config
        in_context = self.lm.change_gains(words, [(at, at + 1, name.split()) for name in names])
        gains = [
            float(gain) + cfg.unknown_weight * self._unknown_cost(name)
            for name, gain in zip(names, in_context, strict=True)
        ]
        scored = sorted(
            (
                (
                    float(gain)
                    - cfg.edit_cost * found[name]
                    + cfg.frequency_weight * math.log(min(self._frequency(part) for part in name.split())),
                    name,
                )
                for name, gain in zip(names, gains, strict=True)
            ),
            reverse=True,
        )
        if len(scored) > 1 and scored[0][0] - scored[1][0] < cfg.margin:
            return None
        best = scored[0][1]
        if suspect and (found[best] > 1 or self._frequency(best) < COMMON_PER_MILLION):
            return None  # a suspect word stands for the common word one edit away, or it stays
        if " " in best and not _splits_into(*best.split()):
            return None  # two content words: a compound the word lists lack as often as two words
        return best if all(_suggestible(part) for part in best.split()) else None

    def _unknown_cost(self, candidate: str) -> float:
        """What the language model's score of a candidate it lacks must lose: it scores `<unk>`,
        the share of every word it lacks together, so each such word costs its own share of that
        (its frequency over `<unk>`'s; "postie" is not as likely as "positive" in "more postive")."""
        assert self.lm is not None and self._unknown_per_million is not None
        return sum(
            math.log(max(self._frequency(part), RAREST_PER_MILLION) / self._unknown_per_million)
            for part in candidate.split()
            if part not in self.lm.index
        )

    def _checkable(self, w: str) -> bool:
        return len(w) >= MIN_LENGTH and w.isalpha() and (self.is_nonword(w) or self.is_suspect(w))

    def fixes(self, sentence: str) -> list[Edit]:
        """The non-words of ``sentence`` that have a safe suggestion: lower-case words, and the
        sentence's first word when what it stands for is a common word ("Becouse" → "Because").
        A suggestion that would repeat the word beside it, as corrected, is left out, a suspect
        word's first ("thet dhe" is "thet the", not "the the")."""
        # a correction asks for one sentence's fixes more than once (as read, as corrected)
        found = self._fixed.get(sentence)
        if found is None:
            if len(self._fixed) >= FIXES_CACHE_SIZE:
                self._fixed.clear()
            found = self._fixed[sentence] = tuple(self._find_fixes(sentence))
        return list(found)

    def _find_fixes(self, sentence: str) -> list[Edit]:
        words = list(_WORD.finditer(sentence))
        suggestions = [self._suggestion(sentence, m) for m in words]
        for suspects in (True, False):
            final = [(s or m.group()).lower() for m, s in zip(words, suggestions, strict=True)]
            for i, (m, suggestion) in enumerate(zip(words, suggestions, strict=True)):
                if suggestion is None or self.is_nonword(m.group()) == suspects:
                    continue
                if suggestion.lower() in final[max(i - 1, 0) : i] + final[i + 1 : i + 2]:
                    suggestions[i] = None
        return [
            Edit(m.start(), m.end(), m.group(), s, _kind_of_slip(m.group(), s))
            for m, s in zip(words, suggestions, strict=True)
            if s is not None
        ]

    def _suggestion(self, sentence: str, m: re.Match[str]) -> str | None:
        word = m.group()
        if sentence[m.end() : m.end() + 1] in ("'", "’"):
            return None  # a spoken form (runnin'): not ours
        if not word.isascii():
            return None  # Tomás, peñas, café: a name or a Spanish word, written as its language writes it
        if word.islower():
            return self.suggest_in(sentence, m.start(), word)
        if m.start() == _first_letter(sentence) and word[0].isupper() and word[1:].islower():
            return self._suggest_first(sentence, m.start(), word)
        return None  # a name, an acronym: not ours

    def _suggest_first(self, sentence: str, start: int, word: str) -> str | None:
        """A sentence's first word, capitalised: a name as often as a misspelling ("Bacchan",
        "Khafre"), so only a common word is suggested, capitalised in turn."""
        suggestion = self.suggest_in(sentence, start, word.lower())
        if suggestion is not None and word.lower() in LEARNER_MISSPELLINGS:
            return suggestion[0].upper() + suggestion[1:]  # "Dont" → "Don't": no name is spelled so
        if suggestion is None or min(map(self._frequency, suggestion.split())) < FIRST_WORD_MIN_PER_MILLION:
            return None
        return suggestion[0].upper() + suggestion[1:]


def _first_letter(sentence: str) -> int:
    m = re.search(r"[^\W\d_]", sentence)
    return m.start() if m else -1


def _splits_into(left: str, right: str) -> bool:
    """Whether a word run together may be `left right`: one of them a function word ("alot",
    "aswell", "infact", "forexample"); two content words are as often a compound the word
    lists lack ("newsfeed", "webcamera") as two words)."""
    return (len(left) > 1 or left in ("a", "i")) and (left in FUNCTION_WORDS or right in FUNCTION_WORDS)


def _compound_of(left: str, right: str) -> bool:
    """Whether a non-word is two content words run together ("realtime", "handphone"): never
    suggested as two words (`_splits_into`), but a rival that keeps a one-letter change
    ("mealtime", "headphone") from being guessed."""
    return min(len(left), len(right)) >= 3 and left not in FUNCTION_WORDS and right not in FUNCTION_WORDS


def _kind_of_slip(word: str, suggestion: str) -> str:
    """ "noun_number" for a plural made regular (childs → children: the learner knows the word, not
    its plural), "adjective_plural" for an adjective given an -s (differents), else "spelling"."""
    w, s = word.lower(), suggestion.lower()
    if w in LEARNER_MISSPELLINGS:
        return "spelling"
    if _irregular_plural(w) == s:
        return "noun_number"
    lemmas = getAllLemmas(s)
    if w == s + "s" and "ADJ" in lemmas and "NOUN" not in lemmas:
        return "adjective_plural"  # differents → different: an adjective has no plural
    return "spelling"


def _swapped(a: str, b: str) -> bool:
    """Whether `b` is `a` with two neighbouring letters swapped (infrom, inform)."""
    if len(a) != len(b) or a == b:
        return False
    diff = [k for k in range(len(a)) if a[k] != b[k]]
    return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]


def _irregular_plural(word: str) -> str | None:
    """The plural a learner made regular: childs → children, thiefs → thieves, citys → cities. The
    nearest word would be the singular (child), which changes what the learner meant."""
    if not word.endswith("s") or "NOUN" in getAllLemmas(word):
        return None
    singular = word[:-1]
    if "NOUN" not in getAllLemmas(singular):
        return None
    plurals = getInflection(singular, "NNS")
    return plurals[0] if plurals and word not in plurals and plurals[0] != singular else None


def _suggestible(word: str) -> bool:
    """A word lemminflect lists or a function word: not a name or a foreign word of the training
    texts (paella → pamela), and not a crude word the learner did not write (pron → porn)."""
    return word not in NEVER_SUGGESTED and (word in FUNCTION_WORDS or bool(getAllLemmas(word)))


def _two_edit_keys(word: str) -> set[str]:
    """The index keys that reach every known word two edits from `word` (the index holds each
    word and its one-letter deletions), save two substitutions of consonants, in about a
    thousand lookups rather than the five thousand of every one-edit variant's deletions:

    - the word and its deletions, and their deletions: a word within one edit, or two letters
      too many, or one too many and one wrong (the wrong one deleted on both sides);
    - each variant with a letter inserted or replaced: two letters missing, one missing and one
      wrong (the variant is then the known word less a letter, or the word itself);
    - the deletions of each variant with neighbours swapped or a vowel replaced: a swap and
      another edit, or two wrong letters of which one a vowel (Spanish speakers' "definetly")."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    deleted = _deletes(word)
    keys = {word} | deleted
    for d in deleted:
        keys |= _deletes(d)
    keys |= {a + c + b for a, b in splits for c in _LETTERS}
    keys |= {a + c + b[1:] for a, b in splits if b for c in _LETTERS}
    swapped = {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    vowels = {a + v + b[1:] for a, b in splits if b for v in _VOWELS if v != b[0]}
    for variant in swapped | vowels:
        keys |= _deletes(variant) | {variant}
    return keys
