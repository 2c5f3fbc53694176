"""Request and response models. Requests forbid unknown fields and are strict about types
(`"stream": "yes"` is a 422 naming `stream`, not a silent `True`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


# ---------------------------------------------------------------- errors


class ErrorDetail(BaseModel):
    code: str = Field(description="Stable machine-readable code; see the README's error table.")
    message: str = Field(description="What went wrong and what to change, for people.")
    request_id: str | None = Field(description="The request's id (also in the X-Request-ID header).")


class ErrorResponse(BaseModel):
    error: ErrorDetail


# ---------------------------------------------------------------- grammar API


class CorrectRequest(StrictModel):
    sentence: str = Field(description="One English sentence written by a learner.")
    stream: bool = Field(False, description="Answer as server-sent events: tokens as they decode, then the result.")
    rules: bool = Field(True, description="Include the rule cards that explain the edits (`rules` in the answer).")


class BatchCorrectRequest(StrictModel):
    sentences: list[str] = Field(min_length=1, description="Sentences to correct together (at most the server limit).")


class EditOut(BaseModel):
    start: int = Field(description="Character offset of the edit in `sentence`.")
    end: int
    original: str
    replacement: str
    category: str = Field(description="Error category id, e.g. `past_irregular`.")


class RuleExample(BaseModel):
    wrong: str
    right: str


class RuleOut(BaseModel):
    id: str = Field(description="Rule card id, e.g. `preposition_married_to`.")
    title: str
    category: str
    level: str = Field(description="CEFR level, A1-C1.")
    explanation: str = Field(description="The rule, briefly, in Spanish.")
    example: RuleExample
    score: float = Field(description="Retrieval score (reciprocal rank fusion of BM25 and the bi-encoder).")


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int


class CorrectionOut(BaseModel):
    sentence: str
    corrected: str
    changed: bool
    explanation: str = Field(description="Spanish gloss of the corrections (or why the tutor left the sentence as is).")
    abstained: bool = Field(description="The tutor was unsure and returned the sentence unchanged.")
    edits: list[EditOut]
    rules: list[RuleOut] = Field(
        default_factory=list, description="Rule cards behind the edits, best first (none for an unchanged sentence)."
    )
    usage: Usage
    timings_ms: dict[str, float] = Field(description="Milliseconds per stage of the pipeline.")


class CorrectResponse(CorrectionOut):
    request_id: str


class BatchCorrectResponse(BaseModel):
    request_id: str
    results: list[CorrectionOut]
    usage: Usage
    timings_ms: dict[str, float]


# ---------------------------------------------------------------- OpenAI-compatible API


class StreamOptions(StrictModel):
    include_usage: bool = False


class CompletionRequest(StrictModel):
    model: str
    prompt: str | list[int] = Field(description="Text (encoded after a <bos> token) or token ids, used as they are.")
    max_tokens: int | None = Field(None, ge=1)
    temperature: float = Field(1.0, ge=0.0, le=2.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    n: int = Field(1, ge=1, le=1, description="Only one choice per request.")
    stream: bool = False
    stream_options: StreamOptions | None = None
    # NumPy's generators take 0 <= seed; 2**63 keeps it a signed 64-bit integer, as OpenAI's is
    seed: int | None = Field(None, ge=0, lt=2**63)
    user: str | None = None


class TextPart(StrictModel):
    type: Literal["text"]
    text: str


class ChatMessage(StrictModel):
    role: Literal["system", "developer", "user", "assistant"]
    content: str | list[TextPart] | None = None
    name: str | None = None


class ChatCompletionRequest(StrictModel):
    model: str
    messages: list[ChatMessage] = Field(min_length=1)
    # Accepted for compatibility; the tutor always decodes greedily and writes a whole correction.
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    top_p: float | None = Field(None, gt=0.0, le=1.0)
    n: int = Field(1, ge=1, le=1, description="Only one choice per request.")
    stream: bool = False
    stream_options: StreamOptions | None = None
    seed: int | None = None
    user: str | None = None


class OpenAIUsage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class CompletionChoice(BaseModel):
    index: int
    text: str
    finish_reason: str | None
    logprobs: None = None


class CompletionResponse(BaseModel):
    id: str
    object: Literal["text_completion"] = "text_completion"
    created: int
    model: str
    choices: list[CompletionChoice]
    usage: OpenAIUsage


class AssistantMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str


class ChatChoice(BaseModel):
    index: int
    message: AssistantMessage
    finish_reason: str


class ChatCompletionResponse(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[ChatChoice]
    usage: OpenAIUsage


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "corrige"


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]
