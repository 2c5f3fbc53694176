"""Every quiz and exam item verified: its sentence really wrong, its answer really right.

The questions come from the course's template grammar (`corrige.synth`), and the seed model that
`quiz.check_answers` runs over them learnt that same grammar: it agrees with a template's mistakes
(*He will go to France for work.* "corrected" to *to work*). So each item is also checked by two
judges that never saw the templates, and a person's review settles what they cannot:

* **the bundled tutor** (the reader model, trained on real English with its patterns, speller and
  rescoring on top): does its correction of the wrong sentence fix the error (graded exact or close
  against the answer), and does it leave the answer as it is?
* **the word trigram model** (`corrige/models/lm`, the one the tutor's rescoring scores with): how
  much more likely is the answer than the wrong sentence, in ln-probability of the whole sentence?

An item **passes** when its sentence is confirmed wrong (the tutor fixes it, or the language model
scores the answer at least `WRONG_MARGIN` higher, or the sentence has a word the language model
does not know that the answer lacks: a non-word such as *goed*, *bigs*, *luggages*) and its answer
confirmed right (the tutor keeps it, and the language model scores it no more than
`ANSWER_MARGIN` below the wrong sentence). Where one of the two has a word the language model does
not know, its scores compare nothing (`<unk>` stands for every such word alike), and only the
non-word itself counts.

An item that fails is left out unless the review keeps it (`bank_review.tsv`: each reviewed item's
sentence, answer, verdict and why). The review also drops items the check passes but a reader
finds correct as written, ambiguous or unnatural (*Our uncle met her sister yesterday.*: whose
sister?). `corrige.portal.quiz.QuestionBank.build` runs all of it; the bank keeps each item's
verdict, and the test of the bank reruns the judges on a sample to show the kept verdicts are theirs.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from corrige.model.ngram import words_of

if TYPE_CHECKING:
    from corrige.portal.quiz import Corrector, Question

# ln-probability the answer must gain over the wrong sentence to confirm it wrong without the
# tutor (e^2: seven times as likely)
WRONG_MARGIN = 2.0
# ... and the most the answer may lose: as much as the rescoring's smallest margin for changing a
# word (confusion/replace, 5.15 in corrige/models/lm/rescoring.json) would mean the language model
# prefers the wrong sentence as firmly as the tutor needs to change one
ANSWER_MARGIN = 5.0
REVIEW_PATH = Path(__file__).resolve().parent / "bank_review.tsv"
REVIEW_FIELDS = ("id", "category", "sentence", "expected", "verdict", "reason")
VERDICTS = ("keep", "drop")


class Scorer(Protocol):
    """What the check needs of a language model (`corrige.model.ngram.NgramLM`)."""

    @property
    def index(self) -> Mapping[str, int]: ...  # the words it knows

    def score(self, sentence: str) -> float: ...


@dataclass(frozen=True)
class Verdict:
    """What the two judges say of one item."""

    tutor_fixes: bool  # the tutor's correction of the wrong sentence is graded exact or close
    tutor_keeps: bool  # the tutor leaves the answer as it is
    lm_gain: float  # ln p(answer) - ln p(wrong sentence), by the language model
    non_word: bool  # the wrong sentence has a word the language model does not know, the answer not
    answer_unknown: bool  # the answer has a word the language model does not know, the sentence not

    @property
    def comparable(self) -> bool:
        """Whether the language model's scores compare the two: not where one has a word the model
        does not know (its `<unk>` probability says nothing of either)."""
        return not (self.non_word or self.answer_unknown)

    @property
    def wrong_confirmed(self) -> bool:
        return self.tutor_fixes or self.non_word or (self.comparable and self.lm_gain >= WRONG_MARGIN)

    @property
    def answer_scored_fine(self) -> bool:
        return not self.comparable or self.lm_gain >= -ANSWER_MARGIN

    @property
    def answer_confirmed(self) -> bool:
        return self.tutor_keeps and self.answer_scored_fine

    @property
    def passes(self) -> bool:
        return self.wrong_confirmed and self.answer_confirmed

    def failures(self) -> list[str]:
        """Why the item fails, in the review's words (none when it passes)."""
        out = [] if self.wrong_confirmed else ["sentence not confirmed wrong"]
        if not self.tutor_keeps:
            out.append("tutor changes the answer")
        if not self.answer_scored_fine:
            out.append("answer scored much worse")
        return out

    def to_json(self) -> dict[str, object]:
        return {
            "tutor_fixes": self.tutor_fixes,
            "tutor_keeps": self.tutor_keeps,
            "lm_gain": self.lm_gain,
            "non_word": self.non_word,
            "answer_unknown": self.answer_unknown,
        }


def verify(questions: Sequence[Question], tutor: Corrector, lm: Scorer) -> dict[str, Verdict]:
    """Each question's verdict by id; the tutor corrects every sentence and answer in two batches."""
    from corrige.portal.quiz import Grade, collapse, grade

    fixed = tutor.correct_many([q.sentence for q in questions])
    kept = tutor.correct_many([q.expected for q in questions])
    verdicts = {}
    for q, fix, keep in zip(questions, fixed, kept, strict=True):
        wrong_unknown = {w for w in words_of(q.sentence) if w not in lm.index}
        answer_unknown = {w for w in words_of(q.expected) if w not in lm.index}
        verdicts[q.id] = Verdict(
            tutor_fixes=grade(q.sentence, q.expected, fix.corrected) is not Grade.WRONG,
            tutor_keeps=collapse(keep.corrected) == collapse(q.expected),
            lm_gain=round(lm.score(q.expected) - lm.score(q.sentence), 3),  # as the cached bank keeps it
            non_word=bool(wrong_unknown - answer_unknown),
            answer_unknown=bool(answer_unknown - wrong_unknown),
        )
    return verdicts


@dataclass(frozen=True)
class Review:
    """A person's verdict on one item: `keep` (really wrong, its answer right, whatever the judges
    said) or `drop` (correct as written, ambiguous, unnatural, or an answer that is not right)."""

    id: str
    category: str
    sentence: str
    expected: str
    verdict: str
    reason: str


def load_review(path: Path = REVIEW_PATH) -> dict[tuple[str, str], Review]:
    """The reviewed items by (sentence, answer): an id changes when the generator does, the words not."""
    with path.open(encoding="utf-8", newline="") as f:
        rows = [Review(**row) for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)]
    out: dict[tuple[str, str], Review] = {}
    for row in rows:
        if row.verdict not in VERDICTS or not row.reason.strip():
            raise ValueError(f"{path}: {row.id}: a verdict is keep or drop, with a reason ({row})")
        if (row.sentence, row.expected) in out:
            raise ValueError(f"{path}: {row.id}: reviewed twice")
        out[row.sentence, row.expected] = row
    return out


def screen(
    questions: Sequence[Question], verdicts: Mapping[str, Verdict], review: Mapping[tuple[str, str], Review]
) -> tuple[list[Question], dict[str, str]]:
    """The questions kept, and why each other one is left out: `reviewed_drop` (the review drops it,
    whatever the check says) or `check_failed` (the check fails it and no review keeps it)."""
    kept, dropped = [], {}
    for q in questions:
        reviewed = review.get((q.sentence, q.expected))
        if reviewed is not None and reviewed.verdict == "drop":
            dropped[q.id] = "reviewed_drop"
        elif verdicts[q.id].passes or reviewed is not None:
            kept.append(q)
        else:
            dropped[q.id] = "check_failed"
    return kept, dropped


@dataclass(frozen=True)
class BankCheck:
    """The judges and the review, as `QuestionBank.build` runs them."""

    tutor: Corrector
    lm: Scorer
    review: Mapping[tuple[str, str], Review]

    @classmethod
    def load(cls) -> BankCheck:
        """The bundled tutor, the bundled language model and the committed review."""
        from corrige.model.ngram import NgramLM
        from corrige.tutor.agent import BUNDLED_MODEL, LM_MODEL, Tutor

        return cls(Tutor.load(BUNDLED_MODEL), NgramLM.load(LM_MODEL), load_review())

    def run(self, questions: Sequence[Question]) -> tuple[list[Question], dict[str, str], dict[str, Verdict]]:
        """The questions kept, why each other one is left out, and every question's verdict."""
        verdicts = verify(questions, self.tutor, self.lm)
        kept, dropped = screen(questions, verdicts, self.review)
        return kept, dropped, verdicts


def depends_on() -> list[Path]:
    """The files the check's verdicts depend on (for the cached bank's digest): the review, the
    bundled tutor's and the language model's files (not their cards)."""
    from corrige.tutor.agent import BUNDLED_MODEL, LM_MODEL

    models = [p for d in (BUNDLED_MODEL, LM_MODEL) for p in sorted(d.iterdir()) if p.is_file() and p.suffix != ".md"]
    return [REVIEW_PATH, *models]
