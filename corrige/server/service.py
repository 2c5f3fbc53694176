"""The correction pipeline, one explicit stage at a time:

    validate (pydantic, before the handler) → guards → tokenize → engine (queue, prefill,
    decode) → format (`Tutor.interpret`) → response

Each stage is timed with `time.perf_counter` into `timings_ms`; `ingress` is the time from
the first byte of the request reaching the app to the handler (body read, JSON parsing,
validation, middleware guards). Stage boundaries are kept explicit here so tracing spans can
hang on them. Routes stay thin: they call these methods and return what they give.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

from corrige.engine import Engine, EngineError, FinishReason, RequestOutput, RequestStream, SamplingParams
from corrige.server.errors import ApiError, error_body, from_engine_error, from_prompt_too_long
from corrige.server.guards import check_text
from corrige.server.schemas import BatchCorrectResponse, CorrectionOut, CorrectResponse, EditOut, Usage
from corrige.server.settings import Settings
from corrige.server.sse import IncrementalDecoder, event
from corrige.tutor.agent import Correction, Tutor
from corrige.tutor.codec import PromptTooLong

logger = logging.getLogger(__name__)

STAGES = ("ingress", "guards", "tokenize", "queue", "prefill", "decode", "engine", "format", "total")


def _ms(seconds: float | None) -> float:
    return round(1000.0 * (seconds or 0.0), 3)


@dataclass(slots=True)
class Prepared:
    """A sentence that passed the guards, as a prompt ready for the engine."""

    sentence: str
    prompt: list[int]
    params: SamplingParams
    timings_ms: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class RawGeneration:
    """A `/v1/completions` result: text, token counts, why it stopped."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str


class CorrectionService:
    """Sentences in, `CorrectResponse`s out, through the batching engine."""

    def __init__(self, tutor: Tutor, engine: Engine, settings: Settings) -> None:
        self.tutor = tutor
        self.engine = engine
        self.settings = settings
        self.eos = tutor.tokenizer.special.eos
        self._ids = itertools.count()

    # ---- stages ----

    def prepare(self, sentence: str, field_name: str = "sentence", received_at: float | None = None) -> Prepared:
        """Guards, then tokenize. Raises `ApiError` (400 / 422) for input the tutor must not take.
        `received_at` (when the request arrived) closes the `ingress` stage."""
        start = time.perf_counter()
        ingress = {} if received_at is None else {"ingress": _ms(start - received_at)}
        if not sentence.strip():
            raise ApiError(422, "empty_sentence", f"{field_name}: the sentence is empty; send an English sentence")
        if len(sentence) > self.settings.max_sentence_chars:
            raise ApiError(
                422,
                "prompt_too_long",
                f"{field_name}: the sentence has {len(sentence)} characters; "
                f"at most {self.settings.max_sentence_chars} are accepted",
            )
        check_text(sentence, field_name)
        guarded = time.perf_counter()
        try:
            prompt = self.tutor.build_prompt(sentence)
        except PromptTooLong as exc:
            raise from_prompt_too_long(exc, field_name) from None
        tokenized = time.perf_counter()
        timings = {**ingress, "guards": _ms(guarded - start), "tokenize": _ms(tokenized - guarded)}
        return Prepared(sentence, prompt, self.params_for(prompt), timings)

    def params_for(self, prompt: list[int]) -> SamplingParams:
        """Greedy, up to the tutor's answer budget, stopping at eos, with each token's log-probability
        (the tutor abstains when it was unsure of one)."""
        max_tokens = self.tutor.max_new_tokens_for(len(prompt))
        return SamplingParams(max_tokens=max_tokens, stop_token_ids=(self.eos,), logprobs=True)

    async def generate(self, prepared: Prepared, request_id: str) -> RequestOutput:
        """The engine stage: wait for a slot, prefill, decode. Engine refusals become `ApiError`s."""
        start = time.perf_counter()
        try:
            engine_id = self._engine_id(request_id)
            output = await self.engine.generate(prepared.prompt, prepared.params, request_id=engine_id)
        except EngineError as exc:
            raise from_engine_error(exc, self.settings.retry_after_s) from None
        self._record_engine(prepared, output, time.perf_counter() - start)
        return output

    def open_stream(self, prepared: Prepared, request_id: str) -> RequestStream:
        """Submit for streaming; raises at once (`ApiError`) when the engine refuses the request."""
        try:
            return self.engine.stream(prepared.prompt, prepared.params, request_id=self._engine_id(request_id))
        except EngineError as exc:
            raise from_engine_error(exc, self.settings.retry_after_s) from None

    def format(self, prepared: Prepared, output: RequestOutput) -> Correction:
        """The tutor reads the tokens back into a correction, abstaining when the model was unsure."""
        start = time.perf_counter()
        correction = self.tutor.interpret(
            prepared.sentence, output.token_ids, output.logprobs or [], len(prepared.prompt)
        )
        prepared.timings_ms["format"] = _ms(time.perf_counter() - start)
        return correction

    @staticmethod
    def result(prepared: Prepared, c: Correction, received_at: float | None = None) -> dict:
        """The response fields of one correction; `received_at` closes the `total` stage."""
        timings = prepared.timings_ms
        if received_at is not None:
            timings["total"] = _ms(time.perf_counter() - received_at)
        return {
            "sentence": c.sentence,
            "corrected": c.corrected,
            "changed": c.changed,
            "explanation": c.gloss,
            "abstained": c.abstained,
            "edits": [
                EditOut(start=e.start, end=e.end, original=e.original, replacement=e.replacement, category=e.category)
                for e in c.edits
            ],
            "usage": Usage(prompt_tokens=c.prompt_tokens, completion_tokens=c.completion_tokens),
            "timings_ms": {stage: timings[stage] for stage in STAGES if stage in timings},
        }

    # ---- whole requests ----

    async def correct(self, sentence: str, request_id: str, received_at: float) -> CorrectResponse:
        prepared = self.prepare(sentence, received_at=received_at)
        output = await self.generate(prepared, request_id)
        correction = self.format(prepared, output)
        return CorrectResponse(request_id=request_id, **self.result(prepared, correction, received_at))

    async def correct_batch(
        self, sentences: Sequence[str], request_id: str, received_at: float
    ) -> BatchCorrectResponse:
        """All sentences go to the engine at once (it batches them); any refusal fails the whole batch."""
        limit = self.settings.max_batch_sentences
        if len(sentences) > limit:
            raise ApiError(422, "batch_too_large", f"sentences: {len(sentences)} sentences; at most {limit} per batch")
        ingress = _ms(time.perf_counter() - received_at)
        prepared = [self.prepare(s, f"sentences[{i}]") for i, s in enumerate(sentences)]
        start = time.perf_counter()
        tasks = [asyncio.ensure_future(self.generate(p, request_id)) for p in prepared]
        try:
            outputs = await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:  # cancelling aborts their engine requests
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        engine_ms = _ms(time.perf_counter() - start)
        format_start = time.perf_counter()
        results = [CorrectionOut(**self.result(p, self.format(p, o))) for p, o in zip(prepared, outputs, strict=True)]
        timings = {
            "ingress": ingress,
            "guards": round(sum(p.timings_ms["guards"] for p in prepared), 3),
            "tokenize": round(sum(p.timings_ms["tokenize"] for p in prepared), 3),
            "engine": engine_ms,
            "format": _ms(time.perf_counter() - format_start),
            "total": _ms(time.perf_counter() - received_at),
        }
        usage = Usage(
            prompt_tokens=sum(r.usage.prompt_tokens for r in results),
            completion_tokens=sum(r.usage.completion_tokens for r in results),
        )
        return BatchCorrectResponse(request_id=request_id, results=results, usage=usage, timings_ms=timings)

    async def correct_events(
        self, prepared: Prepared, stream: RequestStream, request_id: str, received_at: float
    ) -> AsyncIterator[bytes]:
        """SSE for one correction: `token` events (whole characters) as the model decodes, then one
        `result` event with the full `CorrectResponse`, or an `error` event."""
        decoder = IncrementalDecoder(self.tutor.tokenizer)
        start = time.perf_counter()
        try:
            async for token in stream:
                piece = decoder.push(token.token_id)
                if piece:
                    yield event({"index": token.index, "text": piece}, "token")
            output = stream.output
            assert output is not None
            rest = decoder.flush()
            if rest:
                yield event({"index": len(output.token_ids) - 1, "text": rest}, "token")
            self._record_engine(prepared, output, time.perf_counter() - start)
            correction = self.format(prepared, output)
            response = CorrectResponse(request_id=request_id, **self.result(prepared, correction, received_at))
            yield event(response.model_dump_json(), "result")
        except EngineError as exc:
            error = from_engine_error(exc, self.settings.retry_after_s)
            yield event(error_body(error.code, error.message, request_id), "error")
        finally:
            await stream.aclose()  # aborts the request if the client went away mid-stream

    # ---- the raw model (/v1/completions) ----

    def raw_prompt(
        self, prompt: str | list[int], max_tokens: int | None, **sampling: float | int | None
    ) -> tuple[list[int], SamplingParams]:
        """Token ids and sampling parameters for a raw completion; text is guarded and follows a <bos>."""
        if isinstance(prompt, str):
            if not prompt:
                raise ApiError(422, "empty_prompt", "prompt: the prompt is empty")
            check_text(prompt, "prompt", tutor_format=False)
            ids = [self.tutor.tokenizer.special.bos, *self.tutor.tokenizer.encode(prompt)]
        else:
            ids = list(prompt)
        limit = self.settings.max_completion_tokens
        if max_tokens is not None and max_tokens > limit:
            raise ApiError(422, "validation_error", f"max_tokens: at most {limit}")
        max_tokens = max_tokens or min(16, max(self.tutor.n_ctx - len(ids), 1))
        params = SamplingParams(max_tokens=max_tokens, stop_token_ids=(self.eos,), **sampling)
        return ids, params

    async def complete_raw(self, ids: list[int], params: SamplingParams, request_id: str) -> RawGeneration:
        try:
            output = await self.engine.generate(ids, params, request_id=self._engine_id(request_id))
        except EngineError as exc:
            raise from_engine_error(exc, self.settings.retry_after_s) from None
        return RawGeneration(
            text=self.tutor.tokenizer.decode(output.token_ids),
            prompt_tokens=len(ids),
            completion_tokens=len(output.token_ids),
            finish_reason=finish_reason(output),
        )

    def open_raw_stream(self, ids: list[int], params: SamplingParams, request_id: str) -> RequestStream:
        try:
            return self.engine.stream(ids, params, request_id=self._engine_id(request_id))
        except EngineError as exc:
            raise from_engine_error(exc, self.settings.retry_after_s) from None

    # ---- helpers ----

    def _engine_id(self, request_id: str) -> str:
        # unique even when a client reuses an X-Request-ID, or a batch sends several sentences
        return f"{request_id}#{next(self._ids)}"

    @staticmethod
    def _record_engine(prepared: Prepared, output: RequestOutput, engine_s: float) -> None:
        stats = output.stats
        prepared.timings_ms.update(
            queue=_ms(stats.queue_s), prefill=_ms(stats.prefill_s), decode=_ms(stats.decode_s), engine=_ms(engine_s)
        )


def finish_reason(output: RequestOutput) -> str:
    """OpenAI's wording: "stop" at the end-of-text token, "length" at the token limit."""
    return "stop" if output.finish_reason is FinishReason.STOP else "length"
