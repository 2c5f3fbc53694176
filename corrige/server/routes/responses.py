"""The error responses every route can give, for the OpenAPI document."""

from __future__ import annotations

from typing import Any

from corrige.server.schemas import ErrorResponse

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "Invalid JSON or encoding, control characters, injection attempt"},
    413: {"model": ErrorResponse, "description": "Body larger than the limit"},
    422: {"model": ErrorResponse, "description": "Unknown field, wrong type, empty or too long sentence"},
    429: {"model": ErrorResponse, "description": "Rate limited (see Retry-After)"},
    503: {"model": ErrorResponse, "description": "Overloaded, draining or not ready (see Retry-After)"},
    504: {"model": ErrorResponse, "description": "Waited too long for the model"},
}
