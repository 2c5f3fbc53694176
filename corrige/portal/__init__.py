"""The learner portal: the tutor page, quiz and exam for learners, their sessions, and the audit log.

Nothing here imports FastAPI; the HTTP side is `corrige.server.routes.portal`. Modules:
`store` (audit log, exams, learners: SQLite or PostgreSQL), `migrations` (the
store's versioned schema), `quiz` (questions and grading), `sessions`
(signed cookie, CSRF), `views` (what pages and JSON show), `highlight` (edits inline), `i18n`
(Spanish and English text), `rules` (a rule card per edit),
`state` (the objects one server holds). HTML form posts become JSON in
`corrige.server.forms`; `corrige bench portal` lives in `corrige.bench.portal`.
"""
