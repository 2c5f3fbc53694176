"""The trace's spans of the pipeline's stages: an observer (`StageSpans`) of `CorrectionPipeline`.

Each stage becomes the span of the span contract (`corrige.obs.spans`) named for it:

    validate → validate.body      guard → security.check     tokenize → tokenize.bpe
    engine → model.prefill and model.decode (from the engine's per-request stats; both empty,
             with `model.cached`, for a text's sentence answered from the answer cache)
    format → format.json          rules → retrieve.hybrid    respond → cost.emit

with the bytes each stage took in and gave out. `validate.body` and `security.check` are written
by `corrige.server.context` (`validate_span`, `security_span`), which also writes them for requests
refused before the handler. A request that is not traced (`RequestMeta.trace` is None) costs one
attribute read per stage here.
"""

from __future__ import annotations

from corrige.model.config import GPTConfig
from corrige.obs import spans as S
from corrige.obs.tracing import RequestTrace, mono_ns
from corrige.server import pipeline as P
from corrige.server.context import security_span, validate_span
from corrige.server.settings import Settings
from corrige.tutor.retrieval import span_attributes

ID_BYTES = 8  # a token id as the seed counts it (int64)
FLOAT_BYTES = 4  # float32 logits and KV cache


def _utf8(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _size(body: object) -> int:
    """The bytes of an answer: serialised, or a stream's chunks; 0 for an answer still to be rendered."""
    if isinstance(body, bytes | str):
        return len(body)
    if isinstance(body, list):
        return sum(len(chunk) for chunk in body if isinstance(chunk, bytes | str))
    return 0


class StageSpans:
    """Writes each stage of a traced request as its span, once, when the stage is done."""

    def __init__(self, cfg: GPTConfig, settings: Settings) -> None:
        self.kv_bytes_per_token = 2 * cfg.n_layer * cfg.n_embd * FLOAT_BYTES  # K and V, every layer
        self.logits_bytes = cfg.vocab_size * FLOAT_BYTES
        self.price_per_cpu_hour = settings.price_per_cpu_hour
        self._writers = {
            P.VALIDATE: self._validate,
            P.GUARD: self._guard,
            P.TOKENIZE: self._tokenize,
            P.ENGINE: self._engine,
            P.FORMAT: self._format,
            P.RULES: self._rules,
            P.RESPOND: self._cost,
        }

    def on_stage(self, event: P.StageEvent) -> None:
        trace = event.run.meta.trace
        if trace is not None:
            self._writers[event.stage](trace, event)

    @staticmethod
    def _validate(trace: RequestTrace, event: P.StageEvent) -> None:
        meta = event.run.meta
        text = _utf8(event.sentence.text) if event.sentence is not None else 0
        validate_span(trace, meta.guards_done_at or meta.received_at, event.start, meta.bytes_in, text)

    @staticmethod
    def _guard(trace: RequestTrace, event: P.StageEvent) -> None:
        assert event.sentence is not None
        text = _utf8(event.sentence.text)
        reason = event.error.code if event.error is not None else None
        security_span(trace, event.start, event.end, reason, text, 0 if reason else text)

    @staticmethod
    def _tokenize(trace: RequestTrace, event: P.StageEvent) -> None:
        assert event.sentence is not None
        prompt = event.sentence.prompt
        error = event.error.code if event.error is not None else None
        attrs = {S.BYTES_IN: _utf8(event.sentence.text), S.BYTES_OUT: ID_BYTES * len(prompt)}
        trace.timed(S.TOKENIZE, event.start, event.end, error, **attrs, **{S.PROMPT_TOKENS: len(prompt)})

    def _engine(self, trace: RequestTrace, event: P.StageEvent) -> None:
        output = event.sentence.output if event.sentence is not None else None
        if output is None or event.error is not None:
            return  # refused before the model: no model spans
        stats = output.stats
        if event.detail == P.CACHED:  # answered from the answer cache: both model spans, empty, say so
            n_prompt, n_out = stats.num_prompt_tokens, stats.num_output_tokens
            cached = {S.MODEL_CACHED: True, S.BYTES_IN: 0, S.BYTES_OUT: 0}
            trace.timed(S.PREFILL, event.start, event.end, None, **cached, **{S.PROMPT_TOKENS: n_prompt})
            trace.timed(S.DECODE, event.end, event.end, None, **cached, **{S.STEPS: 0, S.OUTPUT_TOKENS: n_out})
            return
        if stats.queue_s is None or stats.ttft_s is None:
            return  # never reached the model
        admitted = stats.arrival_time + stats.queue_s
        first = stats.arrival_time + stats.ttft_s
        n_prompt, n_out = stats.num_prompt_tokens, stats.num_output_tokens
        kv_prompt = self.kv_bytes_per_token * n_prompt
        prefill = {
            S.BATCH_SIZE: stats.prefill_batch_size,
            S.PROMPT_TOKENS: n_prompt,
            "queue.ms": round(1000 * stats.queue_s, 4),
            S.BYTES_IN: ID_BYTES * n_prompt,
            S.LOGITS_BYTES: self.logits_bytes,  # the last position's logits: the runtime computes no others
            S.KV_BYTES: kv_prompt,
            S.BYTES_OUT: self.logits_bytes + kv_prompt,
        }
        trace.stage(S.PREFILL, mono_ns(admitted), mono_ns(first), None, None, **prefill)
        decode_steps = max(stats.num_steps - 1, 0)
        # mean batch size over the decode steps alone (the prefill step's size taken out)
        total = stats.mean_batch_size * stats.num_steps - stats.prefill_batch_size
        decode = {
            S.STEPS: decode_steps,
            S.BATCH_SIZE: round(total / decode_steps, 3) if decode_steps else 0.0,
            S.OUTPUT_TOKENS: n_out,
            "finish_reason": stats.finish_reason,
            S.BYTES_IN: kv_prompt,
            S.KV_BYTES: self.kv_bytes_per_token * (n_prompt + n_out),  # the cache when it ends
            S.BYTES_OUT: ID_BYTES * n_out,
        }
        trace.stage(S.DECODE, mono_ns(first), mono_ns(stats.finish_time), None, None, **decode)

    @staticmethod
    def _format(trace: RequestTrace, event: P.StageEvent) -> None:
        sentence = event.sentence
        assert sentence is not None and sentence.output is not None
        c = sentence.correction
        out_bytes = len(c.corrected.encode()) + len(c.gloss.encode()) if c is not None else 0
        attrs = {S.BYTES_IN: ID_BYTES * len(sentence.output.token_ids), S.BYTES_OUT: out_bytes}
        attrs["edits"] = len(c.edits) if c is not None else 0
        trace.timed(S.FORMAT, event.start, event.end, None, **attrs)

    @staticmethod
    def _rules(trace: RequestTrace, event: P.StageEvent) -> None:
        if event.detail is not None:  # every trace has every stage; this one had nothing to do
            skipped = {"retrieve.skipped": event.detail, S.BYTES_IN: 0, S.BYTES_OUT: 0}
            trace.timed(S.RETRIEVE, event.end, event.end, None, **skipped)
            return
        sentence = event.sentence
        assert sentence is not None and sentence.correction is not None
        answer, c = sentence.rules, sentence.correction
        attrs = span_attributes(answer.hits, answer.mode)
        attrs |= {"retrieve.cached": answer.cached, "retrieve.degraded": answer.degraded}
        attrs[S.BYTES_IN] = len(c.sentence.encode()) + sum(len(e.replacement) for e in c.edits)
        attrs[S.BYTES_OUT] = sum(len(h.card.title) + len(h.card.explanation) for h in answer.hits)
        trace.timed(S.RETRIEVE, event.start, event.end, None, **attrs)

    def _cost(self, trace: RequestTrace, event: P.StageEvent) -> None:
        """The request's cost: its sentences' CPU time on the event loop and in the model, the
        answer's serialisation, and their tokens, at `price_per_cpu_hour`."""
        run = event.run
        cpu_s = (event.end - event.start) + sum(s.cpu_s + s.model_cpu_s for s in run.sentences)
        cpu_ms = 1000.0 * cpu_s
        tokens = sum(s.correction.prompt_tokens + s.correction.completion_tokens for s in run.sentences if s.correction)
        size = _size(event.detail)
        usd = cpu_ms / 3.6e6 * self.price_per_cpu_hour
        attrs = {S.COST_CPU_MS: round(cpu_ms, 4), S.COST_TOKENS: tokens, S.COST_USD: usd}
        attrs |= {S.BYTES_IN: size, S.BYTES_OUT: size}  # the response, serialised for the socket
        trace.timed(S.COST, event.start, event.end, None, **attrs)
