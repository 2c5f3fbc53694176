"""Quiz questions and grading.

Questions come from the seed model's held-out test split (`make_splits(0, 0, 0, 2000)`,
the split its model card is evaluated on), keeping the examples with exactly one error: a
learner fixes one thing at a time, and a single reference edit makes "close" well defined.
The bank is deterministic, so a question id (`q<index>`) means the same sentence after a
restart, in every process.

Every question's reference answer is checked when the bank is built (`check_answers`): the
seed model (the course's, whose grammar the questions come from) runs over the question and over
its reference correction, and the grader over what it says. A question whose reference the tutor
would change (a second error left in it), or whose own correction by the tutor (the "tutor says"
line of the feedback) the grader calls wrong, is left out. The server may run another model: the
feedback then shows its correction only where the grader does not call it wrong
(`views.feedback_view`), so the feedback never contradicts itself.

Grading compares the learner's answer with the reference correction. Two things that are not
errors of grammar never cost a point: a contraction and its full form are the same answer
(`It's snowing` for `It is snowing`, `doesn't` for `does not`, `she'd` for `she would` or
`she had`), and so is a sentence with or without its final full stop.

* **exact**: the same words and punctuation, in the same case, once contractions are read as
  their full forms, a final full stop is set aside, and spacing is ignored;
* **close**: not exact, but either the same words once case, punctuation and spacing are
  ignored (`yesterday i went to the store` for `Yesterday I went to the store.`; case still
  counts when the question's error is a capital letter, `english` for `English`), or one
  word away from the reference (one word added, dropped or changed) where that word is not
  one the question had wrong: the error is fixed and there is one slip elsewhere. A one-letter
  typo of a corrected word (`wnet` for `went`, one insertion, deletion, substitution or swap
  of neighbouring letters) is close too, unless it is the question's own word (`a engineer`
  left as it was is wrong, not a typo of `an`);
* **wrong**: anything else, including the question sent back unchanged.

    >>> grade("She is a engineer.", "She is an engineer.", "she is an engineer").value
    'close'
    >>> grade("She is a engineer.", "She is an engineer.", "She is a engineer.").value
    'wrong'
    >>> grade("Is snowing in Ireland.", "It is snowing in Ireland.", "It's snowing in Ireland").value
    'exact'
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import logging
import math
import os
import random
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from corrige.portal import bank_check
from corrige.portal.bank_check import BankCheck, Verdict

logger = logging.getLogger(__name__)

EXAM_LENGTH = 10
BANK_DATA_SEED = 0  # the seed model's data seed (its synthetic splits)
BANK_SPLIT_SIZE = 2000  # the model card's synthetic test split

BANK_FORMAT = 3  # bump when Question's fields, the check or the cache file's layout change
_PACKAGE = Path(__file__).resolve().parent.parent
# what the cached bank depends on: the generator (synth), the tutor, its runtime and the grader
_SOURCES = (
    ("synth", "*.py"),
    ("tutor", "*.py"),
    ("tutor", "*.tsv"),
    ("tutor", "*.txt"),
    ("model", "*.py"),
    ("portal", "quiz.py"),
    ("portal", "bank_check.py"),
)
_WORD = re.compile(r"[\w']+")
_TOKEN = re.compile(r"[\w']+|[^\w\s]")  # words and single punctuation marks
# contractions whose stem is not the word before n't
_NOT_STEMS = {"can't": "can", "won't": "will", "shan't": "shall", "cannot": "can"}
_SUFFIX_WORDS = {
    "'m": ("am",),
    "'re": ("are",),
    "'ve": ("have",),
    "'ll": ("will",),
    "'s": ("is", "has"),
    "'d": ("would", "had"),
}
# the words whose 's is is or has; after a noun it is read as a possessive (`Ana's brother` is never `Ana is brother`)
_S_STEMS = frozenset(
    "it he she that there here what where who how when why this everyone everybody someone somebody nobody "
    "something everything nothing".split()
)
MAX_READINGS = 16  # an answer with more ways than this is read as written (grading stays cheap)


class Grade(StrEnum):
    EXACT = "exact"
    CLOSE = "close"
    WRONG = "wrong"


POINTS = {Grade.EXACT: 1.0, Grade.CLOSE: 0.5, Grade.WRONG: 0.0}  # exam score and category progress


@dataclass(frozen=True, slots=True)
class Question:
    """A sentence with one error, its correction, the Spanish gloss and the edit."""

    id: str
    sentence: str
    expected: str
    gloss: str
    category: str
    original: str
    replacement: str


class Corrector(Protocol):
    """What the check needs of a tutor (`corrige.tutor.agent.Tutor`)."""

    def fits(self, sentence: str) -> bool: ...

    def correct_many(self, sentences: Sequence[str]) -> list: ...  # `Correction`s: `.corrected`


def check_answers(questions: Sequence[Question], tutor: Corrector) -> tuple[list[Question], dict[str, str]]:
    """The questions whose reference answer holds up, and why each other one is left out:

    * `too_long`: the tutor cannot take the question or its reference (its window);
    * `reference_changed`: the tutor would change the reference (an error left in it, or a tutor
      that would put one in: either way the feedback would show two answers);
    * `tutor_wrong`: the tutor's correction of the question, which the feedback shows, is graded
      wrong against the reference (it kept the error, abstained, or made another one).
    """
    fit = [q for q in questions if tutor.fits(q.sentence) and tutor.fits(q.expected)]
    taken = {q.id for q in fit}
    dropped = {q.id: "too_long" for q in questions if q.id not in taken}
    references = tutor.correct_many([q.expected for q in fit])
    own = tutor.correct_many([q.sentence for q in fit])
    kept = []
    for q, reference, correction in zip(fit, references, own, strict=True):
        if collapse(reference.corrected) != collapse(q.expected):
            dropped[q.id] = "reference_changed"
        elif grade(q.sentence, q.expected, correction.corrected) is Grade.WRONG:
            dropped[q.id] = "tutor_wrong"
        else:
            kept.append(q)
    return kept, dropped


class QuestionBank:
    """The questions, by id; drawing is random (the caller's `random.Random`). A checked bank also
    keeps the verdict (`bank_check.Verdict`) of every question the check ran over, kept or not, and
    why each left-out question was left out."""

    def __init__(
        self,
        questions: Sequence[Question],
        verdicts: Mapping[str, Verdict] | None = None,
        left_out: Mapping[str, str] | None = None,
    ) -> None:
        if not questions:
            raise ValueError("a question bank needs questions")
        self.questions = tuple(questions)
        self.verdicts = dict(verdicts or {})
        self.left_out = dict(left_out or {})
        self.by_id = {q.id: q for q in self.questions}
        self.by_category: dict[str, list[Question]] = {}
        for q in self.questions:
            self.by_category.setdefault(q.category, []).append(q)

    @classmethod
    def build(
        cls,
        data_seed: int = BANK_DATA_SEED,
        n: int = BANK_SPLIT_SIZE,
        tutor: Corrector | None = None,
        check: BankCheck | None = None,
    ) -> QuestionBank:
        """Single-error examples of the synthetic test split (about 0.8 s for the default size);
        with a tutor, only those that pass `check_answers` (a few seconds more); with a check, only
        those it and its review keep (`bank_check`: the bundled tutor over every sentence and answer,
        some 15 s of one core)."""
        from corrige.synth.data import make_splits

        questions = []
        for index, ex in enumerate(make_splits(data_seed, 0, 0, n)["test"]):
            if len(ex.categories) == 1 and len(ex.edits) == 1 and ex.source != ex.corrected:
                edit = ex.edits[0]
                questions.append(
                    Question(
                        f"q{index}",
                        ex.source,
                        ex.corrected,
                        ex.gloss,
                        ex.categories[0],
                        edit.original,
                        edit.replacement,
                    )
                )
        dropped: dict[str, str] = {}
        verdicts: dict[str, Verdict] = {}
        if tutor is not None:
            questions, dropped = check_answers(questions, tutor)
        if check is not None:
            questions, screened, verdicts = check.run(questions)
            dropped |= screened
        if dropped:
            reasons = dict(sorted(Counter(dropped.values()).items()))
            logger.info("quiz bank: %d questions kept, %d left out %s", len(questions), len(dropped), reasons)
        return cls(questions, verdicts, dropped)

    @classmethod
    def cached(cls, directory: Path, data_seed: int = BANK_DATA_SEED, n: int = BANK_SPLIT_SIZE) -> QuestionBank:
        """`build`, checked with the seed model and `bank_check` (the bundled tutor, the language
        model, the review), kept as JSON in `directory` so a restart reads it in milliseconds. The
        file's name carries a digest of what the bank depends on (the generator, the tutor and its
        runtime, the grader, the check and its review, the seed model's, the bundled tutor's and the
        language model's files), so a change builds anew."""
        from corrige.tutor.agent import SEED_MODEL, Tutor

        digest = hashlib.sha256(f"{BANK_FORMAT}:{data_seed}:{n}".encode())
        sources = [path for folder, pattern in _SOURCES for path in sorted((_PACKAGE / folder).glob(pattern))]
        seed = sorted(path for path in SEED_MODEL.iterdir() if path.is_file())
        for source in sources + seed + bank_check.depends_on():
            digest.update(source.name.encode() + source.read_bytes())
        path = directory / f"questions-{digest.hexdigest()[:16]}.json"
        with _one_builder(path):  # several apps starting at once (tests, workers) build it once, not each
            try:
                return cls.from_json(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError, TypeError, KeyError):
                pass  # missing or unreadable: build it
            return cls._build_and_keep(path, data_seed, n, Tutor.load(SEED_MODEL), BankCheck.load())

    def to_json(self) -> dict[str, object]:
        return {
            "format": BANK_FORMAT,
            "questions": [asdict(q) for q in self.questions],
            "verdicts": {k: v.to_json() for k, v in self.verdicts.items()},
            "left_out": self.left_out,
        }

    @classmethod
    def from_json(cls, data: dict) -> QuestionBank:
        if data["format"] != BANK_FORMAT:
            raise ValueError(f"a question bank of format {data['format']}, not {BANK_FORMAT}")
        verdicts = {k: Verdict(**v) for k, v in data["verdicts"].items()}
        return cls([Question(**q) for q in data["questions"]], verdicts, data["left_out"])

    @classmethod
    def _build_and_keep(cls, path: Path, data_seed: int, n: int, tutor: Corrector, check: BankCheck) -> QuestionBank:
        bank = cls.build(data_seed, n, tutor=tutor, check=check)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(bank.to_json(), ensure_ascii=False), encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            logger.info("quiz bank not cached in %s (%s)", path.parent, exc)
            tmp.unlink(missing_ok=True)
        return bank

    def get(self, question_id: str) -> Question | None:
        return self.by_id.get(question_id)

    def draw(self, rng: random.Random) -> Question:
        """One question: a random category, then a random question of it (categories equally often)."""
        category = rng.choice(sorted(self.by_category))
        return rng.choice(self.by_category[category])

    def draw_exam(self, rng: random.Random, n: int = EXAM_LENGTH) -> list[Question]:
        """`n` questions, one category after another in a shuffled order (so `n` different categories
        when there are that many), never the same question twice."""
        pools = {c: rng.sample(qs, len(qs)) for c, qs in sorted(self.by_category.items())}
        order = sorted(pools)
        rng.shuffle(order)
        picked: list[Question] = []
        while len(picked) < n and any(pools.values()):
            for category in order:
                if pools[category] and len(picked) < n:
                    picked.append(pools[category].pop())
        return picked


# ---------------------------------------------------------------- grading


def collapse(text: str) -> str:
    """Trim and collapse runs of whitespace: what typing adds without meaning to."""
    return " ".join(text.split())


def words(text: str, fold_case: bool = True) -> list[str]:
    """Words, punctuation dropped (apostrophes kept: `don't` stays one word), lower-cased unless told not to."""
    text = text.replace("’", "'")
    return _WORD.findall(text.lower() if fold_case else text)


def _error_spots(question: list[str], expected: list[str]) -> set[int]:
    """Positions of the reference's words that the question got wrong; a word the question has
    too many marks the words either side of where it stood."""
    spots: set[int] = set()
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(a=question, b=expected, autojunk=False).get_opcodes():
        if tag != "equal":
            spots.update(range(j1, j2) if j2 > j1 else (j1 - 1, j1))
    return spots


def typo_distance_one(a: str, b: str) -> bool:
    """True when `a` and `b` differ by one insertion, deletion, substitution or adjacent swap."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        return len(diff) == 1 or (
            len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def _like(word: str, full: str) -> str:
    """`full` capitalised as `word` begins (`Won't` -> `Will`)."""
    return full.capitalize() if word[:1].isupper() else full


def full_forms(word: str) -> list[tuple[str, ...]]:
    """The word as written, then the ways it may be written out in full when it is a contraction:
    `don't` -> do not, `can't` and `cannot` -> can not, `I'm` -> I am, `it's` -> it is or it has (a
    pronoun's or a question word's 's, not a noun's), `she'd` -> she would or she had, `let's` -> let us."""
    lower = word.lower()
    if lower in _NOT_STEMS:
        return [(word,), (_like(word, _NOT_STEMS[lower]), "not")]
    if lower.endswith("n't") and len(lower) > 3 and lower != "ain't":
        return [(word,), (word[:-3], "not")]
    if lower == "let's":
        return [(word,), (word[:-2], "us")]
    for suffix, fulls in _SUFFIX_WORDS.items():
        if lower.endswith(suffix) and len(lower) > len(suffix):
            if suffix == "'s" and lower[:-2] not in _S_STEMS:
                break
            return [(word,), *((word[: -len(suffix)], full) for full in fulls)]
    return [(word,)]


def readings(tokens: Sequence[str]) -> list[tuple[str, ...]]:
    """Every way of writing `tokens` with its contractions as written or in full (the first: all as
    written); past `MAX_READINGS` ways, only that first."""
    ways = [full_forms(t) if "'" in t or t.lower() == "cannot" else [(t,)] for t in tokens]
    if math.prod(len(w) for w in ways) > MAX_READINGS:
        ways = [w[:1] for w in ways]
    return [tuple(word for part in combo for word in part) for combo in itertools.product(*ways)]


def _tokens(text: str) -> list[str]:
    """Words and punctuation marks, case kept, without a final full stop (no error of grammar)."""
    tokens = _TOKEN.findall(text.replace("’", "'"))
    return tokens[:-1] if tokens and tokens[-1] == "." else tokens


def same_answer(answer: str, expected: str) -> bool:
    """The same words and punctuation in the same case, a contraction read as its full form and a
    final full stop set aside: what **exact** means."""
    return bool(set(readings(_tokens(answer))) & set(readings(_tokens(expected))))


def _differences(a: Sequence[str], b: Sequence[str]) -> list[tuple[str, int, int, int, int]]:
    return [op for op in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes() if op[0] != "equal"]


def _distance(pair: tuple[Sequence[str], Sequence[str]]) -> tuple[int, int]:
    """How far apart two word lists are: their differing runs, then the words those runs span."""
    ops = _differences(*pair)
    return len(ops), sum(max(i2 - i1, j2 - j1) for _, i1, i2, j1, j2 in ops)


def _closest(these: list[tuple[str, ...]], those: list[tuple[str, ...]]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The reading of each side that leaves the fewest differences between them (the first on a tie)."""
    return min(itertools.product(these, those), key=_distance)


def grade(question: str, expected: str, answer: str) -> Grade:
    """Grade `answer` to `question` against the reference `expected` (see the module docstring)."""
    if collapse(answer) == collapse(expected) or same_answer(answer, expected):
        return Grade.EXACT
    fold_case = words(question) != words(expected)  # unless the error itself is a capital letter
    got_ways, want_ways, asked_ways = (readings(words(text, fold_case)) for text in (answer, expected, question))
    if set(got_ways) & set(want_ways):
        return Grade.CLOSE
    got, want = (list(w) for w in _closest(got_ways, want_ways))
    asked = list(_closest(asked_ways, [tuple(want)])[0])
    ops = _differences(got, want)
    if len(ops) != 1:
        return Grade.WRONG
    tag, i1, i2, j1, j2 = ops[0]
    if max(i2 - i1, j2 - j1) != 1:
        return Grade.WRONG  # more than one word away
    touched = set(range(j1, j2)) if j2 > j1 else {j1 - 1, j1}
    if not touched & _error_spots(asked, want):
        return Grade.CLOSE  # the error is fixed; one slip elsewhere
    if tag == "replace" and got[i1] not in asked and typo_distance_one(got[i1], want[j1]):
        return Grade.CLOSE  # the right fix, mistyped
    return Grade.WRONG


@contextmanager
def _one_builder(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path`'s lock file while reading or building it, so that threads and
    processes that want the same bank at once wait for the first to write it; without a lock file
    (a read-only cache folder, a system without `fcntl`), everyone builds their own."""
    try:
        import fcntl

        path.parent.mkdir(parents=True, exist_ok=True)
        lock = open(path.with_name(f".{path.name}.lock"), "a")  # noqa: SIM115 - closed below
    except (ImportError, OSError):
        yield
        return
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
    finally:
        lock.close()  # releases the lock
