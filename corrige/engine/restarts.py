"""When to restart a dead engine process, and when to give up.

A child that died once is restarted at once; one that keeps dying is restarted after a wait
that doubles each time (`backoff_s`, 2 x, 4 x, ... up to `max_backoff_s`), and one that died more
than `max_per_minute` times within the last minute is given up: something is wrong that a
restart does not fix (a model that cannot load, memory it cannot get), and whatever runs the
server should see it fail rather than a server that flaps. With a standby child
(`EngineProcess(standby=True)`) the standby takes over at once, and the wait delays the start of
the next standby instead.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

WINDOW_S = 60.0


@dataclass(frozen=True)
class RestartPolicy:
    max_per_minute: int = 5  # restarts within any 60 s; one more death gives up (0: never restart)
    backoff_s: float = 0.5  # the wait before the second restart within a minute; doubles after
    max_backoff_s: float = 8.0  # the longest wait (never shorter than backoff_s)

    def __post_init__(self) -> None:
        if self.max_per_minute < 0 or self.backoff_s < 0 or self.max_backoff_s < 0:
            raise ValueError(f"a restart policy's counts and waits must not be negative: {self}")


class RestartBudget:
    """Counts deaths over the last minute; `next_delay()` at each death says how long to wait
    before the restart, or None: give up."""

    def __init__(self, policy: RestartPolicy, clock: Callable[[], float] = time.monotonic) -> None:
        self.policy = policy
        self._clock = clock
        self._deaths: deque[float] = deque()

    def next_delay(self) -> float | None:
        now = self._clock()
        while self._deaths and now - self._deaths[0] >= WINDOW_S:
            self._deaths.popleft()
        earlier = len(self._deaths)  # deaths within the minute before this one
        self._deaths.append(now)
        if earlier >= self.policy.max_per_minute:
            return None
        if earlier == 0:
            return 0.0
        longest = max(self.policy.max_backoff_s, self.policy.backoff_s)
        return min(self.policy.backoff_s * 2 ** (earlier - 1), longest)
