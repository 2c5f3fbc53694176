"""Whole requests through the correction pipeline (`corrige.server.pipeline`): one sentence,
streamed or not, a batch, a chat message, and the raw model of `/v1/completions`.

Every route that corrects goes through `CorrectionPipeline`'s stages (validate, guard, tokenize,
engine, format, rules, respond), each timed into `timings_ms` (`ingress`: the time from the first
byte of the request reaching the app to the sentence's first stage) and, when the request is
traced, written as its span by the pipeline's observer (`corrige.server.stage_spans.StageSpans`).
Routes stay thin: they call these methods and return what they give.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass

from fastapi.responses import Response

from corrige.engine import Engine, FinishReason, RequestOutput, SamplingParams
from corrige.server.admission import Admission
from corrige.server.answer_cache import AnswerCache
from corrige.server.context import RequestMeta
from corrige.server.errors import ApiError, error_body
from corrige.server.guards import check_text
from corrige.server.pipeline import CorrectionPipeline, HeldStream, Options, RequestRun, SentenceRun, ms
from corrige.server.schemas import (
    BatchCorrectResponse,
    CompletionLogprobs,
    CorrectionOut,
    CorrectResponse,
    EditOut,
    RuleOut,
    Usage,
)
from corrige.server.settings import Settings
from corrige.server.sse import event
from corrige.server.stage_spans import StageSpans
from corrige.tutor.agent import Correction, TutorFront
from corrige.tutor.language import foreign_language, not_english_message
from corrige.tutor.retrieval import RuleHit
from corrige.tutor.rule_lookup import RuleLookup

STAGES = ("ingress", "guards", "tokenize", "queue", "prefill", "decode", "engine", "format", "rules", "total")
JSON = "application/json"


@dataclass(slots=True)
class RawGeneration:
    """A `/v1/completions` result: text, token counts, why it stopped, and the tokens'
    log-probabilities when they were asked for."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    logprobs: CompletionLogprobs | None = None


@dataclass(frozen=True, slots=True)
class RawOptions:
    """What a raw completion returns besides its new text: the prompt before it (`echo`), the
    tokens' log-probabilities (`logprobs`), and whether it generates at all (max_tokens 0 with
    echo: the prompt is only scored)."""

    echo: bool = False
    logprobs: bool = False
    score_only: bool = False


def result(
    sentence: SentenceRun, c: Correction, rules: Sequence[RuleHit] = (), received_at: float | None = None
) -> dict:
    """The response fields of one correction; `received_at` closes the `total` stage."""
    timings = sentence.timings_ms
    if received_at is not None:
        timings["total"] = ms(time.perf_counter() - received_at)
    return {
        "sentence": c.sentence,
        "corrected": c.corrected,
        "changed": c.changed,
        "explanation": c.gloss,
        "abstained": c.abstained,
        "more_errors": c.more_errors,
        "edits": [
            EditOut(start=e.start, end=e.end, original=e.original, replacement=e.replacement, category=e.category)
            for e in c.edits
        ],
        "rules": [RuleOut(**h.summary()) for h in rules],
        "usage": Usage(prompt_tokens=c.prompt_tokens, completion_tokens=c.completion_tokens),
        "timings_ms": {stage: timings[stage] for stage in STAGES if stage in timings},
    }


class CorrectionService:
    """Sentences in, `CorrectResponse`s out, through the pipeline and the batching engine."""

    def __init__(
        self,
        tutor: TutorFront,
        engine: Engine,
        settings: Settings,
        rules: RuleLookup | None = None,
        admission: Admission | None = None,
        others_in_flight: Callable[[], bool] | None = None,
    ) -> None:
        self.tutor = tutor
        self.others_in_flight = others_in_flight  # other HTTP requests are being served
        self.engine = engine
        self.settings = settings
        self.rules = rules
        if rules is not None and rules.busy is None:
            rules.busy = self.busy
        spans = StageSpans(tutor.cfg, settings)
        self.answers = AnswerCache(settings.answer_cache_size) if settings.answer_cache_size else None
        self.pipeline = CorrectionPipeline(tutor, engine, settings, rules, [spans], self.answers, admission)

    # ---- one sentence ----

    async def correct(self, sentence: str, meta: RequestMeta, rules: bool = True) -> Response:
        """Every stage, in order; the response serialised once."""
        pipeline = self.pipeline
        run = pipeline.begin(meta, Options(rules=rules))
        prepared = pipeline.prepare(run, sentence)
        correction = await pipeline.correct(run, prepared)

        def body() -> bytes:
            fields = result(prepared, correction, prepared.rules.hits, meta.received_at)
            return CorrectResponse(request_id=meta.request_id, **fields).model_dump_json().encode()

        return Response(pipeline.respond(run, body), media_type=JSON)

    async def open_stream(
        self, sentence: str, meta: RequestMeta, rules: bool = True
    ) -> tuple[RequestRun, SentenceRun, HeldStream]:
        """validate, guard, tokenize, then submit: refusals (`ApiError`) answer before a stream starts."""
        pipeline = self.pipeline
        run = pipeline.begin(meta, Options(rules=rules))
        prepared = pipeline.prepare(run, sentence)
        return run, prepared, await pipeline.open_stream(run, prepared)

    async def correct_events(self, run: RequestRun, prepared: SentenceRun, stream: HeldStream) -> AsyncIterator[bytes]:
        """SSE for one correction (the protocol: docs/api.md, "Streaming"): `token` events with the
        corrected sentence as the model writes it (whole characters; never the separator nor the
        gloss), then `settle`'s events, then one `result` event with the full `CorrectResponse`;
        or an `error` event, after which nothing the stream showed stands."""
        pipeline, meta = self.pipeline, run.meta
        answer = self.tutor.answer_stream(prepared.text)
        try:
            async with aclosing(pipeline.tokens(run, prepared, stream)) as tokens:
                async for token in tokens:
                    piece = answer.push(token.token_id)
                    if piece:
                        yield event({"index": token.index, "text": piece}, "token")
            assert prepared.output is not None
            correction = pipeline.format(run, prepared)
            for settled in settle(answer.released, correction, len(prepared.output.token_ids) - 1):
                yield settled
            hits = await pipeline.find_rules(run, prepared)

            def body() -> str:
                fields = result(prepared, correction, hits, meta.received_at)
                return CorrectResponse(request_id=meta.request_id, **fields).model_dump_json()

            yield event(pipeline.respond(run, body), "result")
        except ApiError as error:
            yield event(error_body(error.code, error.message, meta.request_id), "error")
        finally:
            await stream.aclose()  # aborts the request if the client went away mid-stream

    # ---- several sentences ----

    async def correct_batch(self, sentences: Sequence[str], meta: RequestMeta) -> Response:
        """All sentences go to the engine at once (it batches them); any refusal fails the whole batch.
        Rule cards are not shown for batches (they are for a learner reading one answer)."""
        limit = self.settings.max_batch_sentences
        if len(sentences) > limit:
            raise ApiError(422, "batch_too_large", f"sentences: {len(sentences)} sentences; at most {limit} per batch")
        pipeline = self.pipeline
        ingress = ms(time.perf_counter() - meta.received_at)
        run = pipeline.begin(meta, Options(rules=False))
        prepared = [pipeline.prepare(run, s, f"sentences[{i}]") for i, s in enumerate(sentences)]
        start = time.perf_counter()
        tasks = [asyncio.ensure_future(pipeline.generate(run, p)) for p in prepared]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:  # cancelling aborts their engine requests
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        engine_ms = ms(time.perf_counter() - start)
        format_start = time.perf_counter()
        results = []
        for p in prepared:
            correction = pipeline.format(run, p)
            results.append(CorrectionOut(**result(p, correction, await pipeline.find_rules(run, p))))
        timings = {
            "ingress": ingress,
            "guards": round(sum(p.timings_ms["guards"] for p in prepared), 3),
            "tokenize": round(sum(p.timings_ms["tokenize"] for p in prepared), 3),
            "engine": engine_ms,
            "format": ms(time.perf_counter() - format_start),
            "total": ms(time.perf_counter() - meta.received_at),
        }
        usage = Usage(
            prompt_tokens=sum(r.usage.prompt_tokens for r in results),
            completion_tokens=sum(r.usage.completion_tokens for r in results),
        )
        response = BatchCorrectResponse(request_id=meta.request_id, results=results, usage=usage, timings_ms=timings)
        return Response(pipeline.respond(run, lambda: response.model_dump_json().encode()), media_type=JSON)

    # ---- the raw model (/v1/completions) ----

    def raw_prompt(
        self,
        prompt: str | list[int],
        max_tokens: int | None,
        options: RawOptions = RawOptions(),
        **sampling: float | int | None,
    ) -> tuple[list[int], SamplingParams]:
        """Token ids and sampling parameters for a raw completion; text is guarded and follows a <bos>.
        With `options.score_only` the engine still samples one token, which `complete_raw` drops."""
        if isinstance(prompt, str):
            if not prompt:
                raise ApiError(422, "empty_prompt", "prompt: the prompt is empty")
            check_text(prompt, "prompt")
            if (language := foreign_language(prompt)) is not None:
                raise ApiError(422, "not_english", not_english_message("prompt", language, "prompt"))
            ids = [self.tutor.tokenizer.special.bos, *self.tutor.tokenizer.encode(prompt)]
        else:
            ids = list(prompt)
        limit = self.settings.max_completion_tokens
        if max_tokens is not None and max_tokens > limit:
            raise ApiError(422, "validation_error", f"max_tokens: at most {limit}")
        if options.score_only:
            max_tokens = 1
        max_tokens = max_tokens or min(16, max(self.tutor.n_ctx - len(ids), 1))
        params = SamplingParams(
            max_tokens=max_tokens,
            stop_token_ids=(self.pipeline.eos,),
            logprobs=options.logprobs,
            prompt_logprobs=options.echo and options.logprobs,
            **sampling,
        )
        return ids, params

    async def complete_raw(
        self, ids: list[int], params: SamplingParams, meta: RequestMeta, options: RawOptions = RawOptions()
    ) -> RawGeneration:
        pipeline = self.pipeline
        schedule = await pipeline.admission.charge(meta.client, 1)
        with pipeline.refusals:
            async with pipeline.admission.turn(meta.client, schedule) as left:
                engine_id = pipeline.engine_id(meta.request_id)
                output = await self.engine.generate(ids, params, request_id=engine_id, queue_timeout_s=left)
        new = [] if options.score_only else list(output.token_ids)
        new_logprobs = [] if options.score_only else list(output.logprobs or ())
        shown = [*ids, *new] if options.echo else new
        values: list[float | None] = list(new_logprobs)
        if options.echo:
            values = [None, *(output.prompt_logprobs or ()), *new_logprobs]
        text, logprobs = self._token_text(shown, values if options.logprobs else None)
        return RawGeneration(
            text=text,
            prompt_tokens=len(ids),
            completion_tokens=len(new),
            finish_reason="length" if options.score_only else finish_reason(output),
            logprobs=logprobs,
        )

    def _token_text(self, ids: list[int], values: list[float | None] | None) -> tuple[str, CompletionLogprobs | None]:
        """The text of `ids`, and with `values` (one per token) OpenAI's logprobs: each token's own
        text (its piece of the whole; a special token such as <bos> is empty) and offset."""
        tokenizer = self.tutor.tokenizer
        text = tokenizer.decode(ids)
        if values is None:
            return text, None
        pieces = [tokenizer.decode([i]) for i in ids]
        offsets, at = [], 0
        for piece in pieces:
            offsets.append(at)
            at += len(piece)
        return text, CompletionLogprobs(tokens=pieces, token_logprobs=values, text_offset=offsets)

    async def open_raw_stream(self, ids: list[int], params: SamplingParams, meta: RequestMeta) -> HeldStream:
        pipeline = self.pipeline
        schedule = await pipeline.admission.charge(meta.client, 1)
        with pipeline.refusals:
            return await pipeline.stream(meta.client, schedule, ids, params, pipeline.engine_id(meta.request_id))

    # ---- helpers ----

    def busy(self) -> bool:
        """Other requests are being decoded, wait for the model, or are being served: under a load
        of many clients the engine is often idle for a moment between batches while the server
        reads their answers, and that moment is no time to start the rule-card encoder."""
        if self.others_in_flight is not None and self.others_in_flight():
            return True
        snapshot = self.engine.snapshot()
        return snapshot.running + snapshot.waiting > 0


def settle(streamed: str, correction: Correction, index: int) -> list[bytes]:
    """The events that take a stream whose `token` events spelled `streamed` to the checked
    correction: the rest of its sentence as one more `token` event (`index`: the last token's),
    or, when `streamed` is not the start of it (the tutor abstained, or its checks changed the
    model's answer), a `replace` event with the whole sentence; then the `gloss` event."""
    corrected = correction.corrected
    if corrected.startswith(streamed):
        rest = corrected[len(streamed) :]
        events = [event({"index": index, "text": rest}, "token")] if rest else []
    else:
        events = [event({"text": corrected, "reason": correction.abstain_reason or "revised"}, "replace")]
    return [*events, event({"text": correction.gloss}, "gloss")]


def finish_reason(output: RequestOutput) -> str:
    """OpenAI's wording: "stop" at the end-of-text token, "length" at the token limit."""
    return "stop" if output.finish_reason is FinishReason.STOP else "length"
