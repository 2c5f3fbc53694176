"""The correction pipeline, one explicit stage at a time:

    validate (pydantic, before the handler) → guards → tokenize → engine (queue, prefill,
    decode) → format (`Tutor.interpret`) → response

Each stage is timed with `time.perf_counter` into `timings_ms`; `ingress` is the time from
the first byte of the request reaching the app to the handler (body read, JSON parsing,
validation, middleware guards). When the request is traced (`RequestMeta.trace`), each stage
also becomes a span of the span contract (`corrige.obs.spans`): validate.body,
security.check, tokenize.bpe, model.prefill, model.decode, format.json, retrieve.hybrid (after
the model: the rule cards explain the tutor's edits) and cost.emit (the response serialised,
with the request's CPU time, tokens and price). Routes stay thin: they call these methods and
return what they give.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

from fastapi.responses import Response

from corrige.engine import Engine, EngineError, FinishReason, RequestOutput, RequestStream, SamplingParams
from corrige.obs import spans as S
from corrige.obs.tracing import RequestTrace, mono_ns
from corrige.server.context import RequestMeta
from corrige.server.errors import ApiError, error_body, from_engine_error, from_prompt_too_long
from corrige.server.guards import check_text
from corrige.server.schemas import BatchCorrectResponse, CorrectionOut, CorrectResponse, EditOut, RuleOut, Usage
from corrige.server.settings import Settings
from corrige.server.sse import event
from corrige.tutor.agent import Correction, Tutor
from corrige.tutor.codec import PromptTooLong
from corrige.tutor.retrieval import RuleHit, span_attributes
from corrige.tutor.rule_lookup import RuleLookup

logger = logging.getLogger(__name__)

STAGES = ("ingress", "guards", "tokenize", "queue", "prefill", "decode", "engine", "format", "rules", "total")
ID_BYTES = 8  # a token id as the seed counts it (int64)
FLOAT_BYTES = 4  # float32 logits and KV cache


def _ms(seconds: float | None) -> float:
    return round(1000.0 * (seconds or 0.0), 3)


@dataclass(slots=True)
class Prepared:
    """A sentence that passed the guards, as a prompt ready for the engine."""

    sentence: str
    prompt: list[int]
    params: SamplingParams
    timings_ms: dict[str, float] = field(default_factory=dict)
    trace: RequestTrace | None = None
    # this request's time on the event loop's thread (tokenize, format, ...): its synchronous stages
    # timed with perf_counter. Reading the thread's CPU clock instead is a system call that holds the
    # GIL; under load the kernel often switches threads right there, stalling the whole process.
    cpu_s: float = 0.0
    model_cpu_s: float = 0.0  # its share of the engine's forward passes


@dataclass(slots=True)
class RawGeneration:
    """A `/v1/completions` result: text, token counts, why it stopped."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str


class CorrectionService:
    """Sentences in, `CorrectResponse`s out, through the batching engine."""

    def __init__(self, tutor: Tutor, engine: Engine, settings: Settings, rules: RuleLookup | None = None) -> None:
        self.tutor = tutor
        self.engine = engine
        self.settings = settings
        self.rules = rules
        if rules is not None and rules.busy is None:
            rules.busy = self.engine_busy
        self.eos = tutor.tokenizer.special.eos
        self._ids = itertools.count()
        cfg = tutor.weights.cfg
        self._kv_bytes_per_token = 2 * cfg.n_layer * cfg.n_embd * FLOAT_BYTES  # K and V, every layer
        self._logits_bytes = cfg.vocab_size * FLOAT_BYTES

    # ---- stages ----

    def prepare(self, sentence: str, field_name: str = "sentence", meta: RequestMeta | None = None) -> Prepared:
        """Guards, then tokenize. Raises `ApiError` (400 / 422) for input the tutor must not take.
        `meta` (the request's arrival time and trace) closes the `ingress` stage."""
        start = time.perf_counter()
        trace = meta.trace if meta is not None else None
        ingress = {} if meta is None else {"ingress": _ms(start - meta.received_at)}
        text_bytes = len(sentence.encode("utf-8", "surrogatepass"))
        if trace is not None and S.VALIDATE not in trace.recorded:
            validated_from = meta.guards_done_at or meta.received_at
            trace.timed(S.VALIDATE, validated_from, start, **{S.BYTES_IN: meta.bytes_in, S.BYTES_OUT: text_bytes})
        try:
            self._guard(sentence, field_name)
        except ApiError as exc:
            if trace is not None:
                refused = {S.VERDICT: "refuse", S.REASON: exc.code, S.BYTES_IN: text_bytes, S.BYTES_OUT: 0}
                trace.timed(S.SECURITY, start, time.perf_counter(), **refused)
            raise
        guarded = time.perf_counter()
        try:
            prompt = self.tutor.build_prompt(sentence)
        except PromptTooLong as exc:
            raise from_prompt_too_long(exc, field_name) from None
        tokenized = time.perf_counter()
        if trace is not None:
            passed = {S.VERDICT: "pass", S.BYTES_IN: text_bytes, S.BYTES_OUT: text_bytes}
            trace.timed(S.SECURITY, start, guarded, **passed)
            token_bytes = ID_BYTES * len(prompt)
            tokens = {S.BYTES_IN: text_bytes, S.BYTES_OUT: token_bytes, S.PROMPT_TOKENS: len(prompt)}
            trace.timed(S.TOKENIZE, guarded, tokenized, **tokens)
        timings = {**ingress, "guards": _ms(guarded - start), "tokenize": _ms(tokenized - guarded)}
        prepared = Prepared(sentence, prompt, self.params_for(prompt), timings, trace)
        prepared.cpu_s += time.perf_counter() - start
        return prepared

    def _guard(self, sentence: str, field_name: str) -> None:
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
        end = time.perf_counter()
        prepared.timings_ms["format"] = _ms(end - start)
        prepared.cpu_s += end - start
        if prepared.trace is not None:
            out_bytes = len(correction.corrected.encode()) + len(correction.gloss.encode())
            attrs = {
                S.BYTES_IN: ID_BYTES * len(output.token_ids),
                S.BYTES_OUT: out_bytes,
                "edits": len(correction.edits),
            }
            prepared.trace.timed(S.FORMAT, start, end, **attrs)
        return correction

    async def rules_for(self, prepared: Prepared, correction: Correction, wanted: bool = True) -> list[RuleHit]:
        """The rule cards behind the edits (the `retrieve.hybrid` stage); none when the sentence
        is unchanged, when the caller did not ask, or when rules are off."""
        if self.rules is None or not wanted or not correction.edits:
            if prepared.trace is not None:  # every trace has every stage; this one had nothing to do
                why = "off" if self.rules is None else "not_requested" if not wanted else "no_edits"
                now = time.perf_counter()
                prepared.trace.timed(S.RETRIEVE, now, now, **{"retrieve.skipped": why, S.BYTES_IN: 0, S.BYTES_OUT: 0})
            return []
        start = time.perf_counter()
        answer = await self.rules.find(correction)
        end = time.perf_counter()
        prepared.timings_ms["rules"] = _ms(end - start)
        prepared.cpu_s += end - start
        if prepared.trace is not None:
            attrs = span_attributes(answer.hits, answer.mode)
            attrs |= {"retrieve.cached": answer.cached, "retrieve.degraded": answer.degraded}
            attrs[S.BYTES_IN] = len(correction.sentence.encode()) + sum(len(e.replacement) for e in correction.edits)
            attrs[S.BYTES_OUT] = sum(len(h.card.title) + len(h.card.explanation) for h in answer.hits)
            prepared.trace.timed(S.RETRIEVE, start, end, **attrs)
        return list(answer.hits)

    @staticmethod
    def result(
        prepared: Prepared, c: Correction, rules: list[RuleHit] | None = None, received_at: float | None = None
    ) -> dict:
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
            "rules": [RuleOut(**h.summary()) for h in rules or ()],
            "usage": Usage(prompt_tokens=c.prompt_tokens, completion_tokens=c.completion_tokens),
            "timings_ms": {stage: timings[stage] for stage in STAGES if stage in timings},
        }

    # ---- whole requests ----

    async def correct(self, sentence: str, meta: RequestMeta, rules: bool = True) -> Response:
        prepared = self.prepare(sentence, meta=meta)
        output = await self.generate(prepared, meta.request_id)
        correction = self.format(prepared, output)
        hits = await self.rules_for(prepared, correction, rules)
        start = time.perf_counter()
        response = CorrectResponse(
            request_id=meta.request_id, **self.result(prepared, correction, hits, meta.received_at)
        )
        body = response.model_dump_json().encode()
        prepared.cpu_s += time.perf_counter() - start
        self.emit_cost(prepared, correction, start, len(body))
        return Response(body, media_type="application/json")

    def emit_cost(self, prepared: Prepared, c: Correction, start: float, body_bytes: int) -> None:
        """The `cost.emit` stage: the response serialised, and the request's cost on its trace."""
        trace = prepared.trace
        if trace is None:
            return
        cpu_ms = 1000.0 * (prepared.cpu_s + prepared.model_cpu_s)
        tokens = c.prompt_tokens + c.completion_tokens
        usd = cpu_ms / 3.6e6 * self.settings.price_per_cpu_hour
        attrs = {S.COST_CPU_MS: round(cpu_ms, 4), S.COST_TOKENS: tokens, S.COST_USD: usd}
        attrs |= {S.BYTES_IN: body_bytes, S.BYTES_OUT: body_bytes}  # the response, serialised for the socket
        trace.timed(S.COST, start, time.perf_counter(), **attrs)

    async def correct_batch(self, sentences: Sequence[str], meta: RequestMeta) -> BatchCorrectResponse:
        """All sentences go to the engine at once (it batches them); any refusal fails the whole batch.
        Rule cards are not looked up for batches (they are for a learner reading one answer)."""
        limit = self.settings.max_batch_sentences
        if len(sentences) > limit:
            raise ApiError(422, "batch_too_large", f"sentences: {len(sentences)} sentences; at most {limit} per batch")
        ingress = _ms(time.perf_counter() - meta.received_at)
        prepared = [self.prepare(s, f"sentences[{i}]", meta) for i, s in enumerate(sentences)]
        start = time.perf_counter()
        tasks = [asyncio.ensure_future(self.generate(p, meta.request_id)) for p in prepared]
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
            "total": _ms(time.perf_counter() - meta.received_at),
        }
        usage = Usage(
            prompt_tokens=sum(r.usage.prompt_tokens for r in results),
            completion_tokens=sum(r.usage.completion_tokens for r in results),
        )
        return BatchCorrectResponse(request_id=meta.request_id, results=results, usage=usage, timings_ms=timings)

    async def correct_events(
        self, prepared: Prepared, stream: RequestStream, meta: RequestMeta, rules: bool = True
    ) -> AsyncIterator[bytes]:
        """SSE for one correction (the protocol: README.md, "Streaming"): `token` events with the
        corrected sentence as the model writes it (whole characters; never the separator nor the
        gloss), then `settle`'s events, then one `result` event with the full `CorrectResponse`;
        or an `error` event, after which nothing the stream showed stands."""
        answer = self.tutor.answer_stream(prepared.sentence)
        start = time.perf_counter()
        try:
            async for token in stream:
                piece = answer.push(token.token_id)
                if piece:
                    yield event({"index": token.index, "text": piece}, "token")
            output = stream.output
            assert output is not None
            self._record_engine(prepared, output, time.perf_counter() - start)
            correction = self.format(prepared, output)
            for settled in settle(answer.released, correction, len(output.token_ids) - 1):
                yield settled
            hits = await self.rules_for(prepared, correction, rules)
            serialize_start = time.perf_counter()
            fields = self.result(prepared, correction, hits, meta.received_at)
            body = CorrectResponse(request_id=meta.request_id, **fields).model_dump_json()
            self.emit_cost(prepared, correction, serialize_start, len(body))
            yield event(body, "result")
        except EngineError as exc:
            error = from_engine_error(exc, self.settings.retry_after_s)
            yield event(error_body(error.code, error.message, meta.request_id), "error")
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
            check_text(prompt, "prompt")
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

    def engine_busy(self) -> bool:
        """Other requests are being decoded or are waiting for the model."""
        snapshot = self.engine.snapshot()
        return snapshot.running + snapshot.waiting > 0

    def _engine_id(self, request_id: str) -> str:
        # unique even when a client reuses an X-Request-ID, or a batch sends several sentences
        return f"{request_id}#{next(self._ids)}"

    def _record_engine(self, prepared: Prepared, output: RequestOutput, engine_s: float) -> None:
        stats = output.stats
        prepared.timings_ms.update(
            queue=_ms(stats.queue_s), prefill=_ms(stats.prefill_s), decode=_ms(stats.decode_s), engine=_ms(engine_s)
        )
        prepared.model_cpu_s += stats.model_cpu_s
        trace = prepared.trace
        if trace is None or stats.queue_s is None or stats.ttft_s is None:
            return  # never reached the model: no model spans
        admitted = stats.arrival_time + stats.queue_s
        first = stats.arrival_time + stats.ttft_s
        n_prompt, n_out = stats.num_prompt_tokens, stats.num_output_tokens
        trace.stage(
            S.PREFILL,
            mono_ns(admitted),
            mono_ns(first),
            **{
                S.BATCH_SIZE: stats.prefill_batch_size,
                S.PROMPT_TOKENS: n_prompt,
                "queue.ms": round(1000 * stats.queue_s, 4),
                S.BYTES_IN: ID_BYTES * n_prompt,
                S.LOGITS_BYTES: self._logits_bytes,  # the last position's logits: the runtime computes no others
                S.KV_BYTES: self._kv_bytes_per_token * n_prompt,
                S.BYTES_OUT: self._logits_bytes + self._kv_bytes_per_token * n_prompt,
            },
        )
        decode_steps = max(stats.num_steps - 1, 0)
        # mean batch size over the decode steps alone (the prefill step's size taken out)
        decode_batch = (
            (stats.mean_batch_size * stats.num_steps - stats.prefill_batch_size) / decode_steps if decode_steps else 0.0
        )
        trace.stage(
            S.DECODE,
            mono_ns(first),
            mono_ns(stats.finish_time),
            **{
                S.STEPS: decode_steps,
                S.BATCH_SIZE: round(decode_batch, 3),
                S.OUTPUT_TOKENS: n_out,
                "finish_reason": stats.finish_reason,
                S.BYTES_IN: self._kv_bytes_per_token * n_prompt,
                S.KV_BYTES: self._kv_bytes_per_token * (n_prompt + n_out),  # the cache when it ends
                S.BYTES_OUT: ID_BYTES * n_out,
            },
        )


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
