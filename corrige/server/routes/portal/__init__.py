"""The learner portal: the tutor page, quiz, exam and progress (server-rendered Jinja2 pages),
their form posts, and the JSON API that the pages' small script uses.

Pages: `GET /` (tutor), `/quiz`, `/quiz/answers/{id}`, `/exam`, `/exam/{id}`, `/progress`
(and `/favicon.ico`).
Form posts (they work without JavaScript; a page or a 303 redirect answers): `POST /`,
`POST /quiz`, `POST /exam`, `POST /exam/{id}/answer`. JSON API (errors in the error model):
`GET /portal/api/session`, `POST /portal/api/correct`, `POST /portal/api/text`, `GET /portal/api/quiz/question`,
`POST /portal/api/quiz/answer`, `POST /portal/api/exams`, `GET /portal/api/exams/{id}`,
`POST /portal/api/exams/{id}/answers`, `GET /portal/api/progress`.

The tutor page takes a whole text (`text`, up to 5,000 characters: an email, a letter), corrected
through the grammar API's text path (`corrige.server.text_service`), with a card per edit and an
"accept all" that is itself a form post (the corrected text back in the text box); a form post
with `sentence` still gets the one-sentence correction.

Every POST must carry the session's CSRF token (form field `csrf_token`, or header
`X-CSRF-Token`): else 403 `csrf_failed`, as JSON for the API and as an HTML page for a form.
Quiz and exam answers are graded, then the tutor model corrects the question (its correction
is part of the feedback), then the submission is written to the audit log; the answer goes
out only after the write is on disk.

Modules: `visit` (templates, the learner of a request, CSRF, form fields, error pages), `hooks`
(what the app's middleware asks: portal paths, form paths, session keys, error pages in front
of the routes), `bodies` (the request bodies and path ids), `tutor` (the tutor page and its
API), `answers` (grading and recording a quiz or exam answer), `quiz`, `exam`, `progress`, and
`session` (the session API). `router` holds every route of the portal.
"""

from __future__ import annotations

from fastapi import APIRouter

from corrige.server.routes.portal import exam, progress, quiz, session, tutor
from corrige.server.routes.portal.bodies import MAX_ID
from corrige.server.routes.portal.hooks import FORM_PATHS, is_portal_path, page_for_error, session_key
from corrige.server.routes.portal.visit import STATIC_PATH, api_session, get_portal, static_files

__all__ = [
    "FORM_PATHS",
    "MAX_ID",
    "STATIC_PATH",
    "api_session",
    "get_portal",
    "is_portal_path",
    "page_for_error",
    "router",
    "session_key",
    "static_files",
]

router = APIRouter(tags=["portal"])  # error responses: from the table of codes (corrige.server.openapi)
# in this order, the JSON API's operations are listed in the OpenAPI document as they always were
for part in (session, tutor, quiz, exam, progress):
    router.include_router(part.router)
