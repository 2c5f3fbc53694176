"""LanguageTool's HTTP API: `POST /v2/check` and `GET /v2/languages` (corrige.server.languagetool)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request

from corrige.server.deps import ServiceDep, meta_of
from corrige.server.languagetool import CHECK_PATH, CheckForm, CheckResponse, LanguageEntry, check, languages

router = APIRouter(tags=["languagetool"])  # error responses: plain text, from the table of codes (openapi.py)


@router.post(CHECK_PATH, response_model=CheckResponse)
async def check_text(form: Annotated[CheckForm, Form()], service: ServiceDep, request: Request) -> CheckResponse:
    """Check an English text as LanguageTool's `POST /v2/check` does: form-encoded `text` (or `data`),
    `language`, `motherTongue` (`es`: messages in Spanish) and the rule filters; the tutor's edits
    as `matches`, with offsets in UTF-16 code units. Errors are plain text (`Error: …`)."""
    # FastAPI reads an empty field as absent; LanguageTool checks an empty text (no matches), and reads empty data
    raw = await request.form()
    if empty := {name: "" for name in ("text", "data") if getattr(form, name) is None and raw.get(name) == ""}:
        form = form.model_copy(update=empty)
    return await check(service, form, meta_of(request))


@router.get("/v2/languages", response_model=list[LanguageEntry])
async def list_languages() -> list[LanguageEntry]:
    """The languages `/v2/check` takes: the variants of English (and `auto` for an English text)."""
    return languages()
