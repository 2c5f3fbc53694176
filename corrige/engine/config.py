"""Engine configuration: which serving policy, and the limits that keep every queue bounded."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Policy(StrEnum):
    """How concurrent requests share the model."""

    NONE = "none"  # one request at a time, first come first served
    THREADS = "threads"  # each request unbatched on one of N worker threads
    STATIC = "static"  # gather a batch, run it until every member finishes
    CONTINUOUS = "continuous"  # admit and retire requests between decode steps


@dataclass(frozen=True)
class EngineConfig:
    """Knobs of the engine. Defaults suit the `seed` model (64-token window) on a small CPU, and are
    what `corrige serve` runs: the server's settings take their defaults from here
    (`corrige.server.settings`), so `Engine(weights)` behaves as the server's engine does."""

    policy: Policy = Policy.CONTINUOUS
    n_slots: int = 64  # KV cache slots, each a whole context window: the most requests in flight
    # the most requests in one model call (static and continuous); 0: as many as there are slots.
    # Half the slots by default: the engine process and the server share the CPU, and while the
    # server reads one half's answers the engine decodes the other half (docs/BENCHMARKS.md,
    # "Half the slots in a batch": 1.11x the corrections/s of a full batch on the reader at 64 clients)
    max_batch: int = 32
    max_wait_ms: float = 5.0  # static: how long the oldest waiting request waits for a batch to fill
    max_waiting: int = 256  # queued requests beyond this are refused with `Overloaded`
    prefill_token_budget: int = 256  # continuous: prompt tokens admitted per step (one prompt always fits)
    queue_timeout_s: float | None = 10.0  # waiting longer than this for a slot fails with `DeadlineExceeded`
    n_threads: int = 4  # threads: worker threads, each running one request at a time
    # Speculative decoding by prompt lookup (none, static, continuous; greedy requests only): each
    # step also feeds up to this many guessed tokens per request and keeps those greedy agrees
    # with, so the output is unchanged and a request needs fewer steps (docs/BENCHMARKS.md). 0 turns it off.
    speculative_tokens: int = 8
    speculative_token_budget: int = 32  # guessed tokens per step in all, shared by the running requests
    # Scoring requests (`SamplingParams.prompt_logprobs`) start from the keys and values of an earlier
    # scored prompt that begins the same way, still in its slot, instead of computing them again
    # (prefix reuse; docs/BENCHMARKS.md, "Scoring candidates"). False computes every prompt whole.
    prefix_reuse: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "policy", Policy(self.policy))
        for name in ("n_slots", "max_waiting", "prefill_token_budget", "n_threads"):
            if getattr(self, name) < 1:
                raise ValueError(f"EngineConfig.{name} must be at least 1, got {getattr(self, name)}")
        for name in ("max_batch", "speculative_tokens", "speculative_token_budget"):
            if getattr(self, name) < 0:
                raise ValueError(f"EngineConfig.{name} must not be negative, got {getattr(self, name)}")
        if self.max_wait_ms < 0:
            raise ValueError(f"EngineConfig.max_wait_ms must not be negative, got {self.max_wait_ms}")
        if self.queue_timeout_s is not None and self.queue_timeout_s <= 0:
            raise ValueError(f"EngineConfig.queue_timeout_s must be positive or None, got {self.queue_timeout_s}")
        if self.policy is Policy.THREADS and self.n_threads > self.n_slots:
            raise ValueError(f"the threads policy needs a slot per thread: n_threads={self.n_threads} > n_slots")

    @property
    def batch_capacity(self) -> int:
        """The most requests that can run at once under this policy."""
        if self.policy is Policy.NONE:
            return 1
        if self.policy is Policy.THREADS:
            return self.n_threads
        return min(self.max_batch or self.n_slots, self.n_slots)
