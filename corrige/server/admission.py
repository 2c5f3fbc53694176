"""Admission to the model: what a client's requests may ask of the engine, counted in its work.

The request budget (`guards.RateLimitMiddleware`) counts requests; one text of 5,000 characters
can be 395 sentences for the engine, so a client well within it could fill the engine's queue
alone. Two things stand between a request and the engine here:

* **The work budget** (`WorkBudget`): a token bucket per client address of `work_rate_limit`
  sentences per second (one sentence: one request to the engine: a sentence, each sentence of a
  batch, each piece of a text that the answer cache does not answer, a raw completion), and
  `work_burst` of them at once. A request of the model's routes is refused with 429
  `work_limited` before anything else is done with it while the client's bucket holds less
  than one sentence, with `Retry-After` the seconds until it holds one. Once admitted, its
  sentences are charged all together when the first goes to the engine (the bucket may go
  below zero: a text longer than the burst is not refused, it is paid off), and they go to
  the engine as the bucket holds them: the burst at once, the rest at `work_rate_limit` per
  second. A client's long text is spread over time instead of taking the engine whole, and its
  next request is refused until the text is paid for.
* **Fair turns** (`FairGate`): at most the engine's batch capacity of requests are in the
  engine at once; the rest wait here, one queue per client, and a place that frees goes to the
  clients in turn (round robin: deficit round robin with every sentence costing one), so a
  client with one sentence waits for at most one sentence of each other client, not for their
  texts. The waiting here counts against `queue_timeout_s` (504 `deadline_exceeded`, with what
  is left handed on to the engine), and `max_waiting` bounds it: past it, a client that holds
  its share of the waiting (`max_waiting` over the clients waiting) is refused with 503
  `overloaded`, one under its share still waits.

`rate_limit = 0` turns the work budget off with the other limits; the turns are always taken
(with one client they are first come, first served, as the engine's own queue).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from corrige.engine import DeadlineExceeded, Overloaded
from corrige.server.errors import ApiError
from corrige.server.guards import RateLimiter, TokenBucketLimiter
from corrige.server.settings import Settings
from corrige.server.shared_limits import LimiterFactory

WORK_LIMITED = "work_limited"


class WorkBudget:
    """Sentences per second per client (see the module's docstring), in a `RateLimiter`'s buckets:
    this process's, or those every replica shares in PostgreSQL."""

    def __init__(self, limiter: RateLimiter, clock: Callable[[], float] = time.monotonic) -> None:
        self.limiter = limiter
        self.rate = limiter.rate
        self.clock = clock

    async def check(self, client: str) -> None:
        """Raise 429 `work_limited` while the client's bucket holds less than one sentence."""
        wait_s = await self.limiter.take(client, 0.0)
        if wait_s > 0:
            retry = str(max(1, math.ceil(wait_s)))
            message = (
                f"this client's sentences for the model are spent (limit {self.rate:g} sentences/s; a text counts "
                f"each of its sentences); retry in {retry} s"
            )
            raise ApiError(429, WORK_LIMITED, message, {"Retry-After": retry})

    async def charge(self, client: str, cost: int) -> Schedule:
        """Charge a request's `cost` sentences: when each may go to the engine."""
        held = await self.limiter.charge(client, float(cost))
        return Schedule(held, self.rate, self.clock(), self.clock)


class Schedule:
    """When a request's sentences may go to the engine: the `n`th (from 0) once the bucket, which
    held `held` sentences when they were charged, has refilled to hold it."""

    def __init__(self, held: float, rate: float, at: float, clock: Callable[[], float]) -> None:
        self.held, self.rate, self.at, self.clock = held, rate, at, clock
        self.sent = 0

    def next_delay(self) -> float:
        """The seconds the next sentence waits (0: it may go now)."""
        n, self.sent = self.sent, self.sent + 1
        return max(0.0, (n + 1 - self.held) / self.rate - (self.clock() - self.at))


UNLIMITED: Schedule | None = None  # no work budget: every sentence goes at once


class FairGate:
    """At most `places` requests in the engine; the others wait here in per-client queues, served in
    turn (see the module's docstring). Used from the event loop only."""

    def __init__(self, places: int, max_waiting: int) -> None:
        if places < 1 or max_waiting < 1:
            raise ValueError(f"a gate needs places >= 1 and max_waiting >= 1, got {places} and {max_waiting}")
        self.places = places
        self.max_waiting = max_waiting
        self.in_engine = 0
        self.waiting = 0
        self._queues: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()  # in turn order

    def waiting_for(self, client: str) -> int:
        queue = self._queues.get(client)
        return len(queue) if queue else 0

    async def enter(self, client: str, timeout_s: float | None) -> None:
        """Wait for a place in the engine (`Overloaded` at once when the client's share of the waiting
        is full; `DeadlineExceeded` after `timeout_s`); `leave()` once the request is out of it."""
        if self.in_engine < self.places and not self._queues:
            self.in_engine += 1
            return
        queue = self._queues.get(client)
        mine = len(queue) if queue else 0
        share = max(1, self.max_waiting // (len(self._queues) + (queue is None)))
        if self.waiting >= self.max_waiting and mine >= share:
            whose = "" if mine == self.waiting else f", {mine} of them this client's (its share: {share})"
            raise Overloaded(f"{self.waiting} requests are already waiting (the limit){whose}; try again shortly")
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if queue is None:
            queue = self._queues[client] = deque()
        queue.append(turn)
        self.waiting += 1
        try:
            async with asyncio.timeout(timeout_s):
                await turn
        except BaseException as exc:
            if turn.done() and not turn.cancelled():  # given a place as it gave up: hand it on
                self.leave()
            else:
                turn.cancel()
                self._forget(client, turn)
            if isinstance(exc, TimeoutError):
                raise DeadlineExceeded(f"waited {timeout_s:g} s for the model (queue_timeout_s)") from None
            raise

    def leave(self) -> None:
        """A request left the engine: its place goes to the next client in turn."""
        self.in_engine -= 1
        while self.in_engine < self.places and self._queues:
            client, queue = self._queues.popitem(last=False)
            turn = queue.popleft()
            self.waiting -= 1
            if queue:
                self._queues[client] = queue  # to the back of the line
            if not turn.done():
                turn.set_result(None)
                self.in_engine += 1

    def _forget(self, client: str, turn: asyncio.Future[None]) -> None:
        queue = self._queues.get(client)
        if queue is None or turn not in queue:
            return  # already handed a (cancelled) turn by `leave`
        queue.remove(turn)
        self.waiting -= 1
        if not queue:
            del self._queues[client]


class Admission:
    """The work budget (None: off) and the engine's turns, for one engine."""

    def __init__(self, gate: FairGate, budget: WorkBudget | None, queue_timeout_s: float | None) -> None:
        self.gate = gate
        self.budget = budget
        self.queue_timeout_s = queue_timeout_s

    @classmethod
    def from_settings(cls, settings: Settings, make: LimiterFactory | None = None) -> Admission:
        """The settings' admission: as many places as the engine runs requests at once, and the work
        budget's buckets from `make` (`corrige.server.shared_limits.Limiters`; None: this process's memory)."""
        places = settings.engine_config().batch_capacity
        budget = None
        if settings.rate_limit > 0 and settings.work_rate_limit > 0:
            rate, burst = settings.work_rate_limit, settings.work_burst
            budget = WorkBudget(make("work", rate, burst) if make is not None else TokenBucketLimiter(rate, burst))
        return cls(FairGate(places, settings.max_waiting), budget, settings.queue_timeout_s)

    async def check(self, client: str) -> None:
        """429 `work_limited` while the client's work budget is spent."""
        if self.budget is not None:
            await self.budget.check(client)

    async def charge(self, client: str, cost: int) -> Schedule | None:
        """A request's sentences charged to its client: when each may go (None: all at once)."""
        if self.budget is None or cost <= 0:
            return UNLIMITED
        return await self.budget.charge(client, cost)

    async def enter(self, client: str, schedule: Schedule | None) -> float | None:
        """One request's way into the engine: its time in the schedule, then its turn at the gate;
        `leave()` once it is out of the engine. Returns how long it may still wait in the engine's
        own queue (None: the engine's setting)."""
        if schedule is not None and (delay := schedule.next_delay()) > 0:
            await asyncio.sleep(delay)
        start = time.monotonic()
        await self.gate.enter(client, self.queue_timeout_s)
        if self.queue_timeout_s is None:
            return None
        return max(1e-3, self.queue_timeout_s - (time.monotonic() - start))

    def leave(self) -> None:
        self.gate.leave()

    @asynccontextmanager
    async def turn(self, client: str, schedule: Schedule | None) -> AsyncIterator[float | None]:
        """`enter` and `leave` around a request that is done when the block ends."""
        left = await self.enter(client, schedule)
        try:
            yield left
        finally:
            self.leave()
