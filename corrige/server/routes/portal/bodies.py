"""The bodies of the portal's form posts and JSON API, the bounds of the ids in its paths, and the
links between its operations."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Path as PathParam
from pydantic import BaseModel, ConfigDict, Field

from corrige.server.schemas import text_field

MAX_ID = 2**63 - 1  # SQLite's largest integer: a larger id would overflow the query, not just miss

# every id in a path is bounded: out of range is a 422 (the API) or a page saying there is no such page
ExamId = Annotated[int, PathParam(ge=1, le=MAX_ID, description="The exam's id.")]
SubmissionId = Annotated[int, PathParam(ge=1, le=MAX_ID)]


def response_links(**links: dict[str, Any]) -> dict[int | str, dict[str, Any]]:
    """An operation's OpenAPI links (`responses=`): how a client, and schemathesis' stateful phase,
    goes on from its 200 response to the operations named, with the ids that response carries."""
    return {200: {"links": links}}


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class SentenceBody(Strict):
    sentence: str = text_field("sentence", description="An English sentence to correct.")


class TextBody(Strict):
    text: str = text_field("text", description="An English text (an email, a letter): up to 5,000 characters.")


class TextForm(Strict):
    """The tutor page's form: a text to correct, or (`accept=all`) the corrected text to put back in the box."""

    text: str = text_field("text")
    accept: Literal["all"] | None = None


class AnswerBody(Strict):
    question_id: str = Field(max_length=32, description="The question's id (`q123`).")
    answer: str = text_field("answer", description="The learner's corrected sentence.")
