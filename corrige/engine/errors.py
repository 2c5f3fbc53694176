"""Typed engine errors. Each carries a stable `code` that the HTTP layer maps to a status."""

from __future__ import annotations


class EngineError(Exception):
    """Base of every error a caller of the engine can see."""

    code = "engine_error"


class Overloaded(EngineError):
    """The waiting queue is full; raised at once, before the request enters the engine."""

    code = "overloaded"


class DeadlineExceeded(EngineError):
    """The request waited longer than its queue deadline without getting a slot."""

    code = "deadline_exceeded"


class InvalidRequest(EngineError, ValueError):
    """The request can never be served as asked (e.g. it does not fit the context window)."""

    code = "invalid_request"


class EngineClosed(EngineError):
    """The engine is shut down, or shut down while the request was in flight."""

    code = "engine_closed"


class EngineRestarting(EngineError):
    """The engine process died while the request was in flight; a new one is starting. Retry."""

    code = "engine_restarting"


class InternalError(EngineError):
    """The model failed while running this request; the engine itself keeps serving."""

    code = "internal_error"
