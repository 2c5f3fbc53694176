"""Rate limits shared by every replica: the token buckets in PostgreSQL.

One server keeps its buckets in memory (`corrige.server.guards.TokenBucketLimiter`). Replicas
behind one address must share them, or a client gets N times the limit. When
`rate_limit_store` is `postgresql` (or `auto` with a PostgreSQL URL: `rate_limit_url`, else the
portal's `database_url`), each bucket is a row of one table, and taking a token is one statement
(`_TAKE`): an `INSERT ... ON CONFLICT DO UPDATE` that refills the row from the time elapsed on the
database's clock (so replicas on machines whose clocks differ agree) and takes a token when one
is there. The row lock that statement holds makes two replicas' takes of the last token happen
one after the other: the second sees none left.

The table is `UNLOGGED`: no write-ahead log, so a take costs no disk flush; a crash of
PostgreSQL empties it, which leaves every client a full bucket (the same as a restart of one
server). Buckets that would be full again are deleted now and then (`PRUNE_EVERY_S`).

When the database cannot be reached the limit is not enforced (fail open, logged at most once a
minute) and the connection is tried again after `RETRY_S`: refusing every request because the
limiter's store is down would turn a lost database into a lost service. Each server process has
one connection, used from its event loop (psycopg's async connection runs one statement at a
time; a take is well under a millisecond on a local socket).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from corrige.server.guards import RateLimiter, TokenBucketLimiter
from corrige.server.settings import Settings

logger = logging.getLogger(__name__)

TABLE = "corrige_rate_buckets"
TIMEOUT_S = 1.0  # a take that waits longer than this lets the request through
RETRY_S = 1.0  # after a failure, requests pass without a take for this long before a new connection
PRUNE_EVERY_S = 60.0
WARN_EVERY_S = 60.0
_LOCK_ID = 0x636F72726967  # pg_advisory_xact_lock key: replicas starting together create the table once

_CREATE = f"""
CREATE UNLOGGED TABLE IF NOT EXISTS {TABLE} (
    bucket  text             NOT NULL,  -- the limit: client, tools, session
    key     text             NOT NULL,  -- who: a client address, a learner
    tokens  double precision NOT NULL,  -- left after the last take
    updated double precision NOT NULL,  -- the database's clock at the last take, Unix seconds
    granted boolean          NOT NULL,  -- whether the last take got a token
    PRIMARY KEY (bucket, key)
)
"""
# the bucket refilled from the time since its last take (never backwards: a statement that began
# earlier may get the row lock later), capped at the burst
_REFILLED = "LEAST(%(burst)s, b.tokens + GREATEST(0, EXCLUDED.updated - b.updated) * %(rate)s)"
# a take costs `cost` (1 for a request) when the bucket holds a whole token; it may go below zero
_TAKE = f"""
INSERT INTO {TABLE} AS b (bucket, key, tokens, updated, granted)
VALUES (%(bucket)s, %(key)s, %(burst)s - %(cost)s, extract(epoch FROM clock_timestamp()), true)
ON CONFLICT (bucket, key) DO UPDATE SET
    tokens = CASE WHEN {_REFILLED} >= 1 THEN {_REFILLED} - %(cost)s ELSE {_REFILLED} END,
    granted = {_REFILLED} >= 1,
    updated = GREATEST(b.updated, EXCLUDED.updated)
RETURNING tokens, granted
"""
# a charge costs `cost` whatever the bucket holds, and says what it held before
_CHARGE = f"""
INSERT INTO {TABLE} AS b (bucket, key, tokens, updated, granted)
VALUES (%(bucket)s, %(key)s, %(burst)s - %(cost)s, extract(epoch FROM clock_timestamp()), true)
ON CONFLICT (bucket, key) DO UPDATE SET
    tokens = {_REFILLED} - %(cost)s,
    granted = true,
    updated = GREATEST(b.updated, EXCLUDED.updated)
RETURNING tokens + %(cost)s
"""
# the rows that are full again: a bucket in debt takes longer to refill than an empty one
_PRUNE = f"""
DELETE FROM {TABLE}
WHERE bucket = %(bucket)s AND updated + (%(burst)s - tokens) / %(rate)s < extract(epoch FROM clock_timestamp())
"""


class BucketStore:
    """The connection to the buckets' database, opened on first use in the running event loop."""

    def __init__(self, url: str, timeout_s: float = TIMEOUT_S) -> None:
        self.url = url
        self.timeout_s = timeout_s
        self._conn = None  # psycopg.AsyncConnection
        self._loop: asyncio.AbstractEventLoop | None = None
        self._connecting: asyncio.Lock | None = None
        self._retry_at = 0.0
        self._warned_at = -WARN_EVERY_S
        self._pruned_at: dict[str, float] = {}
        self._errors: tuple[type[BaseException], ...] = (OSError, TimeoutError, ImportError)
        try:
            import psycopg  # the `postgres` extra

            self._errors = (OSError, TimeoutError, psycopg.Error)
        except ImportError:  # every take fails open, saying what is missing
            pass

    async def take(self, bucket: str, key: str, rate: float, burst: float, cost: float = 1.0) -> float:
        """Take `cost` tokens from `bucket`'s row for `key` if it holds a whole one: 0.0, or the
        seconds until it does. 0.0 too while the database cannot be reached (see the module's docstring)."""
        row = await self._run(_TAKE, bucket, key, rate, burst, cost)
        if row is None:
            return 0.0
        tokens, granted = row
        return 0.0 if granted else (1.0 - tokens) / rate

    async def charge(self, bucket: str, key: str, rate: float, burst: float, cost: float) -> float:
        """Take `cost` tokens from `bucket`'s row for `key` whatever it holds: what it held before.
        The burst while the database cannot be reached (nothing is held back)."""
        row = await self._run(_CHARGE, bucket, key, rate, burst, cost)
        return burst if row is None else row[0]

    async def _run(self, statement: str, bucket: str, key: str, rate: float, burst: float, cost: float):
        """One statement on the bucket's row: its row, or None when the database cannot be reached."""
        now = time.monotonic()
        if now < self._retry_at:
            return None
        try:
            conn = await self._connection()
            params = {"bucket": bucket, "key": key, "rate": rate, "burst": burst, "cost": cost}
            cursor = await asyncio.wait_for(conn.execute(statement, params), self.timeout_s)
            row = await cursor.fetchone()
            if now - self._pruned_at.get(bucket, -PRUNE_EVERY_S) >= PRUNE_EVERY_S:
                self._pruned_at[bucket] = now
                prune = {"bucket": bucket, "burst": burst, "rate": rate}
                await asyncio.wait_for(conn.execute(_PRUNE, prune), self.timeout_s)
        except self._errors as exc:
            self._failed(exc)
            return None
        return row

    async def _connection(self):
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a new event loop (tests run several): its own connection
            self._conn, self._loop, self._connecting = None, loop, asyncio.Lock()
        assert self._connecting is not None
        async with self._connecting:
            if self._conn is None or self._conn.closed:
                self._conn = await asyncio.wait_for(self._connect(), self.timeout_s * 5)
        return self._conn

    async def _connect(self):
        import psycopg

        conn = await psycopg.AsyncConnection.connect(self.url, autocommit=True)
        try:
            await conn.execute("SET synchronous_commit = off")  # nothing to flush: the table is unlogged
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_ID,))
                await conn.execute(_CREATE)
        except BaseException:
            await conn.close()
            raise
        logger.info("rate limits shared through PostgreSQL (%s)", TABLE)
        return conn

    def _failed(self, exc: BaseException) -> None:
        now = time.monotonic()
        self._retry_at = now + RETRY_S
        conn, self._conn = self._conn, None
        if conn is not None and not conn.closed:
            asyncio.get_running_loop().create_task(conn.close())
        if now - self._warned_at >= WARN_EVERY_S:
            self._warned_at = now
            logger.warning("shared rate limits unavailable, requests pass unlimited for now: %r", exc)

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and self._loop is asyncio.get_running_loop():
            await conn.close()


class SharedBucketLimiter:
    """A `RateLimiter` whose buckets are rows in PostgreSQL, shared by every server that uses it."""

    def __init__(self, store: BucketStore, name: str, rate: float, burst: int) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError(f"a token bucket needs rate > 0 and burst >= 1, got {rate} and {burst}")
        self.store = store
        self.name = name
        self.rate = rate
        self.burst = float(burst)

    async def take(self, key: str, cost: float = 1.0) -> float:
        return await self.store.take(self.name, key, self.rate, self.burst, cost)

    async def charge(self, key: str, cost: float) -> float:
        return await self.store.charge(self.name, key, self.rate, self.burst, cost)


LimiterFactory = Callable[[str, float, int], RateLimiter]


def shared_limits_url(settings: Settings) -> str | None:
    """The PostgreSQL that holds the buckets, or None for buckets in this process's memory
    (`rate_limit_store = postgresql` without a URL is refused by the settings themselves)."""
    if settings.rate_limit_store == "memory":
        return None
    url = settings.rate_limit_url or settings.database_url
    return None if url is None else url.get_secret_value()


class Limiters:
    """`make(name, rate, burst)`: a limiter per named limit, all in memory or all in PostgreSQL
    (one connection for all of them, closed by `close` when the server stops)."""

    def __init__(self, settings: Settings) -> None:
        url = shared_limits_url(settings)
        self.store = BucketStore(url) if url is not None else None

    def __call__(self, name: str, rate: float, burst: int) -> RateLimiter:
        if self.store is None:
            return TokenBucketLimiter(rate, burst)
        return SharedBucketLimiter(self.store, name, rate, burst)

    async def close(self) -> None:
        if self.store is not None:
            await self.store.close()


def limiter_factory(settings: Settings) -> Limiters:
    """The settings' limiters (see `Limiters`)."""
    return Limiters(settings)
