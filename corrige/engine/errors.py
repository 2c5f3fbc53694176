"""Typed engine errors. Each carries a stable `code` that the HTTP layer maps to a status."""

from __future__ import annotations

from typing import Any, ClassVar


class EngineError(Exception):
    """Base of every error a caller of the engine can see. A subclass names its code in its header:
    `class Overloaded(EngineError, code="overloaded")`, so none can go without one."""

    code: ClassVar[str] = "engine_error"

    def __init_subclass__(cls, *, code: str, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.code = code


class Overloaded(EngineError, code="overloaded"):
    """The waiting queue is full; raised at once, before the request enters the engine."""


class DeadlineExceeded(EngineError, code="deadline_exceeded"):
    """The request waited longer than its queue deadline without getting a slot."""


class InvalidRequest(EngineError, ValueError, code="invalid_request"):
    """The request can never be served as asked (e.g. it does not fit the context window)."""


class EngineClosed(EngineError, code="engine_closed"):
    """The engine is shut down, or shut down while the request was in flight."""


class EngineRestarting(EngineError, code="engine_restarting"):
    """The engine process died while the request was in flight; a new one is starting. Retry."""


class InternalError(EngineError, code="internal_error"):
    """The model failed while running this request; the engine itself keeps serving."""
