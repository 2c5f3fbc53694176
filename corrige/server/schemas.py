"""Request and response models. Requests forbid unknown fields and are strict about types
(`"stream": "yes"` is a 422 naming `stream`, not a silent `True`; an integer may be written
`4.0`, as JSON Schema counts it an integer, but never `"4"` or `true`).

Learner text is marked with its kind (`text_field`) and bounds that depend on the server's
settings or model with the setting's name (`limits`); the OpenAPI document turns both into the
constraints the server enforces (corrige.server.openapi).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

TEXT = "x-corrige-text"  # the kind of learner text a string holds: sentence, answer, prompt, query
LIMITS = "x-corrige-limits"  # JSON Schema keywords whose values are named limits of the server


def text_field(kind: str, **kwargs: Any) -> Any:
    """A string field holding learner text of `kind`, checked by the guards (`check_text`)."""
    return Field(json_schema_extra={TEXT: kind}, **kwargs)


def limits(**keywords: Any) -> dict[str, Any]:
    """`json_schema_extra` for keywords whose value is a named limit (`maxItems="max_batch_sentences"`)."""
    return {LIMITS: keywords}


def _integral(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


# an integer of a strict model that also takes 4.0 (an integer to JSON Schema), never "4" or true; with
# bounds, `Annotated[int, Field(ge=1), INTEGRAL]` (after the bounds, or an optional one's schema loses them)
INTEGRAL = BeforeValidator(_integral)
JsonInt = Annotated[int, INTEGRAL]
MAX_JSON_INT = 2**53 - 1  # the largest integer every JSON reader holds exactly (I-JSON, RFC 7493)
SentenceText = Annotated[str, text_field("sentence")]
# a token id: the engine refuses those outside the vocabulary (422 invalid_request)
TokenId = Annotated[JsonInt, Field(json_schema_extra={"minimum": 0, **limits(maximum="max_token_id")})]


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


# ---------------------------------------------------------------- errors


class ErrorDetail(BaseModel):
    code: str = Field(description="Stable machine-readable code; see docs/api.md's error table.")
    message: str = Field(description="What went wrong and what to change, for people.")
    request_id: str | None = Field(description="The request's id (also in the X-Request-ID header).")


class ErrorResponse(BaseModel):
    error: ErrorDetail


# ---------------------------------------------------------------- grammar API


INPUTS = ("sentence", "text")  # a correction request holds exactly one of them


def _one_input_schema(schema: dict[str, Any]) -> None:
    """Each input a string when sent (never null), and exactly one of them sent; an example of each."""
    for name in INPUTS:
        schema["properties"][name].pop("default", None)
    schema["oneOf"] = [{"required": [name]} for name in INPUTS]
    # what /docs shows as the example body: left to itself it fills both inputs from their pattern
    schema["examples"] = [
        {"sentence": "Yesterday I goed to the store"},
        {"text": "Dear Ana,\nYesterday I goed to the store. My sister have two cats."},
    ]


def _input_error(loc: str, kind: str, message: str, data: Any) -> ValidationError:
    error = InitErrorDetails(type=PydanticCustomError(kind, message), loc=(loc,), input=data)
    return ValidationError.from_exception_data("CorrectRequest", [error])


class CorrectRequest(StrictModel):
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra=_one_input_schema)

    # absent is None; sent, each must be a string (`"sentence": null` is a 422 naming `sentence`)
    sentence: str = text_field("sentence", default=None, description="One English sentence written by a learner.")
    text: str = text_field(
        "text",
        default=None,
        description="A whole text (an email, an essay): split into sentences, each corrected; edits come back "
        "as offsets into the text as sent.",
    )
    stream: bool = Field(False, description="Answer as server-sent events: tokens as they decode, then the result.")
    rules: bool = Field(True, description="Include the rule cards that explain the edits (`rules` in the answer).")

    @model_validator(mode="before")
    @classmethod
    def _one_input(cls, data: Any) -> Any:
        """Both or neither: 422 naming `sentence` (neither) or `text` (both); a wrong type names its field."""
        if isinstance(data, dict):
            sent = [name for name in INPUTS if name in data]
            if len(sent) != 1:
                message = "send exactly one of `sentence` and `text`" + (", not both" if sent else "")
                raise _input_error("text" if sent else "sentence", "one_input", message, data)
        return data


class BatchCorrectRequest(StrictModel):
    sentences: list[SentenceText] = Field(
        min_length=1,
        description="Sentences to correct together (at most the server limit).",
        json_schema_extra=limits(maxItems="max_batch_sentences"),
    )


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
    more_errors: bool = Field(
        False,
        description="The tutor made corrections but more errors may remain (it was unsure of another change, or "
        "a fix needs one it did not make): show «puede haber más errores en esta frase».",
    )
    edits: list[EditOut]
    rules: list[RuleOut] = Field(
        default_factory=list, description="Rule cards behind the edits, best first (none for an unchanged sentence)."
    )
    usage: Usage
    timings_ms: dict[str, float] = Field(description="Milliseconds per stage of the pipeline.")


class CorrectResponse(CorrectionOut):
    request_id: str


class TextEditOut(BaseModel):
    offset: int = Field(description="Character offset of the edit in `text` (as sent: line breaks and spaces kept).")
    length: int = Field(description="`text[offset:offset + length]` is `original`.")
    original: str
    replacement: str
    category: str = Field(description="Error category id, e.g. `past_irregular`.")
    gloss: str = Field(description="The Spanish gloss item that explains it, e.g. `pasado irregular: goed → went`.")
    sentence: int = Field(description="Index of its sentence in `sentences`.")


class SentenceOut(BaseModel):
    index: int
    offset: int = Field(description="Character offset of the sentence in `text`.")
    length: int
    sentence: str = Field(description="`text[offset:offset + length]`.")
    corrected: str
    status: Literal["corrected", "unchanged", "abstained", "too_long", "skipped"] = Field(
        description="`too_long`: a part too long for the model's window with no clause boundary left, passed "
        "through; `skipped`: not sent to the model (`reason`: `no_words`, `not_english`, `mixed_scripts`, "
        "`signature`: the text's last line when it is only a name, or `greeting`: a greeting or sign-off standing "
        "alone, such as `Hi Ana,` or `Best wishes,`)."
    )
    reason: str | None = Field(None, description="Why skipped, abstained or too long.")
    language: str | None = Field(None, description="Skipped as not English: the language (`es`) or script, if told.")
    explanation: str = Field(description="Spanish gloss of the sentence's corrections.")
    more_errors: bool = Field(False, description="As a sentence's `more_errors`: more errors may remain in it.")
    parts: int = Field(description="Pieces the model read (more than 1: cut at clause boundaries).")
    edits: list[TextEditOut]
    rules: list[RuleOut] = Field(default_factory=list)


class TextCorrectResponse(BaseModel):
    request_id: str
    text: str
    corrected: str = Field(description="`text` with every edit applied.")
    changed: bool
    sentences: list[SentenceOut]
    edits: list[TextEditOut] = Field(description="Every sentence's edits, in the order of the text.")
    usage: Usage
    timings_ms: dict[str, float]


class BatchCorrectResponse(BaseModel):
    request_id: str
    results: list[CorrectionOut]
    usage: Usage
    timings_ms: dict[str, float]


# ---------------------------------------------------------------- OpenAI-compatible API


class StreamOptions(StrictModel):
    include_usage: bool = False


# the one model a server serves (another name: 404 model_not_found)
MODEL_FIELD: Any = Field(
    description="The served model's id (`GET /v1/models`).", json_schema_extra=limits(enum="model_names")
)


class CompletionRequest(StrictModel):
    model: str = MODEL_FIELD
    prompt: (
        Annotated[str, text_field("prompt")]
        | Annotated[list[TokenId], Field(json_schema_extra={"minItems": 1, **limits(maxItems="max_prompt_tokens")})]
    ) = Field(description="Text (encoded after a <bos> token) or token ids, used as they are.")
    max_tokens: Annotated[int, Field(ge=0), INTEGRAL] | None = Field(
        None,
        json_schema_extra=limits(maximum="max_new_tokens"),
        description="0: nothing is generated (with echo and logprobs: the prompt is scored).",
    )
    temperature: float = Field(1.0, ge=0.0, le=2.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    n: JsonInt = Field(1, ge=1, le=1, description="Only one choice per request.")
    stream: bool = False
    stream_options: StreamOptions | None = None
    echo: bool = Field(False, description="Return the prompt before the completion (with logprobs: scored).")
    logprobs: JsonInt | None = Field(
        None,
        ge=0,
        le=0,
        description="0: each token's log-probability given the tokens before it (alternatives are not returned).",
    )
    # NumPy's generators take 0 <= seed; at most 2**53 - 1, the integers JSON carries exactly (RFC 7493):
    # past it a client's (or a validator's) double rounds the seed, and 2**63 + 190 reads as 2**63
    seed: Annotated[int, Field(ge=0, le=MAX_JSON_INT), INTEGRAL] | None = None
    user: str | None = None


class TextPart(StrictModel):
    type: Literal["text"]
    text: str


class ChatMessage(StrictModel):
    role: Literal["system", "developer", "user", "assistant"]
    content: str | list[TextPart] | None = None
    name: str | None = None


class ChatCompletionRequest(StrictModel):
    model: str = MODEL_FIELD
    # the last `user` message goes to the tutor: without one, 422 validation_error
    messages: list[ChatMessage] = Field(
        min_length=1, json_schema_extra={"contains": {"type": "object", "properties": {"role": {"const": "user"}}}}
    )
    # Accepted for compatibility; the tutor always decodes greedily and writes a whole correction.
    max_tokens: Annotated[int, Field(ge=1), INTEGRAL] | None = None
    max_completion_tokens: Annotated[int, Field(ge=1), INTEGRAL] | None = None
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    top_p: float | None = Field(None, gt=0.0, le=1.0)
    n: JsonInt = Field(1, ge=1, le=1, description="Only one choice per request.")
    stream: bool = False
    stream_options: StreamOptions | None = None
    seed: JsonInt | None = None
    user: str | None = None


class OpenAIUsage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class CompletionLogprobs(BaseModel):
    """Each token of the choice's text, its log-probability given the tokens before it (null for
    the prompt's first token), and where it starts in the text; no alternatives (`top_logprobs`)."""

    tokens: list[str]
    token_logprobs: list[float | None]
    top_logprobs: None = None
    text_offset: list[int]


class CompletionChoice(BaseModel):
    index: int
    text: str
    finish_reason: str | None
    logprobs: CompletionLogprobs | None = None


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
