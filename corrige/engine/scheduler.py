"""Schedulers decide, before every step, which requests run; they never touch arrays.

`schedule()` → `SchedulerOutput` (ids and ints) → the runner runs the model →
`update_from_output()` records the sampled tokens and retires finished requests.

* `none`: one request at a time, first come first served.
* `static`: gather up to `max_batch` requests (or whatever arrived within `max_wait_ms`),
  then run that batch until every member has finished; early finishers keep their slot
  and get their result only when the batch ends, and nobody joins a running batch.
* `continuous`: every step admits waiting requests into free slots (their prompts bounded
  by `prefill_token_budget`), decodes one token for every running request, and retires
  finished requests at once.

A scoring request (`SamplingParams.prompt_logprobs`) may start from an earlier scored prompt's
keys and values (`EngineConfig.prefix_reuse`, `SlotPool.longest_prefix`): `_admit` copies that
prompt's first positions into the new slot (or takes its slot, when no other is free), and the
prefill feeds only the rest.
The continuous scheduler looks for reuse (and counts only the tokens to feed against the prefill
budget), and holds back a scoring request for one step when a prompt it shares more with is
being prefilled in this one, admitting those behind it meanwhile (candidates of one sentence,
sent together, then all start from the first).

With `speculative_tokens` > 0, a decode row may also carry a guess of its next tokens
(prompt lookup, `corrige.model.lookup`); the runner checks the guess in the same forward pass
and returns every token greedy decoding agrees with, so `update_from_output` takes a list
of tokens per row.

A row whose sampling or bookkeeping raises fails its own request only (`InternalError`);
the rest of the step goes on.

The `threads` policy runs requests on worker threads instead (see `threads.py`).
"""

from __future__ import annotations

import logging
import math
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

from corrige.engine.config import EngineConfig, Policy
from corrige.engine.errors import DeadlineExceeded, EngineError, InternalError
from corrige.engine.kv_cache import SlotPool, common_prefix
from corrige.engine.request import FinishReason, Request, RequestStatus
from corrige.model.lookup import LookupDrafter

logger = logging.getLogger(__name__)


def _feed_from(shared: int, prompt: list[int]) -> int:
    """Where a prompt that shares `shared` tokens with a held one starts feeding (`Scheduler._reuse`)."""
    return min(shared, len(prompt)) - 1


def _slot_of(request: Request) -> int:
    return request.slot


@dataclass(slots=True)
class SchedulerOutput:
    """What to run in one step. Rows are the prefills first, then the decodes."""

    step_id: int
    prefill_ids: list[str] = field(default_factory=list)
    prefill_slots: list[int] = field(default_factory=list)
    num_prefill_tokens: int = 0
    decode_ids: list[str] = field(default_factory=list)
    decode_slots: list[int] = field(default_factory=list)
    decode_positions: list[int] = field(default_factory=list)  # where each decode token goes
    decode_tokens: list[int] = field(default_factory=list)  # the token each decode row feeds
    # speculative decoding: guessed next tokens per decode row ([] for none), fed after its token
    decode_drafts: list[list[int]] = field(default_factory=list)
    # and per prefill row ([] for none): a guess of the answer's first tokens, fed after its prompt
    prefill_drafts: list[list[int]] = field(default_factory=list)
    num_draft_tokens: int = 0
    num_reused_tokens: int = 0  # prompt tokens of the prefill rows that their slots already hold

    @property
    def row_ids(self) -> list[str]:
        return self.prefill_ids + self.decode_ids

    @property
    def batch_size(self) -> int:
        return len(self.prefill_ids) + len(self.decode_ids)

    @property
    def is_empty(self) -> bool:
        return not self.prefill_ids and not self.decode_ids

    def add_prefill(self, request: Request) -> None:
        self.prefill_ids.append(request.request_id)
        self.prefill_slots.append(request.slot)
        self.num_prefill_tokens += len(request.prompt_token_ids) - request.prefill_start
        self.num_reused_tokens += request.prefill_start

    def add_decode(self, request: Request) -> None:
        self.add_decodes([request])

    def add_decodes(self, requests: list[Request]) -> None:
        """Each request feeds its latest token at the next position (list comprehensions: this
        runs for every running request on every step)."""
        self.decode_ids += [r.request_id for r in requests]
        self.decode_slots += [r.slot for r in requests]
        self.decode_positions += [len(r.prompt_token_ids) + len(r.output_token_ids) - 1 for r in requests]
        self.decode_tokens += [r.output_token_ids[-1] for r in requests]

    def add_drafts(self, drafts: list[list[int]]) -> None:
        """Guesses for every decode row, in order (call once, after the last `add_decodes`)."""
        self.decode_drafts = drafts
        self.num_draft_tokens += sum(map(len, drafts))

    def add_prefill_drafts(self, drafts: list[list[int]]) -> None:
        """Guesses for every prefill row, in order (call once, after the last `add_prefill`)."""
        self.prefill_drafts = drafts
        self.num_draft_tokens += sum(map(len, drafts))


class Scheduler(ABC):
    """Waiting queue, running set and the slot pool; used from one thread only."""

    speculates = True  # whether its steps carry guesses (the threads policy's workers never do)

    def __init__(self, config: EngineConfig, pool: SlotPool, n_ctx: int, drafter: LookupDrafter | None = None) -> None:
        self.config = config
        self.drafter = drafter or LookupDrafter()  # guesses each greedy request's next tokens
        self.pool = pool
        self.n_ctx = n_ctx
        self.capacity = min(config.batch_capacity, pool.num_total)
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []
        self.requests: dict[str, Request] = {}  # every unfinished request, waiting or running
        self._next_deadline = math.inf  # no waiting request expires before this
        self._step_id = 0

    @property
    def num_waiting(self) -> int:
        return len(self.waiting)

    @property
    def num_running(self) -> int:
        return len(self.running)

    def has_unfinished(self) -> bool:
        return bool(self.requests)

    @property
    def free_capacity(self) -> int:
        """How many waiting requests the next step could admit: free slots within the batch capacity."""
        return max(0, min(self.capacity - len(self.running), self.pool.num_free))

    def add_request(self, request: Request) -> None:
        self.waiting.append(request)
        self.requests[request.request_id] = request
        if request.deadline is not None:
            self._next_deadline = min(self._next_deadline, request.deadline)

    def abort_request(self, request_id: str, now: float) -> list[Request]:
        """Abort one request, waiting or running; returns the requests that finished."""
        request = self.requests.get(request_id)
        if request is None:
            return []
        if request.status is RequestStatus.WAITING:
            self.waiting.remove(request)
            self._finish(request, FinishReason.ABORT, now)
            return [request]
        self.running.remove(request)
        self._finish(request, FinishReason.ABORT, now)
        return [request, *self._after_removal(now)]

    def abort_all(self, now: float, error: EngineError) -> list[Request]:
        """Fail every unfinished request (shutdown)."""
        finished = list(self.requests.values())
        for request in finished:
            self._finish(request, FinishReason.ERROR, now, error)
        self.waiting.clear()
        self.running.clear()
        return finished

    def expire_waiting(self, now: float) -> list[Request]:
        """Fail the waiting requests whose queue deadline has passed."""
        if now < self._next_deadline:
            return []
        expired = [r for r in self.waiting if r.deadline is not None and r.deadline <= now]
        if expired:
            self.waiting = deque(r for r in self.waiting if r.deadline is None or r.deadline > now)
        for request in expired:
            limit = request.deadline - request.arrival_time
            error = DeadlineExceeded(
                f"the request waited {now - request.arrival_time:.2f} s for the model (limit {limit:.2f} s); "
                "the server is busy, try again shortly"
            )
            self._finish(request, FinishReason.ERROR, now, error)
        self._next_deadline = min((r.deadline for r in self.waiting if r.deadline is not None), default=math.inf)
        return expired

    def fail(self, output: SchedulerOutput, error: EngineError, now: float) -> list[Request]:
        """The model raised during this step: fail the requests it was running."""
        return self.fail_requests([(self.requests[rid], error) for rid in output.row_ids if rid in self.requests], now)

    def fail_requests(self, failures: list[tuple[Request, EngineError]], now: float) -> list[Request]:
        """End these requests with their errors; returns every request that finished."""
        for request, error in failures:
            if request in self.running:
                self.running.remove(request)
            if self.requests.get(request.request_id) is request:
                self._finish(request, FinishReason.ERROR, now, error)
            else:  # its bookkeeping broke after it had finished: only the outcome changes
                request.finish(FinishReason.ERROR, now, error)
        return [request for request, _ in failures] + self._after_removal(now)

    def ready(self, now: float) -> bool:
        """Would a step now do anything (run the model or expire a deadline)?"""
        # A running batch always has a member still generating (static releases a batch when none is).
        return now >= self._next_deadline or bool(self.running) or self._can_admit(now)

    def wake_time(self) -> float | None:
        """When, with no new input, a step could next have work (a deadline or a batch window)."""
        return None if math.isinf(self._next_deadline) else self._next_deadline

    @abstractmethod
    def schedule(self, now: float) -> SchedulerOutput: ...

    def _can_admit(self, now: float) -> bool:
        return bool(self.waiting) and len(self.running) < self.capacity and self.pool.num_free > 0

    def _admit(self, request: Request, now: float, reuse: tuple[int, int, list[float]] | None = None) -> None:
        """Give `request` a slot and run it; `reuse`: what `_reuse` found for it (the static and
        threads schedulers do not look, so their scoring requests compute every prompt whole)."""
        if reuse is None:
            request.slot = self.pool.allocate(request.request_id)
        else:
            donor, start, logprobs = reuse
            spare = donor if self.pool.is_free(donor) else None
            request.slot = self.pool.allocate(request.request_id, spare=spare, keep=start)
            if request.slot != donor:  # the donor stays whole for the next candidates
                self.pool.copy_prefix(donor, request.slot, start)
            request.prefill_start, request.reused_logprobs = start, logprobs
        request.status = RequestStatus.RUNNING
        request.scheduled_time = now
        if self.speculates and self.config.speculative_tokens and request.params.greedy:
            request.lookup = self.drafter.start(request.prompt_token_ids)
        self.running.append(request)

    def _reuse(self, request: Request) -> tuple[int, int, list[float]] | None:
        """For a scoring request: the slot holding the scored prompt it shares most with, how many
        of its first positions to reuse, and those tokens' log-probabilities; None for no reuse.

        Sharing n tokens, it reuses the first n - 1 positions and feeds its prompt from there: the
        token at n - 1 is fed again, so that its logits score the first token that differs (a
        prompt feeds at least its last token, whose logits give the next one)."""
        if not (request.params.prompt_logprobs and self.config.prefix_reuse):
            return None
        found = self.pool.longest_prefix(request.prompt_token_ids)
        if found is None:
            return None
        slot, shared, held = found
        start = _feed_from(shared, request.prompt_token_ids)
        if start < 1:
            return None
        return slot, start, list(held.logprobs[:start])

    def _shares_more_with(
        self, request: Request, prefilling: list[list[int]], reuse: tuple[int, int, list[float]] | None
    ) -> bool:
        """Whether a scoring request shares more of its prompt with one being prefilled this step
        than it can reuse now (`reuse`): it then waits a step and starts from that one."""
        if not (prefilling and request.params.prompt_logprobs and self.config.prefix_reuse):
            return False
        prompt = request.prompt_token_ids
        ahead = max(common_prefix(p, prompt) if p[:2] == prompt[:2] else 0 for p in prefilling)
        start = _feed_from(ahead, prompt)
        return start >= 2 and start > (reuse[1] if reuse else 0)

    def record_prompt(self, request: Request, fed: list[float]) -> None:
        """A scoring request's prefill ran: its prompt log-probabilities are the reused ones and those
        of the tokens it fed (`fed`), and its slot now holds the whole prompt for later ones."""
        request.prompt_logprobs = request.reused_logprobs + fed
        if self.config.prefix_reuse and request.slot is not None:
            self.pool.hold(request.slot, request.prompt_token_ids, request.prompt_logprobs)

    def _add_drafts(self, output: SchedulerOutput, decoders: list[Request]) -> None:
        """Guess up to `speculative_tokens` next tokens per decode row, within the step's budget,
        the request's `max_tokens` and the context window."""
        k = min(self.config.speculative_tokens, self.config.speculative_token_budget // max(len(decoders), 1))
        if k <= 0:
            return
        output.add_drafts([self._draft(request, k) for request in decoders])

    def _add_prefill_drafts(self, output: SchedulerOutput, admitted: list[Request]) -> None:
        """Guess the first tokens of each new request's answer too, within what the decode rows
        left of the step's budget: a tutor's answer starts by copying the sentence, so its prefill
        step can already check most of it instead of giving one token."""
        rows = len(output.decode_ids) + len(admitted)
        left = self.config.speculative_token_budget - output.num_draft_tokens
        # the same share per row as the decode rows get: with no share left for them (a full
        # batch), a guess here would move every decode row to the slower checking pass
        k = min(self.config.speculative_tokens, self.config.speculative_token_budget // max(rows, 1))
        k = min(k, left // max(len(admitted), 1))
        if k <= 0 or not admitted:
            return
        output.add_prefill_drafts([self._draft(request, k) for request in admitted])

    def _draft(self, request: Request, k: int) -> list[int]:
        lookup = request.lookup
        # the step writes positions num_tokens-1 .. num_tokens-1+len(guess) (a prefill: the prompt,
        # then the guess) and adds up to len(guess)+1 tokens; both must stay inside the window and
        # max_tokens
        left = request.params.max_tokens - len(request.output_token_ids)
        room = min(k, left - 1, self.n_ctx - request.num_tokens - 1)
        return lookup.draft(room) if lookup is not None and room > 0 else []

    def _finish(self, request: Request, reason: FinishReason, now: float, error: EngineError | None = None) -> None:
        """The only way out: frees the slot (if any) and forgets the request."""
        if request.slot is not None:
            self.pool.free(request.slot)
            request.slot = None
        del self.requests[request.request_id]
        request.finish(reason, now, error)

    def _after_removal(self, now: float) -> list[Request]:
        """Hook after a running request left early (abort, error); static may end its batch."""
        return []

    def _pack(self, decoders: list[Request]) -> list[Request]:
        """Move `decoders` into slots 0..k-1 and sort them by slot, so the runtime reads their
        cache as one slice instead of gathering scattered slots (see `SlotPool.swap`)."""
        k = len(decoders)
        misplaced = [r for r in decoders if r.slot >= k]
        if misplaced:
            taken = {r.slot for r in decoders if r.slot < k}
            targets = [s for s in range(k) if s not in taken]  # as many as misplaced
            for request, target in zip(misplaced, targets, strict=True):
                occupant = self.pool.owner(target)  # free, or a static batch's early finisher
                used = request.num_tokens  # the positions its keys and values fill (and one more)
                if occupant is not None:
                    other = self.requests[occupant]
                    other.slot = request.slot
                    used = max(used, other.num_tokens)
                self.pool.swap(request.slot, target, used)
                request.slot = target
        return sorted(decoders, key=_slot_of)

    def _next_step(self) -> SchedulerOutput:
        self._step_id += 1
        return SchedulerOutput(step_id=self._step_id)


class StepScheduler(Scheduler):
    """A scheduler whose requests go through the model together, one step at a time (none,
    static, continuous): the core hands each step's sampled tokens back to `update_from_output`."""

    def update_from_output(
        self,
        output: SchedulerOutput,
        sampled: list[list[int]],
        now: float,
        errors: Mapping[int, Exception] | None = None,
    ) -> list[Request]:
        """Record each row's new tokens (one, or more with a guess); returns the requests that finished.

        A row whose sampling raised (`errors`, by row) or whose bookkeeping raises here fails its
        own request with `InternalError`: one bad request must not end its neighbours' answers."""
        finished: list[Request] = []
        failures: list[tuple[Request, EngineError]] = []
        for row, (request_id, tokens) in enumerate(zip(output.row_ids, sampled, strict=True)):
            request = self.requests[request_id]
            error = errors.get(row) if errors else None
            if error is None:
                try:
                    if self._record(request, tokens, now):
                        finished.append(request)
                    continue
                except Exception as exc:
                    error = exc
            logger.error("request %s failed alone in step %d: %r", request_id, output.step_id, error, exc_info=error)
            failures.append((request, InternalError(f"the request failed: {error}")))
        if failures:
            finished += self.fail_requests(failures, now)
        return finished + self._after_update(now, bool(finished))

    @abstractmethod
    def _record(self, request: Request, tokens: list[int], now: float) -> bool:
        """Take one row's new tokens; True when the request finished (and left)."""

    def _after_update(self, now: float, any_finished: bool) -> list[Request]:
        """After a step's rows are recorded: tidy up; returns any more requests that finished."""
        return []

    def _append(self, request: Request, tokens: list[int], now: float) -> FinishReason | None:
        """Append a row's tokens up to the first that stops the request (the rest are dropped:
        tokens after a stop or past max_tokens); returns why it stopped, or None."""
        for token in tokens:
            reason = request.append_token(token, now, self.n_ctx)
            if reason is not None:
                return reason
        return None


class ContinuousScheduler(StepScheduler):
    """Iteration-level scheduling: join and leave between any two decode steps."""

    def schedule(self, now: float) -> SchedulerOutput:
        output = self._next_step()
        self.running = self._pack(self.running)
        output.add_decodes(self.running)
        self._add_drafts(output, self.running)
        budget = self.config.prefill_token_budget
        admitted = []
        scoring: list[list[int]] = []  # the scored prompts prefilled this step
        held_back: list[Request] = []  # scoring requests that start from one of those next step
        while self._can_admit(now):
            head = self.waiting[0]
            reuse = self._reuse(head)
            feed = len(head.prompt_token_ids) - (reuse[1] if reuse else 0)
            if output.prefill_ids and output.num_prefill_tokens + feed > budget:
                break  # the first prompt always fits, so a long prompt cannot starve
            if self._shares_more_with(head, scoring, reuse):
                held_back.append(self.waiting.popleft())
                continue
            request = self.waiting.popleft()
            self._admit(request, now, reuse)
            output.add_prefill(request)
            admitted.append(request)
            if request.params.prompt_logprobs:
                scoring.append(request.prompt_token_ids)
        self.waiting.extendleft(reversed(held_back))  # first in line again, in their order
        self._add_prefill_drafts(output, admitted)
        return output

    def _record(self, request: Request, tokens: list[int], now: float) -> bool:
        reason = self._append(request, tokens, now)
        if reason is not None:
            self._finish(request, reason, now)
        return reason is not None

    def _after_update(self, now: float, any_finished: bool) -> list[Request]:
        if any_finished:
            self.running = [r for r in self.running if r.status is RequestStatus.RUNNING]
        return []


class NoBatchingScheduler(ContinuousScheduler):
    """The naive baseline: capacity 1, so each request runs alone, in arrival order."""


class StaticScheduler(StepScheduler):
    """Batch-level scheduling: a batch forms, runs to its slowest member, then the next forms."""

    def schedule(self, now: float) -> SchedulerOutput:
        output = self._next_step()
        if self.running:
            decoders = self._pack([r for r in self.running if r.generating])
            output.add_decodes(decoders)
            self._add_drafts(output, decoders)
            return output
        if self._batch_ready(now):
            admitted = []
            for _ in range(min(self.capacity, len(self.waiting), self.pool.num_free)):
                request = self.waiting.popleft()
                self._admit(request, now)
                output.add_prefill(request)
                admitted.append(request)
            self._add_prefill_drafts(output, admitted)
        return output

    def _record(self, request: Request, tokens: list[int], now: float) -> bool:
        # An early finisher stops generating but keeps its slot until the batch ends.
        request.finish_reason = self._append(request, tokens, now)
        return False

    def _after_update(self, now: float, any_finished: bool) -> list[Request]:
        return self._after_removal(now)

    def _after_removal(self, now: float) -> list[Request]:
        if any(r.generating for r in self.running):
            return []
        batch, self.running = self.running, []
        for request in batch:
            self._finish(request, request.finish_reason, now)  # everyone's finish time is the batch's end
        return batch

    def _can_admit(self, now: float) -> bool:
        return not self.running and self._batch_ready(now)

    @property
    def free_capacity(self) -> int:
        return 0 if self.running else min(self.capacity, self.pool.num_free)  # nobody joins a running batch

    def _batch_ready(self, now: float) -> bool:
        if not self.waiting or self.pool.num_free == 0:
            return False
        full = len(self.waiting) >= self.capacity
        return full or now - self.waiting[0].arrival_time >= self.config.max_wait_ms / 1000

    def wake_time(self) -> float | None:
        times = [t for t in (super().wake_time(),) if t is not None]
        if self.waiting and not self.running:
            times.append(self.waiting[0].arrival_time + self.config.max_wait_ms / 1000)
        return min(times, default=None)


def make_scheduler(
    config: EngineConfig, pool: SlotPool, n_ctx: int, drafter: LookupDrafter | None = None
) -> StepScheduler:
    schedulers = {Policy.NONE: NoBatchingScheduler, Policy.STATIC: StaticScheduler}
    if config.policy is Policy.THREADS:
        raise ValueError("the threads policy has no step scheduler; use ThreadPoolCore")
    return schedulers.get(config.policy, ContinuousScheduler)(config, pool, n_ctx, drafter)
