"""Whole texts through the correction pipeline (`POST /v1/grammar/correct` with `text`).

The text is split and planned by `corrige.tutor.text`; every piece the model reads goes through
the same stages as a sentence (`corrige.server.pipeline.CorrectionPipeline`: guard, tokenize,
engine, format, rules; the text was checked once at the edge, `Options.checked`; a sentence
answered lately is answered again without the model, `Options.cached`), all submitted
to the engine at once so that they share continuous-batching steps (at most
`max_batch_sentences` in flight for one text, so that a text of many short sentences cannot fill
the engine's waiting queue alone). Each sentence's result is ready as soon as its pieces are:
the stream sends it then (`sentence` events), before the whole `result`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

from fastapi.responses import Response

from corrige.server.context import RequestMeta
from corrige.server.errors import ApiError, error_body
from corrige.server.guards import check_text
from corrige.server.pipeline import Options, ms
from corrige.server.schemas import RuleOut, SentenceOut, TextCorrectResponse, TextEditOut, Usage
from corrige.server.service import JSON, CorrectionService
from corrige.server.sse import event
from corrige.tutor.agent import Correction
from corrige.tutor.text import (
    SentenceResult,
    TextPlan,
    TextRefused,
    apply_text_edits,
    plan_text,
    sentence_result,
)

REFUSED_STATUS = {"text_too_long": 413}


class TextRun:
    """One text in flight: its plan, the engine tasks of its pieces, its sentences as they finish."""

    def __init__(
        self, service: CorrectionService, text: str, meta: RequestMeta, rules: bool, field: str = "text"
    ) -> None:
        self.service = service
        self.pipeline = pipeline = service.pipeline
        self.meta = meta
        self.run = pipeline.begin(meta, Options(rules=rules, checked=True, cached=True))
        start = time.perf_counter()
        self.timings = {"ingress": ms(start - meta.received_at)}
        check_text(text, field)  # once, at the edge: its pieces are parts of it
        try:
            self.plan: TextPlan = plan_text(text, service.tutor.fits, field)
        except TextRefused as exc:
            raise ApiError(REFUSED_STATUS.get(exc.code, 422), exc.code, exc.message) from None
        self.timings["split"] = ms(time.perf_counter() - start)
        # every piece guarded and tokenized before any goes to the engine: then they reach it back
        # to back and start in the same step, instead of each joining a step or two after the last
        start = time.perf_counter()
        self.prepared = {(i, k): pipeline.prepare(self.run, p.source, field) for i, k, p in self.plan.to_correct}
        self.timings["tokenize"] = ms(time.perf_counter() - start)
        self.corrections: dict[tuple[int, int], Correction] = {}
        self.usage = [0, 0]
        self._gate = asyncio.Semaphore(service.settings.max_batch_sentences)
        self._engine_start = 0.0

    async def _piece(self, sentence: int, piece: int) -> None:
        async with self._gate:
            prepared = self.prepared[(sentence, piece)]
            await self.pipeline.generate(self.run, prepared)
            correction = self.pipeline.format(self.run, prepared)
        self.corrections[(sentence, piece)] = correction
        self.usage[0] += correction.prompt_tokens
        self.usage[1] += correction.completion_tokens

    async def _sentence(self, index: int) -> tuple[SentenceResult, list[RuleOut]]:
        await asyncio.gather(*(self._piece(i, k) for i, k, _ in self.plan.to_correct if i == index))
        result = sentence_result(self.plan, index, self.corrections)
        rules: list[RuleOut] = []
        for i, k, _ in self.plan.to_correct:
            if i == index:
                hits = await self.pipeline.find_rules(self.run, self.prepared[(i, k)])
                rules += [RuleOut(**hit.summary()) for hit in hits if hit.card.id not in {r.id for r in rules}]
        return result, rules

    async def results(self) -> list[tuple[SentenceResult, list[RuleOut]]]:
        """Every sentence corrected (cancelled together when one fails or the request goes away)."""
        tasks = self.tasks()
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:
            await _cancel(tasks)
            raise

    def tasks(self) -> list[asyncio.Task]:
        self._engine_start = time.perf_counter()
        return [asyncio.ensure_future(self._sentence(i)) for i in range(len(self.plan.sentences))]

    def response(self, done: list[tuple[SentenceResult, list[RuleOut]]]) -> TextCorrectResponse:
        self.timings["engine"] = ms(time.perf_counter() - self._engine_start)
        sentences = [sentence_out(r, rules) for r, rules in sorted(done, key=lambda d: d[0].index)]
        edits = [e for s in sentences for e in s.edits]
        text = self.plan.text
        self.timings["total"] = ms(time.perf_counter() - self.meta.received_at)
        return TextCorrectResponse(
            request_id=self.meta.request_id,
            text=text,
            corrected=apply_text_edits(text, [e for r, _ in done for e in r.edits]),
            changed=bool(edits),
            sentences=sentences,
            edits=edits,
            usage=Usage(prompt_tokens=self.usage[0], completion_tokens=self.usage[1]),
            timings_ms=self.timings,
        )


def sentence_out(result: SentenceResult, rules: list[RuleOut]) -> SentenceOut:
    return SentenceOut(
        index=result.index,
        offset=result.offset,
        length=result.length,
        sentence=result.text,
        corrected=result.corrected,
        status=result.status,
        reason=result.reason,
        language=result.language,
        explanation=result.gloss,
        more_errors=result.more_errors,
        parts=result.parts,
        edits=[
            TextEditOut(
                offset=e.offset,
                length=e.length,
                original=e.original,
                replacement=e.replacement,
                category=e.category,
                gloss=e.gloss,
                sentence=e.sentence,
            )
            for e in result.edits
        ],
        rules=rules,
    )


async def _cancel(tasks: list[asyncio.Task]) -> None:
    for task in tasks:  # cancelling aborts their engine requests
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def correct_text(service: CorrectionService, text: str, meta: RequestMeta, rules: bool = True) -> Response:
    """The whole text's `TextCorrectResponse`; refusals (`ApiError`) before anything runs."""
    run = TextRun(service, text, meta, rules)
    done = await run.results()
    body = run.pipeline.respond(run.run, lambda: run.response(done).model_dump_json().encode())
    return Response(body, media_type=JSON)


def open_text_stream(service: CorrectionService, text: str, meta: RequestMeta, rules: bool = True) -> TextRun:
    """Plan the text (refusals answer before the stream starts)."""
    return TextRun(service, text, meta, rules)


async def text_events(run: TextRun) -> AsyncIterator[bytes]:
    """SSE for a text: one `sentence` event per sentence as soon as it is corrected (any order;
    `index` says which), then one `result` event with the whole `TextCorrectResponse`; or an
    `error` event, after which nothing the stream showed stands."""
    tasks = run.tasks()
    done: list[tuple[SentenceResult, list[RuleOut]]] = []
    try:
        for next_done in asyncio.as_completed(tasks):
            result, rules = await next_done
            done.append((result, rules))
            yield event(sentence_out(result, rules).model_dump_json(), "sentence")
        yield event(run.pipeline.respond(run.run, lambda: run.response(done).model_dump_json()), "result")
    except ApiError as exc:
        yield event(error_body(exc.code, exc.message, run.meta.request_id), "error")
    finally:
        await _cancel([t for t in tasks if not t.done()])
