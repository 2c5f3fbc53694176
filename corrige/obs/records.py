"""What observability reads from the engine's records, as structural types.

`obs` sits below the engine (the engine and the server may use it; it imports neither), so
metrics and the step history name the fields they read here; `corrige.engine.stats.StepStats`,
`RequestStats`, `EngineSnapshot` and `corrige.engine.RequestOutput` have them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class StepRecord(Protocol):
    """One model step (`corrige.engine.stats.StepStats`)."""

    @property
    def time(self) -> float: ...
    @property
    def batch_size(self) -> int: ...
    @property
    def num_waiting(self) -> int: ...
    @property
    def num_running(self) -> int: ...
    @property
    def step_s(self) -> float: ...
    @property
    def num_output_tokens(self) -> int: ...
    @property
    def num_draft_tokens(self) -> int: ...
    @property
    def num_accepted_tokens(self) -> int: ...


class RequestRecord(Protocol):
    """Timings of one finished request (`corrige.engine.stats.RequestStats`)."""

    @property
    def num_prompt_tokens(self) -> int: ...
    @property
    def num_output_tokens(self) -> int: ...
    @property
    def queue_s(self) -> float | None: ...
    @property
    def ttft_s(self) -> float | None: ...
    @property
    def prefill_s(self) -> float | None: ...
    @property
    def inter_token_s(self) -> Sequence[float]: ...


class FinishedRecord(Protocol):
    """A finished request (`corrige.engine.RequestOutput`): its timings."""

    @property
    def stats(self) -> RequestRecord: ...


class SnapshotRecord(Protocol):
    """The engine's load at one moment (`corrige.engine.stats.EngineSnapshot`)."""

    @property
    def running(self) -> int: ...
    @property
    def waiting(self) -> int: ...
    @property
    def slots_used(self) -> int: ...
    @property
    def slots_total(self) -> int: ...
