"""The error responses every route can give, for the OpenAPI document (described from the one
table of error codes, `corrige.server.error_codes`)."""

from __future__ import annotations

from typing import Any

from corrige.server.error_codes import error_responses
from corrige.server.schemas import ErrorResponse

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = error_responses(ErrorResponse, (400, 408, 413, 422, 429, 503, 504))
PORTAL_ERROR_RESPONSES = error_responses(ErrorResponse, (400, 403, 404, 409, 422, 429, 503))
