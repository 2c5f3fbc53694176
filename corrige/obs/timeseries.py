"""Queue depth and batch size over time, for the dashboard: the engine's steps folded into fixed
time buckets in a ring buffer.

`on_step` runs on the engine's loop thread after every model step, so it only adds a few numbers
to the current bucket under a lock (a microsecond or two); `snapshot()` copies the buckets out
for the API, with idle stretches filled with zeros.

    history = StepHistory()
    engine.subscribe(on_step=history.on_step)
    history.snapshot()   # {"t": [...unix seconds...], "waiting_mean": [...], "batch_mean": [...], ...}
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

from corrige.obs.records import StepStats

_SERIES = ("steps", "batch_mean", "batch_max", "waiting_mean", "waiting_max", "running_max", "tokens", "busy")


class _Bucket:
    """The steps that ended within one bucket of time."""

    __slots__ = (
        "key",
        "steps",
        "batch_sum",
        "batch_max",
        "waiting_sum",
        "waiting_max",
        "running_max",
        "tokens",
        "busy_s",
    )

    def __init__(self, key: int) -> None:
        self.key = key
        self.steps = self.batch_sum = self.batch_max = self.waiting_sum = self.waiting_max = 0
        self.running_max = self.tokens = 0
        self.busy_s = 0.0


class StepHistory:
    """Per-bucket aggregates of the engine's steps over the last `window_s` seconds.

    `clock` must be the engine's clock (`StepStats.time`; `time.monotonic` unless the engine was
    given another), so buckets can be placed on the wall-clock axis."""

    def __init__(
        self, bucket_s: float = 0.25, window_s: float = 120.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if bucket_s <= 0 or window_s < bucket_s:
            raise ValueError(f"need 0 < bucket_s <= window_s, got bucket_s={bucket_s}, window_s={window_s}")
        self.bucket_s = bucket_s
        self.capacity = round(window_s / bucket_s)
        self._clock = clock
        self._lock = threading.Lock()
        self._done: deque[_Bucket] = deque(maxlen=self.capacity)
        self._current: _Bucket | None = None

    def on_step(self, stats: StepStats) -> None:
        key = int(stats.time // self.bucket_s)
        with self._lock:
            bucket = self._current
            if bucket is None or bucket.key != key:
                if bucket is not None:
                    self._done.append(bucket)
                bucket = self._current = _Bucket(key)
            bucket.steps += 1
            bucket.batch_sum += stats.batch_size
            bucket.waiting_sum += stats.num_waiting
            bucket.tokens += stats.num_output_tokens or stats.batch_size  # 0: one token per request
            bucket.busy_s += stats.step_s
            if stats.batch_size > bucket.batch_max:
                bucket.batch_max = stats.batch_size
            if stats.num_waiting > bucket.waiting_max:
                bucket.waiting_max = stats.num_waiting
            if stats.num_running > bucket.running_max:
                bucket.running_max = stats.num_running

    def snapshot(self, window_s: float | None = None) -> dict:
        """The last `window_s` seconds (default: all the buffer holds), one value per bucket, oldest
        first; buckets without a step are zeros (the engine was idle). `t` is each bucket's start in
        Unix seconds."""
        now, wall = self._clock(), time.time()
        with self._lock:
            buckets = [*self._done, *([self._current] if self._current is not None else [])]
            rows = {
                b.key: (
                    b.steps,
                    b.batch_sum / b.steps,
                    b.batch_max,
                    b.waiting_sum / b.steps,
                    b.waiting_max,
                    b.running_max,
                    b.tokens,
                    min(b.busy_s / self.bucket_s, 1.0),
                )
                for b in buckets
            }
        n = self.capacity if window_s is None else max(1, min(self.capacity, round(window_s / self.bucket_s)))
        last = int(now // self.bucket_s)
        keys = range(last - n + 1, last + 1)
        idle = (0, 0.0, 0, 0.0, 0, 0, 0, 0.0)
        columns = list(zip(*(rows.get(key, idle) for key in keys), strict=True))
        series = {
            name: [round(v, 3) if isinstance(v, float) else v for v in column]
            for name, column in zip(_SERIES, columns, strict=True)
        }
        return {
            "bucket_s": self.bucket_s,
            "now": round(wall, 3),
            "t": [round(wall - (now - key * self.bucket_s), 3) for key in keys],
            **series,
        }
