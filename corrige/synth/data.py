"""Training examples and deterministic train/dev/test splits.

An example is a learner sentence (``source``) with its correction and gloss. About 40% are
correct sentences (target ``source / sin errores``) so the model learns to leave good English
alone; the rest are spread evenly over the error categories (each erroneous example is built
for one category, sometimes with one or two extra errors).

Generalisation is measured, not assumed: dev and test are generated first, from all
templates; train then rejects (1) held-out template variants (e.g. ``act.past.neg.wh``, chosen
so that every category keeps other templates), (2) held-out word combinations (verb+object,
adjective+noun), and (3) any sentence whose source or clean version occurs in dev/test. A
source never gets two different targets anywhere in the corpus.
"""

from __future__ import annotations

import csv
import logging
import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from corrige.synth.error_catalogue import (
    CATALOGUE,
    Injected,
    applicable,
    compatible,
    inject,
    plan,
    realise,
)
from corrige.synth.grammar import Sentence, stable_hash
from corrige.synth.template_registry import registry
from corrige.synth.templates import SAMPLER_ONLY, Template
from corrige.tutor.answer_text import NO_ERRORS_GLOSS, render_target
from corrige.tutor.categories import SYNTHETIC_CATEGORY_IDS
from corrige.tutor.edits import Edit

log = logging.getLogger(__name__)

# the hand-written set lives with the learner dev set, in corrige/tutor/
REALISTIC_PATH = Path(__file__).resolve().parent.parent / "tutor" / "realistic.tsv"
MIN_WORDS = 3
HELD_TEMPLATE_SHARE = 0.06
MIN_VARIANTS_TO_HOLD = 6
HELD_COMBO_PERCENT = 5
# Requested number of errors per erroneous example; some multi-error draws end up single
# (no room for a second error), which brings two-error examples to about 15%.
EXTRA_ERRORS = ((1, 0.75), (2, 0.20), (3, 0.05))
MAX_ATTEMPTS = 60
REPEAT_AFTER = 6


@dataclass
class Example:
    """One tutor example; ``edits`` are exact character edits on ``source``."""

    source: str
    corrected: str
    gloss: str
    categories: list[str] = field(default_factory=list)
    edits: list[Edit] = field(default_factory=list)
    template_id: str = ""
    split: str = ""

    @property
    def target(self) -> str:
        return render_target(self.corrected, self.gloss)

    @property
    def is_correct(self) -> bool:
        return self.source == self.corrected


@dataclass(frozen=True)
class _Probe:
    """What each template offers, measured once on a fixed sample."""

    weights: dict[str, float]
    functions: dict[str, Template]
    base_support: dict[str, dict[str, float]]  # category -> base -> share of sentences
    id_support: dict[str, frozenset[str]]  # template id -> categories seen
    id_count: Counter[str]


@lru_cache(maxsize=1)
def _probe(per_base: int = 120) -> _Probe:
    rng = random.Random(20240601)
    reg = registry()
    base_support: dict[str, dict[str, float]] = defaultdict(dict)
    id_support: dict[str, set[str]] = defaultdict(set)
    id_count: Counter[str] = Counter()
    for base, (weight, fn) in reg.items():
        hits: Counter[str] = Counter()
        for _ in range(per_base):
            sentence = fn(rng)
            cats = applicable(sentence, rng)
            hits.update(cats)
            id_support[sentence.template].update(cats)
            id_count[sentence.template] += weight or SAMPLER_ONLY[base][0]
        for cid, n in hits.items():
            base_support[cid][base] = n / per_base
    missing = [c for c in SYNTHETIC_CATEGORY_IDS if c not in base_support]
    if missing:
        raise RuntimeError(f"no template offers categories {missing}")
    weights = {b: w or SAMPLER_ONLY[b][0] for b, (w, _) in reg.items()}
    return _Probe(
        weights,
        {b: f for b, (_, f) in reg.items()},
        dict(base_support),
        {k: frozenset(v) for k, v in id_support.items()},
        id_count,
    )


def held_out_templates(data_seed: int) -> frozenset[str]:
    """Template variants kept out of training for this data seed.

    Only variants of bases with many variants are eligible (never a base's most common one),
    and a variant is held out only while every category it offers remains offered by two or
    more training variants, so the test asks for recombination rather than the unseen.
    """
    probe = _probe()
    siblings = Counter(t.split(".")[0] for t in probe.id_support)
    commonest: dict[str, str] = {}
    for tid, _ in probe.id_count.most_common():
        commonest.setdefault(tid.split(".")[0], tid)
    offered: Counter[str] = Counter(c for cats in probe.id_support.values() for c in cats)
    total = sum(probe.id_count.values())
    held: set[str] = set()
    share = 0.0
    for tid in sorted(probe.id_support, key=lambda t: stable_hash(f"{data_seed}:template:{t}")):
        if share >= HELD_TEMPLATE_SHARE:
            break
        base = tid.split(".")[0]
        if siblings[base] < MIN_VARIANTS_TO_HOLD or commonest[base] == tid:
            continue
        cats = probe.id_support[tid]
        if any(offered[c] <= 2 for c in cats):
            continue
        held.add(tid)
        siblings[base] -= 1
        offered.subtract(cats)
        share += probe.id_count[tid] / total
    return frozenset(held)


def _combo_held(data_seed: int, combo: str) -> bool:
    return stable_hash(f"{data_seed}:combo:{combo}") % 100 < HELD_COMBO_PERCENT


class _Sampler:
    """Draws clean sentences and turns them into examples, for one split."""

    def __init__(self, data_seed: int, rng: random.Random, train: bool, max_words: int, max_chars: int) -> None:
        self.probe = _probe()
        self.rng = rng
        self.data_seed = data_seed
        self.train = train
        self.held = held_out_templates(data_seed) if train else frozenset()
        self.max_words = max_words
        self.max_chars = max_chars
        self.offered: dict[str, list[str]] = defaultdict(list)
        for c, sup in self.probe.base_support.items():
            for b in sup:
                self.offered[b].append(c)
        self.bases = [b for b in self.probe.weights if b not in SAMPLER_ONLY]
        self.base_weights = [self.probe.weights[b] for b in self.bases]
        # Bases that often offer a category are favoured (rate ** 1.5) so few draws are wasted.
        self.by_category = {
            c: (list(sup), [rate**1.5 * self.probe.weights[b] for b, rate in sup.items()])
            for c, sup in self.probe.base_support.items()
        }

    def _several(self, sentence: Sentence, base: str, category: str, n: int) -> Injected | None:
        """``category`` plus ``n - 1`` other errors that fit in the sentence, or None."""
        chosen = plan(sentence, [category], self.rng)
        if chosen is None:
            return None
        others = [c for c in self.offered[base] if c != category]
        self.rng.shuffle(others)
        for other in others:
            extra = plan(sentence, [other], self.rng)
            if extra and compatible(chosen + extra):
                chosen += extra
                if len(chosen) == n:
                    return realise(sentence, chosen)
        return None

    def _allowed(self, sentence: Sentence) -> bool:
        if not self.train:
            return True
        if sentence.template in self.held:
            return False
        return not any(_combo_held(self.data_seed, c) for c in sentence.combos)

    def _fits(self, text: str) -> bool:
        n = len(text.split())
        return MIN_WORDS <= n <= self.max_words and len(text) <= self.max_chars

    def correct(self) -> Example | None:
        base = self.rng.choices(self.bases, self.base_weights)[0]
        sentence = self.probe.functions[base](self.rng)
        if not self._allowed(sentence) or not self._fits(sentence.text):
            return None
        text = sentence.text
        return Example(text, text, NO_ERRORS_GLOSS, [], [], sentence.template)

    def erroneous(self, category: str) -> Example | None:
        """An example built for ``category``, with extra errors now and then.

        Sentences with room for several separate errors are rarer, so a multi-error draw
        looks at a few sentences before settling for a single error.
        """
        n = self.rng.choices([k for k, _ in EXTRA_ERRORS], [p for _, p in EXTRA_ERRORS])[0]
        bases, weights = self.by_category[category]
        attempts = 3 if n > 1 else 1
        for attempt in range(attempts):
            base = self.rng.choices(bases, weights)[0]
            sentence = self.probe.functions[base](self.rng)
            if not self._allowed(sentence):
                continue
            if CATALOGUE[category].propose(sentence, self.rng) is None:
                continue
            injected = self._several(sentence, base, category, n) if n > 1 else None
            if injected is None and attempt == attempts - 1:
                injected = inject(sentence, [category], self.rng)
            if injected and self._fits(injected.source) and self._fits(injected.corrected):
                return Example(
                    injected.source,
                    injected.corrected,
                    injected.gloss,
                    injected.categories,
                    list(injected.edits),
                    sentence.template,
                )
        return None


def _generate(
    sampler: _Sampler,
    n: int,
    correct_share: float,
    split: str,
    seen: dict[str, str],
    banned_clean: set[str],
    eval_sources: set[str],
) -> list[Example]:
    """``n`` new examples; ``seen`` maps every source in the corpus to its target."""
    rng = sampler.rng
    n_correct = round(n * correct_share)
    todo: list[str | None] = [None] * n_correct
    todo += [SYNTHETIC_CATEGORY_IDS[i % len(SYNTHETIC_CATEGORY_IDS)] for i in range(n - n_correct)]
    rng.shuffle(todo)
    out: list[Example] = []
    repeats = 0
    for category in todo:
        for attempt in range(MAX_ATTEMPTS):
            ex = sampler.correct() if category is None else sampler.erroneous(category)
            if ex is None or ex.corrected in banned_clean:
                continue
            if ex.source in seen:
                # A narrow category may run out of new sentences: training may then repeat
                # one of its own examples, never an evaluation one and never a new target.
                if not (
                    sampler.train
                    and attempt >= REPEAT_AFTER
                    and seen[ex.source] == ex.target
                    and ex.source not in eval_sources
                ):
                    continue
                repeats += 1
            seen[ex.source] = ex.target
            ex.split = split
            out.append(ex)
            break
        else:
            log.warning("gave up on one %s example for %s", category or "correct", split)
    if repeats:
        log.info("%s: %d repeated examples", split, repeats)
    return out


def make_splits(
    data_seed: int,
    n_train: int,
    n_dev: int,
    n_test: int,
    *,
    correct_share: float = 0.4,
    max_words: int = 16,
    max_chars: int = 100,
) -> dict[str, list[Example]]:
    """Deterministic train/dev/test examples (see module docstring for the guarantees).

    ``max_words``/``max_chars`` bound both the source and the corrected sentence.
    """
    seen: dict[str, str] = {}
    eval_clean: set[str] = set()
    eval_sources: set[str] = set()
    splits: dict[str, list[Example]] = {}
    for offset, (name, n) in enumerate((("test", n_test), ("dev", n_dev), ("train", n_train))):
        rng = random.Random(stable_hash(f"{data_seed}:{name}") + offset)
        sampler = _Sampler(data_seed, rng, name == "train", max_words, max_chars)
        examples = _generate(
            sampler, n, correct_share, name, seen, eval_clean if name == "train" else set(), eval_sources
        )
        if name != "train":
            eval_clean.update(ex.corrected for ex in examples)
            eval_sources.update(ex.source for ex in examples)
        splits[name] = examples
        if n:  # callers that want one split ask for 0 of the others: nothing to say about those
            log.debug("%s: %d examples (%d correct)", name, len(examples), sum(ex.is_correct for ex in examples))
    return {k: splits[k] for k in ("train", "dev", "test")}


def iter_texts(data: Iterable[Example] | Mapping[str, Iterable[Example]]) -> Iterator[str]:
    """Every source and target string, e.g. to train the tokenizer."""
    groups = data.values() if isinstance(data, Mapping) else [data]
    for group in groups:
        for ex in group:
            yield ex.source
            yield ex.target


@dataclass(frozen=True)
class RealisticExample:
    """A hand-written learner sentence, for a qualitative check of the trained tutor."""

    source: str
    corrected: str
    categories: tuple[str, ...]

    @property
    def is_correct(self) -> bool:
        return self.source == self.corrected


def load_realistic(path: Path | str = REALISTIC_PATH) -> list[RealisticExample]:
    """Rows of ``source<TAB>corrected<TAB>categories`` (categories comma-separated)."""
    rows = []
    with open(path, encoding="utf-8", newline="") as fh:
        for row in csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            if not row or row[0].startswith("#") or row[0] == "source":
                continue
            source, corrected = row[0].strip(), row[1].strip()
            cats = tuple(c.strip() for c in (row[2] if len(row) > 2 else "").split(",") if c.strip())
            rows.append(RealisticExample(source, corrected, cats))
    return rows
