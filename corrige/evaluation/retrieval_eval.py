"""Retrieval evaluation: recall@1 and recall@5 of the right rule card, per ranker.

Labelled queries come from three places:

* ``generated``: test-split examples of the synthetic corpus (``data.make_splits``) with exactly
  one error; query = source sentence + its edit + its category, as the tutor would send it.
* ``realistic``: the hand-written learner sentences of ``realistic.tsv`` with one error
  (edits from ``diff_edits``, category from the file).
* ``hand``: free-text queries in ``knowledge/eval_queries.toml`` (what a user types in
  ``corrige rules search``: English fragments, Spanish questions), some with a category.

The right card for an edit is the card of its category whose sub-rule matches the edit and its
context (``expected_cards``: preposition "with → to" after "married" → ``preposition_married_to``).
When no sub-rule can be pinned, any card of the category counts and the query is marked
unpinned; the report gives the share of pinned queries.
"""

from __future__ import annotations

import re
import statistics
import time
import tomllib
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from corrige.synth import lexicon as lx
from corrige.tutor.categories import CATEGORY_IDS
from corrige.tutor.knowledge import CARDS_DIR, Card, bundled_cards
from corrige.tutor.retrieval import Query, Retriever, build_query, rrf

HAND_QUERIES_PATH = CARDS_DIR / "eval_queries.toml"
MODES = ("bm25", "dense", "hybrid")
KS = (1, 5)


@dataclass(frozen=True)
class LabelledQuery:
    query: Query
    relevant: frozenset[str]
    source: str
    category: str
    pinned: bool = True


# ---------------------------------------------------------------------------------------------
# Sub-rule labelling
# ---------------------------------------------------------------------------------------------

_VOWEL_PASTS = {
    "drank",
    "swam",
    "sang",
    "began",
    "wrote",
    "drove",
    "rode",
    "spoke",
    "broke",
    "chose",
    "woke",
    "won",
    "ran",
    "came",
    "got",
    "forgot",
    "ate",
    "gave",
    "took",
    "flew",
    "drew",
    "grew",
    "wore",
    "knew",
    "saw",
    "sat",
}
_OUGHT_PASTS = {"bought", "brought", "thought", "taught", "caught", "fought"}
_SAME_PASTS = {"read", "put", "cut", "hit", "cost", "let", "set", "shut"}
_BE = {"is", "are", "am", "was", "were", "isn't", "aren't", "wasn't", "weren't"}
_WEATHER = re.compile(r"\b(rain|rains|raining|snow|snows|snowing|windy|sunny|cold|hot|cloudy|warm|wet|foggy)\b")
_EMBEDDING = re.compile(r"\b(know|tell|told|explain|explained|wonder|ask|asked|understand)\b")
_DAYS = {d.lower() for d in lx.DAYS} | {d.lower() + "s" for d in lx.DAYS}
_MONTHS = {m.lower() for m in lx.MONTHS}
_LANGUAGE_SUBJECTS = {w.lower() for w in lx.LANGUAGES + lx.SCHOOL_SUBJECTS}


def _words(text: str) -> list[str]:
    return re.findall(r"[\w']+", text.lower())


def _context(sentence: str, original: str, before: int = 25, after: int = 25) -> tuple[str, str]:
    """(text before, text after) the edit, lowercased, ``before``/``after`` characters wide."""
    low, orig = sentence.lower(), original.lower()
    pos = low.find(orig)
    if pos < 0:
        return low, low
    return low[max(0, pos - before) : pos], low[pos + len(orig) : pos + len(orig) + after]


def _past_irregular(o: str, r: str, s: str) -> str | None:
    w = r.lower()
    if w in _OUGHT_PASTS:
        return "past_irregular_ought"
    if w in _SAME_PASTS:
        return "past_irregular_same_form"
    if w in _VOWEL_PASTS:
        return "past_irregular_vowel"
    return "past_irregular_frequent"


def _third_person(o: str, r: str, s: str) -> str | None:
    first = _words(r)[0]
    if first in ("does", "doesn't"):
        return "third_person_does"
    if first in ("has", "hasn't"):
        return "third_person_has"
    return "third_person_s"


def _a_an(o: str, r: str, s: str) -> str | None:
    return "a_an_vowel_sound" if _words(r)[0] == "an" else "a_an_consonant_sound"


def _profession(o: str, r: str, s: str) -> str | None:
    before, _ = _context(s, o)
    words = _words(r)
    adjectives = {a for group in lx.ADJ_GROUPS.values() for a in group} | {n.lower() for n in lx.NATIONALITIES}
    if len(words) > 2 and words[1] in adjectives | _LANGUAGE_SUBJECTS or (len(words) == 2 and words[1] in adjectives):
        return "profession_article_adjective"
    if before.rstrip().endswith(" as"):
        return "profession_article_as"
    return "profession_article_be"


def _generic(o: str, r: str, s: str) -> str | None:
    noun = _words(r)[-1]
    if noun in lx.SPORTS:
        return "generic_the_sports"
    if noun in lx.MEALS:
        return "generic_the_meals"
    if noun in _LANGUAGE_SUBJECTS:
        return "generic_the_languages"
    if noun in lx.ABSTRACT_NOUNS:
        return "generic_the_abstract"
    return None


def _age(o: str, r: str, s: str) -> str | None:
    return "age_be_past" if _words(r)[0] in ("was", "were") else "age_be"


def _adjective_plural(o: str, r: str, s: str) -> str | None:
    _, after = _context(s, o)
    return "adjective_plural_noun" if after.strip() and after.strip()[0].isalpha() else "adjective_plural_predicate"


def _adjective_order(o: str, r: str, s: str) -> str | None:
    return "adjective_order_before_noun"


def _missing_subject(o: str, r: str, s: str) -> str | set[str] | None:
    _, after = _context(s, o, after=40)
    if _words(o)[0] in ("takes", "took", "depends", "depended"):
        return "missing_subject_it_takes"
    weather = bool(_WEATHER.search(o.lower()) or _WEATHER.search(after))
    if o[:1].islower():  # inside the sentence: after because / if / when
        return {"missing_subject_clause", "missing_subject_weather"} if weather else "missing_subject_clause"
    return "missing_subject_weather" if weather else "missing_subject_it_adjective"


def _double_negation(o: str, r: str, s: str) -> str | None:
    before, _ = _context(s, o, before=40)
    return "double_negation_never" if re.search(r"\bnever\b", before) else "double_negation_any"


def _comparative(o: str, r: str, s: str) -> str | None:
    w = _words(r)[-1]
    if w in {"better", "best", "worse", "worst", "further", "furthest"}:
        return "comparative_irregular"
    return "comparative_est" if w.endswith("est") else "comparative_er"


_PREPOSITION_CUES: tuple[tuple[str, str], ...] = (
    (r"\bmarried\b", "preposition_married_to"),
    (r"\binterested\b", "preposition_interested_in"),
    (r"\b(good|bad)\b\s*$", "preposition_good_at"),
    (r"\bafraid\b", "preposition_afraid_of"),
    (r"\bdifferent\b", "preposition_different_from"),
    (r"\bdepend", "preposition_depend_on"),
    (r"\barriv", "preposition_arrive_at"),
    (r"\b(think|thinks|thought|thinking|dream|dreams|dreamt|dreamed|dreaming)\b", "preposition_think_about"),
    (
        r"\b(wait|waits|waited|waiting|listen|listens|listened|listening|look|looks|looked|looking)\b",
        "preposition_verb_needs",
    ),
)


def _preposition(o: str, r: str, s: str) -> str | None:
    before, after = _context(s, o, before=20, after=20)
    rw = _words(r)
    for pattern, card in _PREPOSITION_CUES:
        if re.search(pattern, before.rstrip()) or re.search(pattern, o.lower()):
            return card
    nxt = (rw[1:] or _words(after)[:1] or [""])[0]
    if "home" in rw or "home" in _words(o):
        return "preposition_home"
    if rw[0] == "by":
        return "preposition_by_transport"
    if nxt in _DAYS:
        return "preposition_on_days"
    if nxt in _MONTHS or nxt in ("night", "weekend") or (nxt == "the" and "weekend" in after[:15]):
        return "preposition_at_in_time"
    return None


_MODALS = {"can", "can't", "must", "mustn't", "should", "shouldn't", "could", "couldn't", "will", "might"}


def _verb_pattern(o: str, r: str, s: str) -> str | None:
    ow, rw = _words(o), _words(r)
    before, _ = _context(s, o)
    previous = (_words(before) or [""])[-1]  # the word just before the edit
    if "agree" in ow or "agree" in rw or "agrees" in rw:
        return "verb_pattern_agree"
    if any(w.startswith("explain") for w in ow + [previous]):
        return "verb_pattern_explain_to"
    if ow and ow[0] in ("said", "say", "says"):
        return "verb_pattern_tell_say"
    if ow and ow[0] == "that":
        return "verb_pattern_want_to"
    if ow and ow[0] in _MODALS or ow[:1] == ["to"] and previous in _MODALS:
        return "verb_pattern_modal"
    if rw and rw[-1].endswith("ing"):
        return "verb_pattern_ing"
    return None


def _collocation(o: str, r: str, s: str) -> str | None:
    verb = _words(r)[0]
    _, after = _context(s, o, after=30)
    if verb in ("take", "takes", "took", "taken", "taking"):
        return "collocation_take_photo"
    if verb.startswith("miss"):
        return "collocation_miss_train"
    if verb in ("spend", "spends", "spent", "spending"):
        return "collocation_spend_time"
    if verb in ("have", "has", "had", "having"):
        return "collocation_have_party"
    if verb in ("tell", "tells", "told", "telling"):
        return "collocation_tell_truth"
    if verb.startswith("ask") or verb in ("pay", "pays", "paid", "paying"):
        return "collocation_ask_question"
    if verb in ("do", "does", "did", "done", "doing"):
        return "collocation_do_tasks"
    if verb in ("make", "makes", "made", "making"):
        return "collocation_make_mistake"
    return None


_INFORMATION = {"information", "advice", "homework", "news", "knowledge", "research"}
_FURNITURE = {"furniture", "luggage", "equipment", "traffic"}


def _uncountable(o: str, r: str, s: str) -> str | None:
    noun = _words(r)[-1]
    if noun in _INFORMATION:
        return "uncountable_information"
    if noun in _FURNITURE:
        return "uncountable_furniture"
    return "uncountable_mass"


def _there(o: str, r: str, s: str) -> str | set[str] | None:
    past = _words(r)[0] in ("were", "weren't")
    if s.rstrip().endswith("?"):
        return {"there_are_question", "there_were_past"} if past else "there_are_question"
    return "there_were_past" if past else "there_are_plural"


def _purpose(o: str, r: str, s: str) -> str | None:
    return "purpose_to_infinitive"


def _present_perfect(o: str, r: str, s: str) -> str | None:
    low = s.lower()
    if "how long" in low:
        return "present_perfect_how_long"
    if re.search(r"\bsince\b", low):
        return "present_perfect_since"
    if re.search(r"\bfor\b", low):
        return "present_perfect_for"
    return None


def _past_marker(o: str, r: str, s: str) -> str | None:
    if _words(o)[0] in ("do", "does", "don't", "doesn't"):
        return "past_marker_did"
    if re.match(r"\s*when\b", s.lower()):
        return "past_marker_when"
    return "past_marker_simple"


def _question_no_do(o: str, r: str, s: str) -> str | None:
    return {"do": "question_do_present", "does": "question_does_third", "did": "question_did_past"}.get(_words(r)[0])


def _question_order(o: str, r: str, s: str) -> str | None:
    before, _ = _context(s, o, before=40)
    rw = _words(r)
    if _EMBEDDING.search(before) and not s.lower().startswith(("where", "what", "when", "why", "how", "who")):
        return "question_order_embedded"
    if rw and rw[0] in ("do", "does", "did"):
        return "question_order_do"
    if rw and rw[0] in _BE or (rw and rw[-1] in _BE and len(rw) == 2):
        return "question_order_be"
    return None


def _possessive(o: str, r: str, s: str) -> str | None:
    return "possessive_owner" if _words(r)[0] in ("his", "her") else "possessive_its_their"


def _capitalisation(o: str, r: str, s: str) -> str | None:
    w = _words(r)[0]
    if w in _DAYS or w in _MONTHS:
        return "capitalisation_days_months"
    if w == "i":
        return "capitalisation_i"
    return "capitalisation_nationalities"


def _people(o: str, r: str, s: str) -> str | None:
    return "people_plural_be" if _words(r)[0] in _BE else "people_plural_verb"


def _adverb(o: str, r: str, s: str) -> str | None:
    return "adverb_very_much" if "very much" in o.lower() else "adverb_frequency"


SUB_RULES: dict[str, Callable[[str, str, str], str | set[str] | None]] = {
    "past_irregular": _past_irregular,
    "third_person": _third_person,
    "a_an": _a_an,
    "profession_article": _profession,
    "generic_the": _generic,
    "age_have": _age,
    "adjective_plural": _adjective_plural,
    "adjective_order": _adjective_order,
    "missing_subject": _missing_subject,
    "double_negation": _double_negation,
    "comparative": _comparative,
    "preposition": _preposition,
    "verb_pattern": _verb_pattern,
    "collocation": _collocation,
    "uncountable": _uncountable,
    "there_is_plural": _there,
    "purpose_for": _purpose,
    "present_perfect": _present_perfect,
    "past_marker": _past_marker,
    "question_no_do": _question_no_do,
    "question_order": _question_order,
    "possessive_his_her": _possessive,
    "capitalisation": _capitalisation,
    "people_plural": _people,
    "adverb_position": _adverb,
}


def expected_cards(
    category: str, original: str, replacement: str, sentence: str, cards: Sequence[Card]
) -> tuple[frozenset[str], bool]:
    """The acceptable card ids for one edit and whether a sub-rule was pinned.

    Unpinned (no matcher, or the matcher could not decide): every card of the category.
    """
    ids = {c.id for c in cards}
    rule = SUB_RULES.get(category)
    picked = rule(original, replacement, sentence) if rule and original and replacement else None
    if picked:
        chosen = {picked} if isinstance(picked, str) else set(picked)
        unknown = chosen - ids
        if unknown:
            raise KeyError(f"sub-rule matcher for {category} names unknown cards {sorted(unknown)}")
        return frozenset(chosen), True
    return frozenset(c.id for c in cards if c.category == category), False


# ---------------------------------------------------------------------------------------------
# Query sets
# ---------------------------------------------------------------------------------------------


def generated_queries(
    cards: Sequence[Card], n_test: int = 900, data_seed: int = 0, per_category: int = 14
) -> list[LabelledQuery]:
    """Single-error test examples, at most ``per_category`` per category (balanced)."""
    from corrige.synth.data import make_splits

    test = make_splits(data_seed, 0, 0, n_test)["test"]
    taken: Counter[str] = Counter()
    out = []
    for ex in test:
        if len(ex.edits) != 1:
            continue
        e = ex.edits[0]
        if e.category not in CATEGORY_IDS or taken[e.category] >= per_category:
            continue
        relevant, pinned = expected_cards(e.category, e.original, e.replacement, ex.source, cards)
        taken[e.category] += 1
        out.append(LabelledQuery(build_query(ex.source, [e], [e.category]), relevant, "generated", e.category, pinned))
    return out


def realistic_queries(cards: Sequence[Card]) -> list[LabelledQuery]:
    """Hand-written learner sentences with exactly one error and one category."""
    from corrige.synth.data import load_realistic
    from corrige.tutor.edits import diff_edits

    out = []
    for ex in load_realistic():
        if ex.is_correct or len(ex.categories) != 1:
            continue
        edits = diff_edits(ex.source, ex.corrected)
        if len(edits) != 1:
            continue
        cat = ex.categories[0]
        e = edits[0]
        relevant, pinned = expected_cards(cat, e.original, e.replacement, ex.source, cards)
        out.append(
            LabelledQuery(
                build_query(ex.source, [(e.original, e.replacement)], [cat]), relevant, "realistic", cat, pinned
            )
        )
    return out


def hand_queries(cards: Sequence[Card], path: Path = HAND_QUERIES_PATH) -> list[LabelledQuery]:
    """Free-text queries: ``[[query]] text = …, card = … (or cards = […]), category = …?``."""
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    ids = {c.id: c for c in cards}
    out = []
    for q in raw["query"]:
        wanted = [q["card"]] if "card" in q else list(q["cards"])
        unknown = [w for w in wanted if w not in ids]
        if unknown:
            raise KeyError(f"{path.name}: query {q['text']!r} names unknown cards {unknown}")
        cats = [q["category"]] if q.get("category") else []
        out.append(LabelledQuery(build_query(q["text"], (), cats), frozenset(wanted), "hand", ids[wanted[0]].category))
    return out


def all_queries(cards: Sequence[Card] | None = None, n_test: int = 900, data_seed: int = 0) -> list[LabelledQuery]:
    cards = list(cards or bundled_cards())
    return generated_queries(cards, n_test, data_seed) + realistic_queries(cards) + hand_queries(cards)


# ---------------------------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------------------------


@dataclass
class Recall:
    hits: dict[int, int] = field(default_factory=lambda: dict.fromkeys(KS, 0))
    n: int = 0

    def add(self, ranked: Sequence[str], relevant: frozenset[str]) -> None:
        self.n += 1
        for k in KS:
            self.hits[k] += any(c in relevant for c in ranked[:k])

    def at(self, k: int) -> float:
        return self.hits[k] / self.n if self.n else 0.0


@dataclass
class EvalReport:
    overall: dict[str, Recall]
    by_source: dict[str, dict[str, Recall]]
    by_category: dict[str, dict[str, Recall]]
    n_queries: int
    n_pinned: int
    misses: list[tuple[str, LabelledQuery, list[str]]]

    def as_dict(self) -> dict:
        def table(recalls: dict[str, Recall]) -> dict:
            return {m: {f"recall@{k}": round(r.at(k), 4) for k in KS} | {"n": r.n} for m, r in recalls.items()}

        return {
            "n_queries": self.n_queries,
            "n_pinned": self.n_pinned,
            "overall": table(self.overall),
            "by_source": {s: table(v) for s, v in self.by_source.items()},
            "by_category": {c: table(v) for c, v in sorted(self.by_category.items())},
        }


def rankings(retriever: Retriever, query: Query) -> dict[str, list[str]]:
    """Card ids ranked by each mode (the two rankers run once; hybrid fuses their lists)."""
    lexical = [i for i, _ in retriever.bm25.rank(query.lexical_tokens())]
    out = {"bm25": lexical}
    if retriever.dense is not None:
        dense = [i for i, _ in retriever.dense.rank(query.dense_text())]
        out["dense"] = dense
        out["hybrid"] = [i for i, _ in rrf([lexical, dense], k=retriever.rrf_k)]
    return {m: [retriever.cards[i].id for i in ids] for m, ids in out.items()}


def evaluate(retriever: Retriever, queries: Sequence[LabelledQuery]) -> EvalReport:
    modes = [m for m in MODES if m == "bm25" or retriever.dense is not None]
    overall = {m: Recall() for m in modes}
    by_source: dict[str, dict[str, Recall]] = defaultdict(lambda: {m: Recall() for m in modes})
    by_category: dict[str, dict[str, Recall]] = defaultdict(lambda: {m: Recall() for m in modes})
    misses = []
    for lq in queries:
        ranked = rankings(retriever, lq.query)
        for m in modes:
            overall[m].add(ranked[m], lq.relevant)
            by_source[lq.source][m].add(ranked[m], lq.relevant)
            by_category[lq.category][m].add(ranked[m], lq.relevant)
        top = modes[-1]
        if not any(c in lq.relevant for c in ranked[top][:5]):
            misses.append((top, lq, ranked[top][:5]))
    return EvalReport(overall, dict(by_source), dict(by_category), len(queries), sum(q.pinned for q in queries), misses)


# ---------------------------------------------------------------------------------------------
# Latency
# ---------------------------------------------------------------------------------------------


def latency_ms(
    retriever: Retriever, queries: Sequence[LabelledQuery], k: int = 5, repeats: int = 1, warmup: int = 5
) -> dict[str, dict[str, float]]:
    """p50 / p95 / mean of ``Retriever.search_query`` per mode, in milliseconds.

    Modes are interleaved query by query so that background load hits them alike.
    """
    modes = [m for m in MODES if m == "bm25" or retriever.dense is not None]
    for lq in queries[:warmup]:
        for m in modes:
            retriever.search_query(lq.query, k=k, mode=m)
    times: dict[str, list[float]] = {m: [] for m in modes}
    for _ in range(repeats):
        for lq in queries:
            for m in modes:
                t0 = time.perf_counter()
                retriever.search_query(lq.query, k=k, mode=m)
                times[m].append((time.perf_counter() - t0) * 1000)
    return {m: _percentiles(t) for m, t in times.items()}


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]

    return {
        "p50_ms": round(pct(50), 3),
        "p95_ms": round(pct(95), 3),
        "p99_ms": round(pct(99), 3),
        "mean_ms": round(statistics.fmean(ordered), 3),
        "n": len(ordered),
    }
