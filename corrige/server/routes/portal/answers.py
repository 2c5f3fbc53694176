"""A quiz or exam answer, in order: graded, the question corrected by the tutor (through the
same pipeline as every correction), then written to the audit log; the answer goes out only
after the write is on disk."""

from __future__ import annotations

import time

from fastapi import Request

from corrige.portal.quiz import Question, grade
from corrige.portal.state import Portal
from corrige.portal.store import AlreadyAnswered, Submission
from corrige.server.deps import meta_of, request_id_of
from corrige.server.errors import ApiError
from corrige.server.guards import check_text
from corrige.server.pipeline import Options
from corrige.server.routes.portal.bodies import AnswerBody
from corrige.server.routes.portal.visit import rules_of
from corrige.server.service import CorrectionService
from corrige.tutor.edits import Edit


async def question_of(portal: Portal, question_id: str) -> Question:
    question = (await portal.bank()).get(question_id)
    if question is None:
        raise ApiError(404, "question_not_found", f"question_id: no question {question_id!r}")
    return question


def question_edit(q: Question) -> Edit:
    start = q.sentence.find(q.original)
    return Edit(max(start, 0), max(start, 0) + len(q.original), q.original, q.replacement, q.category)


async def question_card(portal: Portal, service: CorrectionService, q: Question) -> dict | None:
    return (await portal.cards.for_edits(rules_of(service), [(q.sentence, question_edit(q))]))[0]


def checked_answer(body: AnswerBody, max_chars: int) -> str:
    """The answer as sent is checked (as the OpenAPI document states: length and characters), then stripped."""
    answer = body.answer.strip()
    if not answer:
        raise ApiError(422, "empty_answer", "answer: the answer is empty; write the corrected sentence")
    if len(body.answer) > max_chars:
        raise ApiError(422, "answer_too_long", f"answer: at most {max_chars} characters")
    check_text(body.answer, "answer")
    return answer


async def submit_answer(
    portal: Portal,
    service: CorrectionService,
    request: Request,
    learner: str,
    body: AnswerBody,
    exam_id: int | None = None,
) -> tuple[Submission, Question, dict[str, float]]:
    """Grade, let the tutor correct the question, write the audit record (flushed), in that order."""
    start = time.perf_counter()
    answer = checked_answer(body, service.settings.max_sentence_chars)
    question = await question_of(portal, body.question_id)
    verdict = grade(question.sentence, question.expected, answer)
    graded = time.perf_counter()
    pipeline = service.pipeline
    run = pipeline.begin(meta_of(request), Options(rules=False))  # the feedback's card is the question's own
    tutor = await pipeline.correct(run, pipeline.prepare(run, question.sentence, "question"))
    modelled = time.perf_counter()
    record = pipeline.respond(
        run,
        lambda: Submission(
            learner=learner,
            mode="exam" if exam_id is not None else "quiz",
            question_id=question.id,
            category=question.category,
            question=question.sentence,
            answer=answer,
            expected=question.expected,
            grade=verdict.value,
            tutor=tutor.corrected,
            request_id=request_id_of(request),
            exam_id=exam_id,
        ),
    )
    try:
        saved = await portal.db(portal.store.append, record)
    except AlreadyAnswered:
        raise ApiError(409, "already_answered", f"question_id: {question.id} already has an answer") from None
    done = time.perf_counter()
    timings = {
        "grade": 1e3 * (graded - start),
        "model": 1e3 * (modelled - graded),
        "audit": 1e3 * (done - modelled),
    }
    return saved, question, timings
