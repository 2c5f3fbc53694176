"""The model runner: a `SchedulerOutput` in, one sampled token id per row out.

Prefill rows go through one `prefill` call and decode rows through one `decode` call. It
keeps no state between steps beyond the weights and the KV cache it writes, so the
threads policy shares one runner between its workers (each writes only its own slot).

Rows whose request asked for log-probabilities also get log softmax(logits)[token], computed
for those rows only, one vectorised pass per logits array.

With speculative decoding, a decode row also feeds its guessed next tokens; the runner checks
them all in one multi-token pass and returns every token greedy decoding agrees with (see
`corrige.model.lookup.accept`), so a row may get several tokens from one step.

A scoring row (`SamplingParams.prompt_logprobs`) goes through `verify` instead of `prefill`: it
needs every prompt position's logits, not just the last, and with prefix reuse its prompt starts
at `Request.prefill_start`, after the positions its slot already holds.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from corrige.engine.request import Request
from corrige.engine.sampling import sample_rows, sample_tokens
from corrige.engine.scheduler import SchedulerOutput
from corrige.model.generate import chosen_logprobs
from corrige.model.lookup import accept
from corrige.model.numpy_gpt import KVCache, RuntimeWeights, decode, prefill, verify


@dataclass(slots=True)
class RunnerOutput:
    # aligned with `SchedulerOutput.row_ids`: each row's new tokens, one unless it carried a
    # guess, then the accepted part of the guess and the model's own next token
    sampled_token_ids: list[list[int]]
    model_s: float  # forward passes, wall clock
    model_cpu_s: float  # forward passes, this thread's CPU time
    sample_s: float
    logprobs: list[list[float]] | None = None  # aligned with sampled_token_ids; [] for rows that did not ask
    # rows whose sampling raised, by index: their tokens are meaningless and their requests fail
    # alone (the scheduler sees to it), so one bad request cannot fail the whole step
    errors: dict[int, Exception] = field(default_factory=dict)
    # scoring rows, by index: log P(token | tokens before) of the prompt tokens this step fed, after the first
    prompt_logprobs: dict[int, list[float]] = field(default_factory=dict)


def rows_logprobs(
    logits: Sequence[np.ndarray], rows: Sequence[Request], tokens: Sequence[int]
) -> list[list[float]] | None:
    """[log softmax(logits)[token]] for the rows whose request asked for it ([] for the others);
    None when no row asked. `logits` is one or more (B_i, V) arrays whose rows, in order, are `rows`."""
    asked = [i for i, request in enumerate(rows) if request.params.logprobs]
    if not asked:
        return None
    out: list[list[float]] = [[] for _ in rows]
    offset = 0
    for part in logits:
        n = len(part)
        local = [i - offset for i in asked if offset <= i < offset + n]
        if local:
            x = part if len(local) == n else part[local]  # (k, V)
            values = chosen_logprobs(x, [tokens[offset + i] for i in local]).tolist()
            for i, value in zip(local, values, strict=True):
                out[offset + i] = [value]
        offset += n
    return out


def record_logprobs(rows: Sequence[Request], logprobs: list[list[float]] | None, before: Sequence[int]) -> None:
    """Append to each request the log-probabilities of the tokens it took this step (`before`:
    its output length before them; tokens after a stop were dropped, and so are theirs)."""
    if logprobs is None:
        return
    for request, values, n in zip(rows, logprobs, before, strict=True):
        if values:
            request.output_logprobs += values[: len(request.output_token_ids) - n]


def _in_row_order(
    packed: np.ndarray, n_prefill: int, chunks: list[list[int]], prefill_guesses: list[int], tails: list[int]
) -> tuple[np.ndarray, list[int]]:
    """`packed` holds the prompts' last logits, then the decode rows' chunks, then the prefill
    rows' guesses (as `verify` was fed); returns them gathered row by row (each prefill row's
    prompt end followed by its guess, then the decode rows) and each row's number of logits."""
    n_decode = len(chunks) - len(prefill_guesses)
    starts = np.cumsum([n_prefill, *(len(c) for c in chunks)])  # where each chunk's logits begin
    guess_of = {row: n_decode + k for k, row in enumerate(prefill_guesses)}
    order: list[int] = []
    tails = list(tails)
    for i in range(n_prefill):
        order.append(i)
        if i in guess_of:
            c = guess_of[i]
            order.extend(range(int(starts[c]), int(starts[c]) + len(chunks[c])))
            tails[i] = 1 + len(chunks[c])
    order.extend(range(n_prefill, int(starts[n_decode])))
    return packed[order], tails


class ModelRunner:
    def __init__(self, weights: RuntimeWeights, cache: KVCache) -> None:
        self.weights = weights
        self.cache = cache

    def _prefill(self, output: SchedulerOutput, rows: Sequence[Request]) -> tuple[np.ndarray, dict[int, list[float]]]:
        """The prefill rows' last logits (P, V), and the scoring rows' prompt log-probabilities.
        Plain prompts go through one `prefill` call; scoring rows, and prompts that start after a
        reused prefix, through one `verify` call, which gives every fed position's logits."""
        w, cache = self.weights, self.cache
        n = len(output.prefill_ids)
        prompts = [request.prompt_token_ids for request in rows[:n]]
        scored = [i for i in range(n) if rows[i].params.prompt_logprobs or rows[i].prefill_start]
        if not scored:
            return prefill(w, cache, prompts, output.prefill_slots), {}
        last = np.empty((n, w.cfg.vocab_size), dtype=np.float32)
        plain = sorted(set(range(n)) - set(scored))
        if plain:
            last[plain] = prefill(w, cache, [prompts[i] for i in plain], [output.prefill_slots[i] for i in plain])
        starts = [rows[i].prefill_start for i in scored]
        chunks = [prompts[i][start:] for i, start in zip(scored, starts, strict=True)]
        logits = verify(w, cache, chunks, [output.prefill_slots[i] for i in scored], starts)
        found: dict[int, list[float]] = {}
        offset = 0
        for i, chunk in zip(scored, chunks, strict=True):
            part = logits[offset : offset + len(chunk)]
            last[i] = part[-1]
            if rows[i].params.prompt_logprobs:  # position p's logits score the token at p + 1
                found[i] = chosen_logprobs(part[:-1], chunk[1:]).tolist() if len(chunk) > 1 else []
            offset += len(chunk)
        return last, found

    def execute(self, output: SchedulerOutput, rows: Sequence[Request]) -> RunnerOutput:
        """Run one step; `rows` are the requests of `output.row_ids`, in that order."""
        if output.num_draft_tokens:
            return self._execute_with_drafts(output, rows)
        start, start_cpu = time.perf_counter(), time.thread_time()
        logits = []
        prompt_logprobs: dict[int, list[float]] = {}
        if output.prefill_ids:
            last, prompt_logprobs = self._prefill(output, rows)
            logits.append(last)
        if output.decode_ids:
            logits.append(
                decode(self.weights, self.cache, output.decode_tokens, output.decode_slots, output.decode_positions)
            )
        forward_done, forward_done_cpu = time.perf_counter(), time.thread_time()
        tokens, errors = sample_tokens(logits, rows)  # prefill and decode logits stay apart: no copy
        logprobs = rows_logprobs(logits, rows, tokens)
        return RunnerOutput(
            [[token] for token in tokens],
            forward_done - start,
            forward_done_cpu - start_cpu,
            time.perf_counter() - forward_done,
            logprobs,
            errors,
            prompt_logprobs,
        )

    def _execute_with_drafts(self, output: SchedulerOutput, rows: Sequence[Request]) -> RunnerOutput:
        """Decode rows feed their token and guess as one chunk each, in one `verify` call that
        returns logits for every fed token; new prompts go through `prefill`, and a prompt's guess
        of its answer's first tokens joins the `verify` call, fed after the prompt. Each row's
        logits are then gathered in row order: a prefill row's prompt end, then its guess."""
        start, start_cpu = time.perf_counter(), time.thread_time()
        w, cache = self.weights, self.cache
        n_prefill = len(output.prefill_ids)
        drafts = [*(output.prefill_drafts or [[]] * n_prefill), *output.decode_drafts]
        chunks = [[token, *draft] for token, draft in zip(output.decode_tokens, output.decode_drafts, strict=True)]
        chunk_slots, chunk_positions = list(output.decode_slots), list(output.decode_positions)
        prefill_guesses = []  # the prefill rows with a guess, whose chunks follow the decode rows'
        for i, draft in enumerate(drafts[:n_prefill]):
            if draft:
                prefill_guesses.append(i)
                chunks.append(draft)
                chunk_slots.append(output.prefill_slots[i])
                chunk_positions.append(len(rows[i].prompt_token_ids))
        parts = []
        prompt_logprobs: dict[int, list[float]] = {}
        if n_prefill:
            last, prompt_logprobs = self._prefill(output, rows)
            parts.append(last)  # (P, V)
        if chunks:
            parts.append(verify(w, cache, chunks, chunk_slots, chunk_positions))  # (sum of lengths, V)
        packed = parts[0] if len(parts) == 1 else np.concatenate(parts)
        tails = [1] * n_prefill + [len(chunk) for chunk in chunks[: len(output.decode_ids)]]
        if prefill_guesses:
            logits, tails = _in_row_order(packed, n_prefill, chunks, prefill_guesses, tails)
        else:
            logits = packed
        forward_done, forward_done_cpu = time.perf_counter(), time.thread_time()
        chosen = np.argmax(logits, axis=-1).tolist()
        sampled: list[list[int]] = []
        picks = []  # (row, logits) of the sampled rows, which never carry a guess
        offsets = []
        offset = 0
        for i, request in enumerate(rows):
            draft = drafts[i]
            if draft:
                sampled.append(accept(chosen, draft, offset))
            else:
                sampled.append([chosen[offset]])
                if request.params.temperature > 0:
                    picks.append((i, logits[offset]))
            offsets.append(offset)
            offset += tails[i]
        drawn, errors = sample_rows(rows, picks)
        for i, token in drawn.items():
            sampled[i] = [token]
        logprobs: list[list[float]] | None = None
        asked = [i for i, request in enumerate(rows) if request.params.logprobs]
        if asked:
            logit_rows = [offsets[i] + j for i in asked for j in range(len(sampled[i]))]
            values = chosen_logprobs(logits[logit_rows], [t for i in asked for t in sampled[i]]).tolist()
            logprobs = [[] for _ in rows]
            taken = 0
            for i in asked:
                n = len(sampled[i])
                logprobs[i] = values[taken : taken + n]
                taken += n
        return RunnerOutput(
            sampled,
            forward_done - start,
            forward_done_cpu - start_cpu,
            time.perf_counter() - forward_done,
            logprobs,
            errors,
            prompt_logprobs,
        )
