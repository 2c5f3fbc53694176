"""Schemathesis hooks for `corrige bench fuzz` (loaded by its subprocess through `SCHEMATHESIS_HOOKS`).

One check, `positive_data_acceptance_stated`, stands in for schemathesis' own
`positive_data_acceptance` (the runs exclude that one): a request valid against its schema must
be accepted, except with a code that the operation's `x-corrige-unstated-codes` lists: a
refusal the document declares no JSON Schema can state (a sentence too long for the model's
token window, a question that is not in the exam). Any other refusal of a valid request fails
as before, with the same failure type.
"""

from __future__ import annotations

from typing import Any

import schemathesis
from schemathesis.openapi.checks import RejectedPositiveData
from schemathesis.specs.openapi.checks import positive_data_acceptance

UNSTATED = "x-corrige-unstated-codes"  # as corrige.server.openapi writes it


CODE_HEADER = "X-Corrige-Error-Code"  # LanguageTool's API (/v2/) answers in plain text, the code in this header


def error_code(response: Any) -> str | None:
    try:
        return response.json()["error"]["code"]
    except (ValueError, KeyError, TypeError):
        values = response.headers.get(CODE_HEADER.lower())  # schemathesis: lower-case names, lists of values
        return values[0] if values else None


@schemathesis.check
def positive_data_acceptance_stated(ctx: Any, response: Any, case: Any) -> bool | None:
    try:
        return positive_data_acceptance(ctx, response, case)
    except RejectedPositiveData:
        unstated = (case.operation.definition.raw or {}).get(UNSTATED, [])
        if error_code(response) in unstated:
            return None
        raise
