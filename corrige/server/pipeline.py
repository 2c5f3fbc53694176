"""The correction pipeline: the stages a sentence goes through, in one place, for every route.

    validate → guard → tokenize → engine → format → rules → respond

* `validate`: the body passed the body guard and pydantic before the handler ran; the stage
  marks it, once per request (`RequestRun.validated`), when the first sentence starts.
* `guard`: empty, `max_sentence_chars`, then `check_text` (skipped when the caller checked the
  whole text at the edge already: `Options.checked`). Refusals are `ApiError`s (400 / 422).
* `tokenize`: `Tutor.build_prompt` (`PromptTooLong` becomes a 422) and the sampling parameters.
* `engine`: the engine generates (or streams) the answer's tokens, once the request's sentences
  are charged to its client's work budget and each has had its time and its turn
  (`corrige.server.admission`: 429 `work_limited` was answered before the handler ran). An
  engine refusal becomes an `ApiError` in one place, `corrige.server.errors.EngineRefusals`. A
  text's sentence the engine answered lately is answered from `corrige.server.answer_cache`
  instead (`Options.cached`), and the stage says so (`StageEvent.detail` is `CACHED`).
* `format`: `Tutor.interpret` reads the tokens back into a `Correction` (or abstains); for an
  answer from the answer cache, the reading kept with it.
* `rules`: the rule cards behind the edits; a caller that shows none (`Options.rules` off: chat,
  batches, the portal, whose pages look each edit's card up themselves) still runs the stage,
  which then records why it looked nothing up.
* `respond`: the caller's answer is built (serialised) inside the stage; its cost is the request's.

Each stage is timed by `CorrectionPipeline._stage`, around it: its time goes into the sentence's
`timings_ms` (the response's `timings_ms`) and its CPU share, and every observer
(`StageObserver`: the trace's spans, `corrige.server.stage_spans.StageSpans`) sees it once, with
its error if it failed. No stage knows whether the request is traced.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from corrige.engine import Engine, RequestOutput, RequestStream, SamplingParams, TokenEvent
from corrige.server.admission import Admission, Schedule
from corrige.server.answer_cache import AnswerCache
from corrige.server.context import RequestMeta
from corrige.server.errors import ApiError, EngineRefusals, from_prompt_too_long
from corrige.server.guards import check_text
from corrige.server.settings import Settings
from corrige.tutor.agent import Correction, TutorFront
from corrige.tutor.language import foreign_language, not_english_message
from corrige.tutor.retrieval import RuleHit
from corrige.tutor.rule_lookup import NO_RULES, RuleAnswer, RuleLookup
from corrige.tutor.token_codec import PromptTooLong

VALIDATE, GUARD, TOKENIZE, ENGINE, FORMAT, RULES, RESPOND = (
    "validate",
    "guard",
    "tokenize",
    "engine",
    "format",
    "rules",
    "respond",
)
STAGES = (VALIDATE, GUARD, TOKENIZE, ENGINE, FORMAT, RULES, RESPOND)
"""The pipeline's stages, in order: every sentence of every route goes through each once."""
CACHED = "cached"  # the engine stage's detail when the answer came from the answer cache

R = TypeVar("R")


def ms(seconds: float | None) -> float:
    return round(1000.0 * (seconds or 0.0), 3)


@dataclass(frozen=True, slots=True)
class Options:
    """What differs between the routes, as options rather than stages left out."""

    rules: bool = True  # rule cards in the answer (the `rules` stage looks them up)
    checked: bool = False  # the text passed `check_text` at the edge (a text's pieces): not again
    cached: bool = False  # answers the engine gave lately may answer again (a text's pieces; see answer_cache)


@dataclass(slots=True)
class SentenceRun:
    """One sentence in the pipeline: what each stage made of it."""

    text: str
    field_name: str  # the request's field it came from, named in refusals
    prompt: list[int] = field(default_factory=list)
    params: SamplingParams | None = None
    output: RequestOutput | None = None
    correction: Correction | None = None
    rules: RuleAnswer = NO_RULES
    timings_ms: dict[str, float] = field(default_factory=dict)
    # this sentence's time on the event loop's thread (its synchronous stages timed with perf_counter).
    # Reading the thread's CPU clock instead is a system call that holds the GIL; under load the
    # kernel often switches threads right there, stalling the whole process.
    cpu_s: float = 0.0
    model_cpu_s: float = 0.0  # its share of the engine's forward passes
    waited_s: float = 0.0  # before the engine: its time in its client's schedule and its wait for a turn


@dataclass(slots=True)
class RequestRun:
    """One request in the pipeline: its sentences (one, a batch's, a text's pieces) and options."""

    meta: RequestMeta
    options: Options = Options()
    sentences: list[SentenceRun] = field(default_factory=list)
    validated: bool = False
    # its sentences for the engine charged to the client's work budget (once, by the first to go): when each goes
    charged: asyncio.Future[Schedule | None] | None = None


@dataclass(slots=True)
class StageEvent:
    """One stage, done: what an observer is shown."""

    stage: str
    run: RequestRun
    sentence: SentenceRun | None
    start: float
    end: float = 0.0
    error: ApiError | None = None
    detail: Any = None  # what the stage made that is not on the sentence (the response body; a skip reason)


class StageObserver(Protocol):
    def on_stage(self, event: StageEvent) -> None: ...


class _Stage:
    """Times one stage (`with`), then adds it to the sentence's timings and shows it to the observers."""

    __slots__ = ("event", "observers", "timing", "on_cpu")

    def __init__(self, event: StageEvent, observers: Sequence[StageObserver], timing: str | None, on_cpu: bool):
        self.event = event
        self.observers = observers
        self.timing = timing  # the key of `timings_ms`, or None
        self.on_cpu = on_cpu  # a synchronous stage: its time is CPU time of the event loop

    def __enter__(self) -> StageEvent:
        return self.event

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        event = self.event
        event.end = end = time.perf_counter()
        if isinstance(exc, ApiError):
            event.error = exc
        elif exc is not None:
            return  # cancelled, or a client that left: nothing to report
        sentence = event.sentence
        if sentence is not None and exc is None:
            if self.timing is not None:
                sentence.timings_ms[self.timing] = ms(end - event.start)
            if self.on_cpu:
                sentence.cpu_s += end - event.start
        for observer in self.observers:
            observer.on_stage(event)


class CorrectionPipeline:
    """The stages of a correction, over one tutor, engine and rule lookup."""

    def __init__(
        self,
        tutor: TutorFront,
        engine: Engine,
        settings: Settings,
        rules: RuleLookup | None = None,
        observers: Sequence[StageObserver] = (),
        answers: AnswerCache | None = None,
        admission: Admission | None = None,
    ) -> None:
        self.tutor = tutor
        # the work budget and the engine's turns; the app hands the service its own (corrige.server.app)
        self.admission = admission or Admission.from_settings(settings)
        self.answers = answers  # None: every sentence goes to the engine
        self.engine = engine
        self.settings = settings
        self.rules = rules
        self.observers = list(observers)
        self.refusals = EngineRefusals(settings.retry_after_s)
        self.eos = tutor.tokenizer.special.eos
        self._ids = itertools.count()

    def _stage(
        self, name: str, run: RequestRun, sentence: SentenceRun | None, timing: str | None = None, on_cpu: bool = True
    ) -> _Stage:
        return _Stage(StageEvent(name, run, sentence, time.perf_counter()), self.observers, timing, on_cpu)

    # ---- the stages ----

    def prepare(self, run: RequestRun, text: str, field_name: str = "sentence") -> SentenceRun:
        """validate (once per request), guard, tokenize: a sentence ready for the engine."""
        sentence = SentenceRun(text, field_name)
        start = time.perf_counter()
        sentence.timings_ms["ingress"] = ms(start - run.meta.received_at)
        run.sentences.append(sentence)
        if not run.validated:
            run.validated = True
            with self._stage(VALIDATE, run, sentence, on_cpu=False):
                pass  # pydantic and the body guard ran before the handler; the stage marks where they ended
        with self._stage(GUARD, run, sentence, "guards"):
            self.guard(text, field_name, run.options.checked)
        with self._stage(TOKENIZE, run, sentence, "tokenize"):
            try:
                sentence.prompt = self.tutor.build_prompt(text)
            except PromptTooLong as exc:
                raise from_prompt_too_long(exc, field_name) from None
            sentence.params = self.params_for(sentence.prompt)
        return sentence

    def guard(self, text: str, field_name: str, checked: bool = False) -> None:
        """Raise `ApiError` (400 / 422) for a sentence the tutor must not take."""
        if not text.strip():
            raise ApiError(422, "empty_sentence", f"{field_name}: the sentence is empty; send an English sentence")
        limit = self.settings.max_sentence_chars
        if len(text) > limit:
            message = f"{field_name}: the sentence has {len(text)} characters; at most {limit} are accepted"
            raise ApiError(422, "prompt_too_long", message)
        if not checked:  # a text's pieces were checked with the text, sentence by sentence
            check_text(text, field_name)
            if (language := foreign_language(text)) is not None:
                raise ApiError(422, "not_english", not_english_message(field_name, language, "sentence"))

    def params_for(self, prompt: list[int]) -> SamplingParams:
        """Greedy, up to the tutor's answer budget, stopping at eos, with each token's log-probability
        (the tutor abstains when it was unsure of one)."""
        max_tokens = self.tutor.max_new_tokens_for(len(prompt))
        return SamplingParams(max_tokens=max_tokens, stop_token_ids=(self.eos,), logprobs=True)

    async def generate(self, run: RequestRun, sentence: SentenceRun) -> RequestOutput:
        """The engine stage: wait for a slot, prefill, decode (or, for a text's sentence answered lately
        and a request that did not ask for fresh answers, the answer kept in the answer cache)."""
        assert sentence.params is not None
        with self._stage(ENGINE, run, sentence, "engine", on_cpu=False) as event, self.refusals:
            engine_id = self.engine_id(run.meta.request_id)
            answers = self._answers(run)
            output = answers.get(sentence.prompt, engine_id) if answers is not None and not run.meta.fresh else None
            if output is not None:
                event.detail = CACHED
            else:
                schedule = await self.schedule(run)
                waited = time.perf_counter()
                async with self.admission.turn(run.meta.client, schedule) as left:
                    waited = time.perf_counter() - waited
                    output = await self.engine.generate(
                        sentence.prompt, sentence.params, request_id=engine_id, queue_timeout_s=left
                    )
                if answers is not None:
                    answers.put(sentence.prompt, output)
                sentence.waited_s = waited
            self._engine_done(sentence, output)
        return output

    async def open_stream(self, run: RequestRun, sentence: SentenceRun) -> HeldStream:
        """Submit for streaming once the sentence has its turn (the engine stage runs in `tokens`);
        a refusal raises before the stream starts."""
        assert sentence.params is not None
        schedule = await self.schedule(run)
        with self.refusals:
            engine_id = self.engine_id(run.meta.request_id)
            return await self.stream(run.meta.client, schedule, sentence.prompt, sentence.params, engine_id)

    async def schedule(self, run: RequestRun) -> Schedule | None:
        """The request's sentences for the engine charged to its client's work budget, once (by the
        first of them to get here): when each may go. A text's pieces that the answer cache will
        answer are not charged."""
        if run.charged is None:
            answers = None if run.meta.fresh else self._answers(run)
            cost = sum(1 for s in run.sentences if s.output is None and (answers is None or s.prompt not in answers))
            run.charged = asyncio.ensure_future(self.admission.charge(run.meta.client, cost))
        return await asyncio.shield(run.charged)  # one piece cancelled must not cancel the others' charge

    async def stream(
        self, client: str, schedule: Schedule | None, prompt: list[int], params: SamplingParams, engine_id: str
    ) -> HeldStream:
        """A stream submitted once it has its turn, holding its place in the engine until it ends."""
        left = await self.admission.enter(client, schedule)
        try:
            stream = self.engine.stream(prompt, params, request_id=engine_id, queue_timeout_s=left)
        except BaseException:
            self.admission.leave()
            raise
        return HeldStream(stream, self.admission.leave)

    async def tokens(self, run: RequestRun, sentence: SentenceRun, stream: HeldStream) -> AsyncIterator[TokenEvent]:
        """The engine stage of a stream: its tokens as they decode."""
        with self._stage(ENGINE, run, sentence, "engine", on_cpu=False), self.refusals:
            async for token in stream:
                yield token
            assert stream.output is not None
            self._engine_done(sentence, stream.output)

    def format(self, run: RequestRun, sentence: SentenceRun) -> Correction:
        """The tutor reads the tokens back into a correction, abstaining when the model was unsure."""
        output = sentence.output
        assert output is not None
        with self._stage(FORMAT, run, sentence, "format"):
            answers = self._answers(run)  # an answer the engine just gave has no reading kept yet
            c = answers.reading(sentence.prompt, sentence.text) if answers is not None else None
            if c is None:
                c = self.tutor.interpret(sentence.text, output.token_ids, output.logprobs or [], len(sentence.prompt))
                if answers is not None:
                    answers.keep_reading(sentence.prompt, sentence.text, c)
            sentence.correction = c
        return c

    async def find_rules(self, run: RequestRun, sentence: SentenceRun) -> list[RuleHit]:
        """The rule cards behind the edits; none when the sentence is unchanged, when the caller
        shows none, or when rules are off (the stage then says why)."""
        correction = sentence.correction
        assert correction is not None
        skipped: str | None = None
        if self.rules is None:
            skipped = "off"
        elif not run.options.rules:
            skipped = "not_requested"
        elif not correction.edits:
            skipped = "no_edits"
        with self._stage(RULES, run, sentence, None if skipped else "rules", on_cpu=not skipped) as event:
            event.detail = skipped
            if self.rules is not None and skipped is None:
                sentence.rules = await self.rules.find(correction)
        return list(sentence.rules.hits)

    def respond(self, run: RequestRun, build: Callable[[], R]) -> R:
        """The answer, built (serialised) by `build`; the stage closes the request's cost."""
        with self._stage(RESPOND, run, None, on_cpu=False) as event:
            event.detail = body = build()
        return body

    # ---- stages together ----

    def begin(self, meta: RequestMeta, options: Options | None = None) -> RequestRun:
        return RequestRun(meta, options or Options())

    async def correct(self, run: RequestRun, sentence: SentenceRun) -> Correction:
        """engine, format, rules: a prepared sentence corrected, its rule cards on `sentence.rules`."""
        sentence.output = await self.generate(run, sentence)
        correction = self.format(run, sentence)
        await self.find_rules(run, sentence)
        return correction

    # ---- helpers ----

    def _answers(self, run: RequestRun) -> AnswerCache | None:
        """The answer cache, where this request's sentences may use it (a text's pieces)."""
        return self.answers if run.options.cached else None

    def engine_id(self, request_id: str) -> str:
        # unique even when a client reuses an X-Request-ID, or a batch sends several sentences
        return f"{request_id}#{next(self._ids)}"

    @staticmethod
    def _engine_done(sentence: SentenceRun, output: RequestOutput) -> None:
        sentence.output = output
        stats = output.stats
        # the wait for the model: the sentence's time in its client's schedule and for its turn, then in the engine
        queue_s = (stats.queue_s or 0.0) + sentence.waited_s
        sentence.timings_ms.update(queue=ms(queue_s), prefill=ms(stats.prefill_s), decode=ms(stats.decode_s))
        sentence.model_cpu_s += stats.model_cpu_s


class HeldStream:
    """An engine stream that holds its place in the engine (`Admission`) until it ends: its output
    read, an error, `aclose()`, or dropped unread (a client that left before the stream started)."""

    def __init__(self, stream: RequestStream, leave: Callable[[], None]) -> None:
        self.stream = stream
        self.request_id = stream.request_id
        self._leave: Callable[[], None] | None = leave
        self._loop = asyncio.get_running_loop()

    @property
    def output(self) -> RequestOutput | None:
        return self.stream.output

    def __aiter__(self) -> HeldStream:
        return self

    async def __anext__(self) -> TokenEvent:
        try:
            return await self.stream.__anext__()
        except BaseException:  # the end, an error, or the caller cancelled (the stream aborts its request)
            self._release()
            raise

    async def aclose(self) -> None:
        try:
            await self.stream.aclose()
        finally:
            self._release()

    def _release(self) -> None:
        leave, self._leave = self._leave, None
        if leave is not None:
            leave()

    def __del__(self) -> None:
        if self._leave is not None:
            try:
                self._loop.call_soon_threadsafe(self._release)
            except RuntimeError:  # the event loop is closed: nothing waits for the place
                pass
