"""A real `corrige serve` with its limits on (the defaults: 20 requests and 20 sentences per second
per client address), two clients on their own loopback addresses: a heavy one that sends texts of
120 sentences three times a second, well within its request budget, and a well-behaved one that
sends single sentences one after another.

The heavy client's texts are counted in sentences: the first is served (its sentences spread at
its budget's rate past the burst of 100), and while it is being paid for the others are refused
with 429 `work_limited` and a `Retry-After` that the budget gives. The light client never fails.
The engine's queue is kept small (`MAX_WAITING=64`): before the work budget and the turns, the
heavy client's texts, 32 sentences in flight each, filled it, and both clients got 503 `overloaded`.

The load is bounded (about 3 s of heavy texts); latencies are printed for the record, never asserted
(`python -m corrige.bench.fairness` measures them, docs/api.md has the figures)."""

from __future__ import annotations

import math

from conftest import SERVE, base_env
from e2e_support import ServerProcess

from corrige.bench.fairness import run_fairness

SENTENCES = 120  # per heavy text
WORK_RATE = 20.0  # the default WORK_RATE_LIMIT


def test_a_client_sending_long_texts_is_refused_by_its_work_budget_and_the_other_client_is_served(model_dir, tmp_path):
    env = base_env(
        model_dir,
        CORRIGE_RATE_LIMIT="20",  # base_env turns the limits off; these are the defaults
        CORRIGE_WORK_RATE_LIMIT=str(WORK_RATE),
        CORRIGE_MAX_WAITING="64",
        CORRIGE_TRACING="false",
        CORRIGE_PORTAL_DB=str(tmp_path / "portal.sqlite"),
    )
    server = ServerProcess(SERVE, env, tmp_path / "server.log").start()
    try:
        report = run_fairness(
            server.url,
            heavy_rate=3.0,
            heavy_sentences=SENTENCES,
            light_requests=12,
            light_gap_s=0.1,
            settle_s=1.0,
            timeout_s=60.0,
        )
    finally:
        server.stop()
    print(report)
    heavy, unloaded, loaded = report["heavy"], report["light_unloaded"], report["light_loaded"]
    assert unloaded["failed"] == 0, report
    assert loaded["failed"] == 0, report  # not one 503 (nor anything else) for the well-behaved client
    statuses = heavy["statuses"]
    assert statuses.get(200, 0) >= 1, report  # a text within the budget's reach is served, not refused
    assert statuses.get(429, 0) >= 1 and set(heavy["codes"]) == {"work_limited"}, report
    assert 503 not in statuses and 0 not in statuses, report  # no overloaded engine, no client timeout
    # Retry-After from the budget: the debt of the texts admitted at its rate, one text's worth (two,
    # should two be admitted together on a slow machine), never the engine's 1 s
    most = math.ceil(2 * SENTENCES / WORK_RATE)
    assert heavy["retry_after_s"] and all(1 <= s <= most for s in heavy["retry_after_s"]), report
    assert max(heavy["retry_after_s"]) >= 2, report  # a text's debt takes more than a second to pay off
