"""The engine's answers to sentences of texts it has read lately, kept for the next time.

A learner's editor does not send a text once: LanguageTool's add-ons send the whole text again
after every pause in typing, and the tutor page again after each accepted edit. Most of its
sentences have not changed since, and the model's answer to a sentence depends on nothing but
its prompt (greedy decoding, the prompt's own answer budget), so a sentence read before needs
no engine step: only the sentences that changed go to the model.

Keyed by the prompt's token ids, least recently used first out, `size` answers at most (about
a kilobyte each), each with the tutor's reading of it (`Correction`), so that
the format stage need not read it again. Only the text path reads it (`POST /v1/grammar/correct` with `text`,
`POST /v2/check`, the tutor page); single sentences, batches and the OpenAI routes always run
the model, so that what an engineer measures there is the engine. A client that sends
`Cache-Control: no-cache` gets every sentence read afresh (its answers are still kept).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from corrige.engine import FinishReason, RequestOutput
from corrige.obs.records import RequestStats
from corrige.tutor.agent import Correction

MAX_READINGS = 4  # readings kept per answer: the same sentence typed with other spacing


@dataclass(frozen=True, slots=True)
class _Answer:
    token_ids: tuple[int, ...]
    logprobs: tuple[float, ...] | None
    finish_reason: FinishReason
    # the tutor's reading of the answer, by the sentence as typed (texts that differ only in spacing
    # share a prompt, and a reading keeps the learner's own text)
    readings: dict[str, Correction] = field(default_factory=dict)


class AnswerCache:
    """An LRU map from a prompt's token ids to the engine's answer; used from the event loop only."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"an answer cache holds at least one answer, got capacity {capacity}")
        self.capacity = capacity
        self._answers: OrderedDict[tuple[int, ...], _Answer] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._answers)

    def __contains__(self, prompt: Sequence[int]) -> bool:
        """Whether an answer is kept for this prompt (counting no hit nor miss, moving nothing)."""
        return tuple(prompt) in self._answers

    def get(self, prompt: Sequence[int], request_id: str) -> RequestOutput | None:
        """The answer kept for this prompt, as the engine's output of a request that ran no step; or None."""
        key = tuple(prompt)
        answer = self._answers.get(key)
        if answer is None:
            self.misses += 1
            return None
        self.hits += 1
        self._answers.move_to_end(key)
        now = time.monotonic()
        stats = RequestStats(
            request_id=request_id,
            finish_reason=answer.finish_reason.value,
            num_prompt_tokens=len(key),
            num_output_tokens=len(answer.token_ids),
            arrival_time=now,
            finish_time=now,
            queue_s=None,  # it never waited for the model, nor reached it
            ttft_s=None,
            prefill_s=None,
            decode_s=None,
            inter_token_s=(),
        )
        logprobs = list(answer.logprobs) if answer.logprobs is not None else None
        return RequestOutput(request_id, answer.token_ids, answer.finish_reason, stats, logprobs=logprobs)

    def put(self, prompt: Sequence[int], output: RequestOutput) -> None:
        """Keep a finished answer (not a failed or aborted one), dropping the least recently used past capacity."""
        if output.error is not None or output.finish_reason not in (FinishReason.STOP, FinishReason.LENGTH):
            return
        key = tuple(prompt)
        logprobs = tuple(output.logprobs) if output.logprobs is not None else None
        self._answers[key] = _Answer(tuple(output.token_ids), logprobs, output.finish_reason)
        self._answers.move_to_end(key)
        while len(self._answers) > self.capacity:
            self._answers.popitem(last=False)

    def reading(self, prompt: Sequence[int], text: str) -> Correction | None:
        """The tutor's reading of the answer kept for this prompt, for this sentence; or None."""
        answer = self._answers.get(tuple(prompt))
        return answer.readings.get(text) if answer is not None else None

    def keep_reading(self, prompt: Sequence[int], text: str, correction: Correction) -> None:
        """Keep the tutor's reading beside the answer to this prompt (none kept: nothing to do)."""
        answer = self._answers.get(tuple(prompt))
        if answer is not None:
            answer.readings[text] = correction
            if len(answer.readings) > MAX_READINGS:  # spacings of one sentence must not grow it without end
                del answer.readings[next(iter(answer.readings))]
