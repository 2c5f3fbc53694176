"""What the pages and the JSON API show, built from the portal's records: plain dicts, the
same for a template and for a JSON answer (the route module only adds HTTP)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

from corrige.portal.highlight import answer_segments, segments
from corrige.portal.i18n import Text
from corrige.portal.quiz import POINTS, Grade, Question, grade
from corrige.portal.store import CategoryProgress, Exam, Submission
from corrige.tutor.edits import Edit
from corrige.tutor.text import NOTHING_TO_CHECK


def correction_view(
    sentence: str,
    corrected: str,
    gloss: str,
    abstained: bool,
    edits: Sequence[Edit],
    cards: Sequence[dict | None],
    more_errors: bool = False,
) -> dict:
    """A tutor correction: the sentence with its edits inline, the gloss, each edit's rule card
    (`rules` groups the edits by card, so a card that explains two edits is shown once), and
    whether more errors may remain in it (`Correction.more_errors`), as a text's view says per sentence."""
    rules: dict[str, dict] = {}
    for e, card in zip(edits, cards, strict=True):
        if card is not None:
            rules.setdefault(card["id"], {"card": card, "edits": []})["edits"].append(
                {"original": e.original, "replacement": e.replacement, "category": e.category}
            )
    return {
        "sentence": sentence,
        "corrected": corrected,
        "changed": corrected != sentence,
        "abstained": abstained,
        "more_errors": more_errors,
        "explanation": gloss,
        "segments": [asdict(s) for s in segments(sentence, edits)],
        "edits": [
            {
                "start": e.start,
                "end": e.end,
                "original": e.original,
                "replacement": e.replacement,
                "category": e.category,
                "rule": card,
            }
            for e, card in zip(edits, cards, strict=True)
        ],
        "rules": list(rules.values()),
    }


# why the tutor could not check a sentence of a text (`SentenceResult.status`, `.reason`), in the page's words
UNCHECKED = ("abstained", "too_long", "skipped")


def unchecked_message(status: str, reason: str | None, language: str | None, t: Text) -> str:
    if status == "too_long":
        return t.unchecked_too_long
    if status == "abstained":
        return t.abstained
    if reason == "no_words":
        return t.unchecked_no_words
    if reason == "mixed_scripts":
        return t.unchecked_scripts
    named = t.language(language)
    return t("unchecked_language", language=named) if named else t.unchecked_not_english


def text_view(
    result: Any, cards: Sequence[dict | None], glosses: Sequence[str], utf16: Callable[[int], int], t: Text
) -> dict:
    """A whole text corrected (the grammar API's `TextCorrectResponse`): the text as typed with each
    edit inline (`runs`), one card per edit (the gloss in the page's language, its category's name,
    its rule card, and where it lies in UTF-16 units, as a browser counts, for "accept"), the
    sentences the tutor could not check with the reason in the page's words, and the corrected text."""
    text = result.text
    edits = [e for s in result.sentences for e in s.edits]
    runs: list[dict] = []
    pos = 0
    for i, e in enumerate(edits):
        if e.offset < pos:  # overlapping edits cannot be shown inline; keep the first
            continue
        if e.offset > pos:
            runs.append({"kind": "same", "text": text[pos : e.offset]})
        runs.append({"kind": "edit", "index": i, "original": e.original, "replacement": e.replacement})
        pos = e.offset + e.length
    if pos < len(text):
        runs.append({"kind": "same", "text": text[pos:]})
    unchecked = []
    for s in result.sentences:
        if s.status in UNCHECKED and s.reason not in NOTHING_TO_CHECK:  # "Best wishes,", a name: nothing to check
            lang = s.language if s.status == "skipped" and t.language(s.language) else "en"
            unchecked.append(
                {
                    "sentence": s.sentence,
                    "status": s.status,
                    "reason": s.reason,
                    "lang": lang,
                    "message": unchecked_message(s.status, s.reason, s.language, t),
                }
            )
    return {
        "text": text,
        "corrected": result.corrected,
        "changed": bool(edits),
        "more_errors": [s.corrected for s in result.sentences if s.more_errors],
        "runs": runs,
        "edits": [
            {
                "index": i,
                "offset": e.offset,
                "length": e.length,
                "start": utf16(e.offset),
                "end": utf16(e.offset + e.length),
                "original": e.original,
                "replacement": e.replacement,
                "category": e.category,
                "category_label": t.category(e.category),
                "gloss": gloss,
                "rule": card,
            }
            for i, (e, card, gloss) in enumerate(zip(edits, cards, glosses, strict=True))
        ],
        "unchecked": unchecked,
    }


def question_view(q: Question, t: Text) -> dict:
    return {
        "question_id": q.id,
        "sentence": q.sentence,
        "category": q.category,
        "category_label": t.category(q.category),
    }


def feedback_view(sub: Submission, question: Question | None, card: dict | None, t: Text) -> dict:
    """A graded answer: the grade, the answer marked up into the expected correction, the gloss of
    the error, the tutor model's own correction of the question (empty where the grader calls it
    wrong: the bank was checked with the seed model, and the served one may miss what it fixes),
    and the rule card."""
    tutor_wrong = grade(sub.question, sub.expected, sub.tutor) is Grade.WRONG
    return {
        "submission_id": sub.id,
        "question_id": sub.question_id,
        "question": sub.question,
        "answer": sub.answer,
        "expected": sub.expected,
        "grade": sub.grade,
        "grade_label": t(f"grade_{sub.grade}"),
        "grade_note": t(f"grade_{sub.grade}_note"),
        "answer_segments": [asdict(s) for s in answer_segments(sub.answer, sub.expected)]
        if sub.grade != Grade.EXACT
        else [],
        "explanation": question.gloss if question else "",
        "tutor": "" if tutor_wrong else sub.tutor,
        "category": sub.category,
        "category_label": t.category(sub.category),
        "rule": card,
        "at": sub.at,
        "request_id": sub.request_id,
    }


def score(answers: Sequence[Submission]) -> float:
    return sum(POINTS[Grade(a.grade)] for a in answers)


def exam_view(exam: Exam, answers: Sequence[Submission], bank_get, t: Text) -> dict:
    """An exam's state: the next question while it runs; the score and the review once done."""
    answered = {a.question_id for a in answers}
    remaining = [qid for qid in exam.question_ids if qid not in answered]
    total = len(exam.question_ids)
    view = {
        "exam_id": exam.id,
        "started_at": exam.started_at,
        "total": total,
        "answered": len(answers),
        "finished": not remaining,
        "score": None,
        "next_question": None,
        "review": [],
    }
    if remaining:
        question = bank_get(remaining[0])
        view["next_question"] = question_view(question, t) if question else None
        view["number"] = len(answers) + 1
    else:
        view["score"] = score(answers)
        view["review"] = [feedback_view(a, bank_get(a.question_id), None, t) for a in answers if a.grade != Grade.EXACT]
    return view


def progress_view(
    learner: str,
    categories: Sequence[CategoryProgress],
    history: Sequence[Submission],
    exams: Sequence[tuple[Exam, list[Submission]]],
    t: Text,
) -> dict:
    return {
        "learner": learner,
        "categories": [
            {
                "category": c.category,
                "label": t.category(c.category),
                "attempts": c.attempts,
                "exact": c.exact,
                "close": c.close,
                "wrong": c.wrong,
                "score": round(c.score, 3),
            }
            for c in categories
        ],
        "history": [
            {
                "at": s.at,
                "mode": s.mode,
                "question": s.question,
                "answer": s.answer,
                "grade": s.grade,
                "grade_label": t(f"grade_{s.grade}"),
                "exam_id": s.exam_id,
            }
            for s in history
        ],
        "exams": [
            {
                "exam_id": e.id,
                "started_at": e.started_at,
                "answered": len(answers),
                "total": len(e.question_ids),
                "finished": len(answers) >= len(e.question_ids),
                "score": score(answers),
            }
            for e, answers in exams
        ],
    }
