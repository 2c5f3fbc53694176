"""Run the tutor over an evaluation set and score it with `edit_metrics.evaluate`.

Generation (the expensive part) happens once per set; interpreting the outputs under a
`TutorConfig` is cheap, so abstention thresholds can be compared on the same generations.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from corrige.evaluation.edit_metrics import Metrics, Record, evaluate
from corrige.model.generate import Generation, greedy_generate_scored
from corrige.model.numpy_gpt import KVCache
from corrige.synth.data import load_realistic, make_splits
from corrige.tutor.agent import Correction, Tutor, TutorConfig
from corrige.tutor.token_codec import PromptTooLong


@dataclass(frozen=True)
class EvalItem:
    source: str
    reference: str
    categories: tuple[str, ...] = ()
    reference_gloss: str | None = None


@dataclass
class Generated:
    item: EvalItem
    generation: Generation | None  # None: the sentence did not fit the window
    prompt_tokens: int


def synthetic_items(split: str = "test", data_seed: int = 0, n: int = 2000) -> list[EvalItem]:
    """The held-out synthetic split (test and dev are generated first, so n_train does not change them)."""
    sizes = {"test": (0, 0, n), "dev": (0, n, n)}[split]
    examples = make_splits(data_seed, *sizes)[split]
    return [EvalItem(e.source, e.corrected, tuple(e.categories), e.gloss) for e in examples]


def realistic_items() -> list[EvalItem]:
    return [EvalItem(r.source, r.corrected, r.categories) for r in load_realistic()]


def generate_all(
    tutor: Tutor, items: Sequence[EvalItem], on_batch: Callable[[int], None] | None = None
) -> list[Generated]:
    out: list[Generated] = []
    bs = tutor.config.batch_size
    eos = tutor.tokenizer.special.eos
    for start in range(0, len(items), bs):
        chunk = items[start : start + bs]
        prompts: list[list[int] | None] = []
        for item in chunk:
            try:
                prompts.append(tutor.build_prompt(item.source))
            except PromptTooLong:
                prompts.append(None)
        runnable = [p for p in prompts if p is not None]
        gens = iter(
            greedy_generate_scored(
                tutor.weights,
                KVCache.allocate(tutor.weights.cfg, len(runnable)),
                runnable,
                max((tutor.max_new_tokens_for(len(p)) for p in runnable), default=0),
                eos_id=eos,
            )
            if runnable
            else []
        )
        for item, p in zip(chunk, prompts, strict=True):
            out.append(Generated(item, next(gens) if p is not None else None, len(p) if p else 0))
        if on_batch:
            on_batch(len(chunk))
    return out


def interpret_all(tutor: Tutor, generated: Sequence[Generated]) -> list[Correction]:
    corrections = []
    for g in generated:
        if g.generation is None:
            corrections.append(tutor._abstain(g.item.source, False, "prompt_too_long", 0, 0, 0.0))
        else:
            corrections.append(
                tutor.interpret(g.item.source, g.generation.tokens, g.generation.logprobs, g.prompt_tokens)
            )
    return corrections


def score(generated: Sequence[Generated], corrections: Sequence[Correction]) -> Metrics:
    return evaluate(
        Record(
            source=g.item.source,
            reference=g.item.reference,
            prediction=c.corrected,
            predicted_gloss=c.gloss,
            abstained=c.abstained,
            reference_categories=g.item.categories,
            reference_gloss=g.item.reference_gloss,
        )
        for g, c in zip(generated, corrections, strict=True)
    )


def threshold_sweep(tutor: Tutor, generated: Sequence[Generated], thresholds: Sequence[float]) -> dict[float, Metrics]:
    base = tutor.config
    results = {}
    for t in thresholds:
        tutor.config = replace(base, min_token_prob=t)
        results[t] = score(generated, interpret_all(tutor, generated))
    tutor.config = base
    return results


def correction_latency_ms(tutor: Tutor, sentences: Sequence[str], repeats: int = 3) -> dict[str, float]:
    """Batch-1 wall time of `tutor.correct` (tokenize + prefill + decode + interpret), in ms."""
    times, tokens_in, tokens_out = [], [], []
    for _ in range(repeats):
        for s in sentences:
            t0 = time.perf_counter()
            c = tutor.correct(s)
            times.append((time.perf_counter() - t0) * 1e3)
            tokens_in.append(c.prompt_tokens)
            tokens_out.append(c.completion_tokens)
    times.sort()
    return {
        "p50_ms": statistics.median(times),
        "p95_ms": times[int(0.95 * (len(times) - 1))],
        "mean_prompt_tokens": statistics.fmean(tokens_in),
        "mean_completion_tokens": statistics.fmean(tokens_out),
        "n": len(times),
    }


__all__ = [
    "EvalItem",
    "Generated",
    "TutorConfig",
    "correction_latency_ms",
    "generate_all",
    "interpret_all",
    "realistic_items",
    "score",
    "synthetic_items",
    "threshold_sweep",
]
