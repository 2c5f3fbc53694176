"""The OpenAPI document, made to say what the server does.

FastAPI writes the paths and the request and response models; `install` completes that
document once per app, from the app itself:

* every operation's error responses come from the one table of codes (`error_codes.py`): the
  codes whose `where` names the operation or one of its traits, each status with the error
  model and its `code` narrowed to the codes that operation can answer with (LanguageTool's API,
  /v2/: its plain text, the code in a header; FastAPI's own
  422 model, which the server never sends, is dropped). Traits are read off the route (a POST
  body, parameters, learner text in the body, the dependencies it runs: the model, the portal,
  a CSRF-checked session) and off the middleware the app really has (the drain's open paths,
  the rate limits' route groups, the operator token's paths);
* learner text (`schemas.text_field`) gets the constraints the guards enforce: `minLength`,
  `maxLength` from the settings, and `pattern` (`guards.text_pattern`), so that a request valid
  against the document is never refused for its text; named limits (`schemas.limits`) get the
  settings' and the loaded model's values (the batch size, the window, the vocabulary);
* `x-corrige-unstated-codes` lists, per operation, the codes a request its schema allows may
  still get (conditions no JSON Schema states: the model's token window, what an exam holds).

The document is built on first use and kept once the model is loaded (its limits need it).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from fastapi import FastAPI
from fastapi import routing as fastapi_routing
from fastapi.routing import APIRoute

from corrige.obs.budget import BudgetError, budget_profiles
from corrige.server.deps import get_engine, get_service
from corrige.server.error_codes import BY_CODE, ErrorCode, codes_of, unstated_codes
from corrige.server.guards import DrainMiddleware, RateLimitMiddleware, text_pattern
from corrige.server.languagetool import CODE_HEADER
from corrige.server.languagetool import PREFIX as PLAIN_TEXT_PREFIX
from corrige.server.operator import OperatorAuthMiddleware
from corrige.server.routes.portal import api_session, get_portal
from corrige.server.schemas import LIMITS, TEXT, ErrorResponse
from corrige.server.settings import Settings
from corrige.tutor.text import MAX_TEXT_CHARS

UNSTATED = "x-corrige-unstated-codes"
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
REF = "#/components/schemas/{model}"
# the traits of the dependencies a route runs (what they can refuse with: error_codes.py's `where`)
DEPENDENCY_TRAITS = {
    get_service: ("model", "loaded"),
    get_engine: ("loaded",),
    get_portal: ("portal",),
    api_session: ("csrf",),
}


def install(app: FastAPI) -> None:
    """Replace `app.openapi` with the completed document."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        done = getattr(app.state, "openapi_document", None)
        if done is not None:
            return done
        document = complete(copy.deepcopy(build()), app)
        if getattr(app.state, "tutor", None) is not None:  # the model's limits are in: keep it
            app.state.openapi_document = document
        return document

    app.openapi = openapi  # type: ignore[method-assign]


def complete(document: dict[str, Any], app: FastAPI) -> dict[str, Any]:
    settings: Settings = app.state.settings
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    error_schema = ErrorResponse.model_json_schema(ref_template=REF)
    schemas.update(error_schema.pop("$defs", {}))
    schemas["ErrorResponse"] = error_schema
    schemas["ErrorDetail"]["properties"]["code"]["enum"] = sorted(BY_CODE)
    named = named_limits(app, settings)
    for node in walk(document):
        if TEXT in node:
            node.update(text_constraints(node[TEXT], settings))
        for keyword, name in node.pop(LIMITS, {}).items():
            if named.get(name) is not None:
                node[keyword] = named[name]
    middleware = {m.cls: m.kwargs for m in app.user_middleware}
    admission = getattr(app.state, "admission", None)
    work_budget = admission is not None and admission.budget is not None
    for route in api_routes(app):
        for method in route.methods:
            operation = document["paths"].get(route.path_format, {}).get(method.lower())
            if operation is not None:
                describe_errors(operation, route, method, middleware, schemas, work_budget)
    for unused in ("HTTPValidationError", "ValidationError"):  # FastAPI's 422 model, never sent
        schemas.pop(unused, None)
    return document


def text_constraints(kind: str, settings: Settings) -> dict[str, Any]:
    """What the guards enforce on learner text of each kind (`check_text`, the length and blank checks)."""
    most = settings.max_sentence_chars
    if kind == "sentence":  # the tutor's input: service.py's _guard
        return {"minLength": 1, "maxLength": most, "pattern": text_pattern(nonblank=True)}
    if kind == "text":  # a whole text: corrige.tutor.text (more than MAX_TEXT_CHARS: 413 text_too_long)
        return {"minLength": 1, "maxLength": MAX_TEXT_CHARS, "pattern": text_pattern(nonblank=True)}
    if kind == "answer":  # a quiz or exam answer: routes/portal/answers.py's submit_answer
        return {"minLength": 1, "maxLength": most, "pattern": text_pattern(nonblank=True)}
    if kind == "prompt":  # /v1/completions' text prompt: service.py's raw_prompt
        return {"minLength": 1, "pattern": text_pattern()}
    if kind == "query":  # /v1/tools/rules
        return {"pattern": text_pattern()}
    raise ValueError(f"unknown kind of text {kind!r}")


def named_limits(app: FastAPI, settings: Settings) -> dict[str, Any]:
    """The values of `schemas.limits`' names: settings, and the model's window and vocabulary once loaded."""
    found: dict[str, Any] = {"max_batch_sentences": settings.max_batch_sentences, "model_names": [settings.model_name]}
    tutor = getattr(app.state, "tutor", None)
    if tutor is not None:
        n_ctx = tutor.n_ctx
        found["max_prompt_tokens"] = n_ctx - 1  # room for one token more
        found["max_new_tokens"] = min(settings.max_completion_tokens, n_ctx - 1)
        found["max_token_id"] = tutor.cfg.vocab_size - 1
    try:  # an empty `profile=` is the file's default, as an absent one
        found["budget_profiles"] = ["", *budget_profiles(settings.budget_file)]
    except BudgetError:
        pass  # any name then: an unreadable file is a 500 bad_budget whatever is asked
    return found


def walk(node: Any) -> Iterator[dict[str, Any]]:
    """Every object of a JSON document, depth first."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


def api_routes(app: FastAPI) -> Iterator[Any]:
    """The app's routes in the document, with their paths as included (FastAPI nests included routers)."""
    contexts = getattr(fastapi_routing, "iter_route_contexts", None)
    for route in contexts(app.routes) if contexts is not None else app.routes:
        if isinstance(getattr(route, "original_route", route), APIRoute) and route.include_in_schema:
            yield route


def dependency_calls(dependant: Any) -> Iterator[Any]:
    for sub in dependant.dependencies:
        yield sub.call
        yield from dependency_calls(sub)


def text_kinds(operation: dict[str, Any], schemas: dict[str, Any]) -> set[str]:
    """The kinds of learner text in an operation's request body (following `$ref`s)."""
    kinds: set[str] = set()
    seen: set[str] = set()
    stack: list[Any] = [operation.get("requestBody", {})]
    while stack:
        for node in walk(stack.pop()):
            if TEXT in node:
                kinds.add(node[TEXT])
            ref = node.get("$ref")
            if isinstance(ref, str) and ref not in seen:
                seen.add(ref)
                stack.append(schemas.get(ref.rsplit("/", 1)[-1], {}))
    return kinds


def traits_of(
    route: Any,
    method: str,
    operation: dict[str, Any],
    middleware: dict[Any, dict],
    schemas: dict[str, Any],
    work_budget: bool = False,
) -> frozenset[str]:
    """The traits `error_codes.py`'s `where` names, for one operation of the app (`work_budget`: the
    app limits each client's work for the model, `corrige.server.admission`)."""
    path = route.path_format
    traits = {"any"}
    if method in BODY_METHODS:
        traits.add("body")
    if operation.get("parameters") or operation.get("requestBody"):
        traits.add("params")
    kinds = text_kinds(operation, schemas)
    if kinds:
        traits |= {"text", *(f"text:{kind}" for kind in kinds)}
    for call in dependency_calls(route.dependant):
        traits.update(DEPENDENCY_TRAITS.get(call, ()))
    if work_budget and "model" in traits and method == "POST":  # get_service's check
        traits.add("work_limited")
    drain = middleware.get(DrainMiddleware)
    if drain is not None and path not in drain["always_open"]:
        traits.add("drained")
    limits = middleware.get(RateLimitMiddleware)
    scope = {"type": "http", "method": method, "path": path, "headers": []}
    if limits is not None and any(group.applies(scope) for group in limits["limits"]):
        traits.add("rate_limited")
    operator = middleware.get(OperatorAuthMiddleware)
    if operator is not None and path in operator["paths"]:
        traits.add("operator")
    return frozenset(traits)


def describe_errors(
    operation: dict[str, Any],
    route: Any,
    method: str,
    middleware: dict[Any, dict],
    schemas: dict[str, Any],
    work_budget: bool = False,
) -> None:
    """The operation's error responses from the table, and the codes its schema does not state."""
    key = f"{method} {route.path_format}"
    traits = traits_of(route, method, operation, middleware, schemas, work_budget)
    responses = operation.setdefault("responses", {})
    for status in [s for s in responses if not s.startswith(("1", "2", "3"))]:
        del responses[status]
    by_status: dict[int, list[ErrorCode]] = {}
    for entry in codes_of(key, traits):
        assert entry.status is not None
        by_status.setdefault(entry.status, []).append(entry)
    plain = route.path_format.startswith(PLAIN_TEXT_PREFIX)
    for status, entries in sorted(by_status.items()):
        responses[str(status)] = plain_error_response(entries) if plain else error_response(entries)
    if unstated := unstated_codes(key, traits):
        operation[UNSTATED] = unstated


def code_list(entries: list[ErrorCode]) -> str:
    return "\n".join(f"- `{e.code}`: {e.when.replace(chr(92) + '|', '|')}" for e in entries)  # no table: no \\|


def plain_error_response(entries: list[ErrorCode]) -> dict[str, Any]:
    """LanguageTool's API: its plain-text `Error: …`, the table's code in a header."""
    description = f"LanguageTool's plain-text error; `{CODE_HEADER}` is one of:\n\n" + code_list(entries)
    schema = {"type": "string", "pattern": "^Error: "}
    header = {"schema": {"type": "string", "enum": [e.code for e in entries]}}
    return {"description": description, "headers": {CODE_HEADER: header}, "content": {"text/plain": {"schema": schema}}}


def error_response(entries: list[ErrorCode]) -> dict[str, Any]:
    """One status's response: the error model with `code` narrowed to these codes, each described."""
    codes = [e.code for e in entries]
    narrowed = {"properties": {"error": {"properties": {"code": {"enum": codes}}}}}
    schema = {"allOf": [{"$ref": REF.format(model="ErrorResponse")}, narrowed]}
    description = "Error model; `code` is one of:\n\n" + code_list(entries)
    return {"description": description, "content": {"application/json": {"schema": schema}}}
