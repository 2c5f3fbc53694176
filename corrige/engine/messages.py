"""The messages between `EngineProcess` (the server's process) and the engine child, one class each.

Parent to child: `AddRequest`, `AbortRequest`, `CloseEngine`. Child to parent: `Ready` once,
then one `StepOutputs` per engine step that has events (with every step's stats since the last
one, and the child's `CoreState`). They are frozen slotted dataclasses, pickled through a
`multiprocessing` pipe; a request's error travels inside its `RequestOutput` as the
`EngineError` subclass it was raised as, so its `code` is the same on both sides.

An add carries what the parent's front end has already checked (`validate_prompt`, the
`max_waiting` admission, unique ids): the child takes it as it is. Whatever else arrives is
refused by `expect`, which names what came and what was expected.
"""

from __future__ import annotations

from dataclasses import dataclass

from corrige.engine.request import RequestOutput, SamplingParams, TokenEvent
from corrige.engine.stats import EngineSnapshot, StepStats


@dataclass(frozen=True, slots=True)
class AddRequest:
    """Serve a request; the child's core loop queues it as it is."""

    request_id: str
    prompt_token_ids: list[int]
    params: SamplingParams
    queue_timeout_s: float | None  # how long it may wait for a slot from when the child reads it (None: the config's)
    stream: bool  # a `TokenEvent` per token, or only the final output


@dataclass(frozen=True, slots=True)
class AbortRequest:
    """Abort a request, waiting or running; an id the child does not hold changes nothing."""

    request_id: str


@dataclass(frozen=True, slots=True)
class CloseEngine:
    """End every request in flight with `EngineClosed`, send the last outputs, and exit."""


@dataclass(frozen=True, slots=True)
class CoreState:
    """The child's state for the parent's admission checks and `snapshot()`."""

    snapshot: EngineSnapshot
    received: int  # adds the child has taken from the pipe: the rest are still on their way
    free: int  # places its next step can still fill without a request waiting


@dataclass(frozen=True, slots=True)
class Ready:
    """The child built its model and serves."""

    state: CoreState


@dataclass(frozen=True, slots=True)
class StepOutputs:
    """One send from the child: the events of a step (or of a worker's token, or of aborts), in
    order, with the stats of the steps since the last send and the state after them."""

    events: list[TokenEvent | RequestOutput]
    steps: list[StepStats]
    state: CoreState


ToCore = AddRequest | AbortRequest | CloseEngine
TO_CORE: tuple[type, ...] = (AddRequest, AbortRequest, CloseEngine)


class UnknownMessage(TypeError):
    """Something that is not one of the engine pipe's messages came through it."""


def expect(message: object, kinds: tuple[type, ...]) -> None:
    """Raise `UnknownMessage` unless `message` is one of `kinds` (`TO_CORE`, or one class)."""
    if not isinstance(message, kinds):
        names = ", ".join(kind.__name__ for kind in kinds)
        raise UnknownMessage(f"the engine pipe carries {names}; got a {type(message).__name__}: {message!r:.200}")
