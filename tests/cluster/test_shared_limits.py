"""The rate limit's buckets in PostgreSQL, shared by every server that points at it: two limiters
on two connections (what two replicas have) spend one bucket, at once or in turn, and never both
get its last token; a database out of reach lets requests through and says so in the log.

A real PostgreSQL (tests/web/postgres_support.py: Debian's package, initdb + pg_ctl in a temporary
directory; skipped, saying what to install, where it is missing)."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from postgres_support import start_postgres  # noqa: E402
from server_support import build_fixture_model  # noqa: E402

from corrige.server.guards import TokenBucketLimiter  # noqa: E402
from corrige.server.settings import Settings  # noqa: E402
from corrige.server.shared_limits import (  # noqa: E402
    TABLE,
    BucketStore,
    SharedBucketLimiter,
    limiter_factory,
    shared_limits_url,
)


@pytest.fixture(scope="module")
def postgres():
    yield from start_postgres()


def two_replicas(url: str, rate: float, burst: int) -> tuple[BucketStore, BucketStore, list[SharedBucketLimiter]]:
    one, two = BucketStore(url), BucketStore(url)
    return one, two, [SharedBucketLimiter(store, "client", rate, burst) for store in (one, two)]


def test_two_limiters_on_two_connections_spend_one_bucket_in_turn(postgres):
    url = postgres.fresh_url("limits")

    async def scenario():
        one, two, limiters = two_replicas(url, rate=0.001, burst=3)
        try:
            waits = [await limiters[i % 2].take("10.0.0.1") for i in range(6)]
            other = await limiters[1].take("10.0.0.2")  # another client: a bucket of its own
        finally:
            await one.close()
            await two.close()
        return waits, other

    waits, other = asyncio.run(scenario())
    assert waits[:3] == [0.0, 0.0, 0.0]
    # the fourth take, on either connection, finds the bucket empty: a token is 1,000 s away at 0.001/s
    assert all(900 < wait <= 1000 for wait in waits[3:]), waits
    assert other == 0.0


def test_concurrent_takes_from_two_connections_never_overspend(postgres):
    """40 takes at once, 20 on each connection, for a bucket of 5: exactly 5 get a token."""
    url = postgres.fresh_url("limits")

    async def scenario():
        one, two, limiters = two_replicas(url, rate=0.001, burst=5)
        try:
            await asyncio.gather(*(limiter.take("warm-up") for limiter in limiters))  # both connected
            return await asyncio.gather(*(limiters[i % 2].take("10.0.0.9") for i in range(40)))
        finally:
            await one.close()
            await two.close()

    waits = asyncio.run(scenario())
    assert sum(1 for wait in waits if wait == 0.0) == 5, waits


def test_the_work_budget_charges_a_text_whole_and_both_replicas_wait_for_the_debt(postgres):
    """A text of 10 sentences against a burst of 3 (corrige.server.admission): charged in one
    statement, below zero; either replica's check then waits for the same debt; another client's
    bucket is untouched."""
    url = postgres.fresh_url("limits")

    async def scenario():
        one, two, limiters = two_replicas(url, rate=0.001, burst=3)
        try:
            held = await limiters[0].charge("10.0.0.1", 10)
            waits = [await limiters[i].take("10.0.0.1", 0) for i in (0, 1)]  # a check takes nothing
            other = await limiters[1].take("10.0.0.2", 0)
        finally:
            await one.close()
            await two.close()
        return held, waits, other

    held, waits, other = asyncio.run(scenario())
    assert held == pytest.approx(3.0, abs=0.01)  # the burst: what the bucket held before the charge
    # from -7 to one whole sentence at 0.001/s: 8,000 s, on both connections
    assert all(7990 < wait <= 8000 for wait in waits), waits
    assert other == 0.0


def test_a_bucket_in_debt_is_kept_until_it_is_full_again(postgres):
    import psycopg

    url = postgres.fresh_url("limits")

    async def scenario(limiter, store):
        await limiter.charge("in-debt", 10)  # 1 - 10 = -9: full again 1 s later at 10/s
        await limiter.take("paid")  # full again 100 ms later
        await asyncio.sleep(0.3)
        store._pruned_at.clear()  # as if a minute had passed
        await limiter.take("kept")

    with_limiter(url, 10.0, scenario)
    with psycopg.connect(url, autocommit=True) as conn:
        keys = {key for (key,) in conn.execute(f"SELECT key FROM {TABLE}")}
    assert keys == {"in-debt", "kept"}


def with_limiter(url: str, rate: float, scenario):
    """`scenario(limiter, store)` run with one limiter (burst 1) on a connection of its own."""

    async def run():
        store = BucketStore(url)
        try:
            return await scenario(SharedBucketLimiter(store, "client", rate=rate, burst=1), store)
        finally:
            await store.close()

    return asyncio.run(run())


def test_a_bucket_refills_on_the_databases_clock(postgres):
    async def scenario(limiter, _):
        first, second = await limiter.take("a"), await limiter.take("a")
        await asyncio.sleep(0.1)  # two tokens' worth at 20/s; the bucket holds one
        return first, second, await limiter.take("a"), await limiter.take("a")

    first, second, third, fourth = with_limiter(postgres.fresh_url("limits"), 20.0, scenario)
    assert first == 0.0 and 0.0 < second <= 0.05  # a token comes every 50 ms
    assert third == 0.0 and fourth > 0.0  # refilled to the burst, no more


def test_the_table_is_unlogged_and_full_buckets_are_pruned(postgres):
    import psycopg

    url = postgres.fresh_url("limits")

    async def scenario(limiter, store):
        await limiter.take("gone")  # full again 100 ms later
        await asyncio.sleep(0.3)
        store._pruned_at.clear()  # as if a minute had passed
        await limiter.take("kept")

    with_limiter(url, 10.0, scenario)
    with psycopg.connect(url, autocommit=True) as conn:
        keys = {key for (key,) in conn.execute(f"SELECT key FROM {TABLE}")}
        (persistence,) = conn.execute("SELECT relpersistence FROM pg_class WHERE relname = %s", (TABLE,)).fetchone()
    assert keys == {"kept"}
    assert persistence == "u"  # unlogged: no write-ahead log, no flush per take


def test_a_database_out_of_reach_lets_requests_through_and_logs_it(tmp_path, caplog):
    url = f"postgresql://postgres@/postgres?host={tmp_path}&port=5432"  # no server on that socket

    async def scenario():
        store = BucketStore(url)
        limiter = SharedBucketLimiter(store, "client", rate=0.001, burst=1)
        return [await limiter.take("a") for _ in range(3)]

    with caplog.at_level(logging.WARNING, logger="corrige.server.shared_limits"):
        assert asyncio.run(scenario()) == [0.0, 0.0, 0.0]
    warnings = [r for r in caplog.records if "shared rate limits unavailable" in r.getMessage()]
    assert len(warnings) == 1  # once, not once a request


def test_the_store_follows_the_settings():
    url = "postgresql://db.internal/corrige"
    assert shared_limits_url(Settings()) is None
    assert shared_limits_url(Settings(database_url=url)) == url
    assert shared_limits_url(Settings(database_url=url, rate_limit_store="memory")) is None
    assert shared_limits_url(Settings(rate_limit_url=url + "2", database_url=url)) == url + "2"
    # refused where the settings are read (`corrige serve`'s options, the environment), not when the app is built
    with pytest.raises(ValidationError, match=r"postgresql needs a database.*CORRIGE_RATE_LIMIT_URL"):
        Settings(rate_limit_store="postgresql")
    assert shared_limits_url(Settings(rate_limit_store="postgresql", rate_limit_url=url)) == url
    with pytest.raises(ValueError, match="rate_limit_url must be a postgresql"):
        Settings(rate_limit_url="redis://cache/0")
    assert isinstance(limiter_factory(Settings())("client", 1.0, 2), TokenBucketLimiter)
    assert isinstance(limiter_factory(Settings(database_url=url))("client", 1.0, 2), SharedBucketLimiter)


def test_rate_limit_store_postgresql_without_a_url_stops_corrige_serve_before_it_starts(monkeypatch):
    from typer.testing import CliRunner

    from corrige.cli import app

    monkeypatch.delenv("CORRIGE_DATABASE_URL", raising=False)
    monkeypatch.delenv("CORRIGE_RATE_LIMIT_URL", raising=False)
    monkeypatch.setenv("CORRIGE_RATE_LIMIT_STORE", "postgresql")
    result = CliRunner().invoke(app, ["serve", "--port", "0"])
    assert result.exit_code == 2, result.output
    assert "rate_limit_store = postgresql needs a database" in result.output


def test_the_server_closes_its_limiter_connection_when_it_stops(postgres, tmp_path):
    """The limiter's connection opens on the first rate-limited request and is closed by the
    lifespan's end: PostgreSQL no longer lists it."""
    import psycopg
    from fastapi.testclient import TestClient

    from corrige.server.app import create_app

    name = "corrige-limits-close"
    settings = Settings(
        model_dir=build_fixture_model(tmp_path / "model"),
        rate_limit_url=postgres.fresh_url("limits") + f"&application_name={name}",
        **{"rate_limit": 100, "warmup": False, "engine_process": False, "access_log": False, "blas_threads": 0},
        trace_store=tmp_path / "traces.sqlite",
        portal_db=tmp_path / "portal.sqlite",
    )

    def connections() -> int:
        with psycopg.connect(postgres.url, autocommit=True) as conn:
            query = "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s"
            return conn.execute(query, (name,)).fetchone()[0]

    with TestClient(create_app(settings)) as client:
        assert connections() == 0  # opened on first use
        assert client.post("/v1/grammar/correct", json={"sentence": "She have two cats"}).status_code == 200
        assert connections() == 1
    deadline = time.monotonic() + 5  # the backend leaves pg_stat_activity once its process has exited
    while connections() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert connections() == 0


def test_the_benchmark_times_both_limiters_in_one_run(postgres):
    from corrige.bench.limits import measure_limits

    figures = measure_limits(postgres.fresh_url("bench"), calls=300, warmup=20)
    memory, shared = figures["memory"], figures["postgresql"]
    assert memory["calls"] == shared["calls"] == 300
    assert 0 < memory["median_us"] < shared["median_us"]  # a round trip to the database costs more than a dict
    assert shared["median_us"] <= shared["p95_us"]


@pytest.mark.exclusive  # compares the two limiters' timings: alone under -n 2
def test_corrige_bench_limits_reports_both_sides_per_run(postgres, tmp_path):
    """The command against a given database (the throwaway server is `PostgresServer`, which the
    `postgres` fixture itself runs): a table and JSON with both limiters' median and p95."""
    from typer.testing import CliRunner

    from corrige.cli import app

    out = tmp_path / "limits.json"
    url = postgres.fresh_url("bench")
    args = ["bench", "limits", "--database-url", url, "--calls", "200", "--warmup", "10", "--runs", "2", "--json", out]
    result = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "in memory median" in result.output and "PostgreSQL p95" in result.output
    report = json.loads(out.read_text())
    assert len(report["runs"]) == 2 and report["database"] == "given (--database-url)"
    summary = report["median_of_runs"]
    assert 0 < summary["memory"]["median_us"] < summary["postgresql"]["median_us"] <= summary["postgresql"]["p95_us"]
    assert report["server_version"].split(".")[0].isdigit()
