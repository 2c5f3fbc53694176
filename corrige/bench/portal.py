"""`corrige bench portal`: what the learner portal adds on top of the model call.

One real `corrige serve` subprocess (rate limit off, its portal database in a temporary
directory). One learner session (cookie + CSRF token), one keep-alive httpx client. For each
round, the same quiz sentence goes through

* the portal's submit endpoint, `POST /portal/api/quiz/answer` (session and CSRF check,
  grading, the tutor model's correction of the sentence, the rule card, the audit record
  committed with a flushed WAL, the feedback HTML), and
* the grammar API, `POST /v1/grammar/correct` (the same model call behind plain HTTP),

and, for reference, the tutor page's `POST /portal/api/correct`. The order within a round
rotates, so a slow spell on a shared machine hits every path alike. Each request is timed
from the call to the parsed JSON. The sentences cycle over one question per error category:
after the warm-up every rule card is cached on both sides, as a fixed question bank is in
steady state, so the difference of the medians is the portal's own work.

With `--database postgresql://…`, a second server keeps its records in PostgreSQL (in a schema
of the run's own, dropped at the end), both run at once, and every round goes through both in
rotating order: the two submit overheads side by side, and their gap (target: within 2 ms).
"""

from __future__ import annotations

import logging
import os
import secrets
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from corrige.bench.machine import Series, series_ms, write_json
from corrige.bench.servers import LabServer, ServedBench
from corrige.tutor.agent import BUNDLED_MODEL

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

TARGET_OVERHEAD_P50_MS = 3.0
PATHS = {
    "portal": "POST /portal/api/quiz/answer (submit)",
    "grammar": "POST /v1/grammar/correct",
    "tutor_page": "POST /portal/api/correct (tutor page)",
}


def one_question_per_category(bank) -> list:
    return [questions[0] for _, questions in sorted(bank.by_category.items())]


BACKENDS = ("sqlite", "postgresql")
TARGET_BACKEND_GAP_MS = 2.0  # PostgreSQL's submit overhead, at most this much over SQLite's


@dataclass
class _Recorded:
    """One backend's measured rounds: client-side times per path, and what its server timed."""

    samples: dict[str, list[float]] = field(default_factory=lambda: {name: [] for name in PATHS})
    paired: list[float] = field(default_factory=list)  # portal minus grammar, round by round
    server_portal: dict[str, list[float]] = field(default_factory=dict)
    server_grammar_total: list[float] = field(default_factory=list)
    audit_rows: int = 0


def run_portal_bench(console: Console, settings: ServedBench, database: str | None = None) -> dict[str, Any]:
    """`settings.measured` rounds after `settings.warmup` on one server on SQLite; with `database` (a
    postgresql:// URL) a second one on PostgreSQL at the same time, every round going through both, so
    that their overheads are side by side."""
    rounds, warmup, model, batching = settings.measured, settings.warmup, settings.model, settings.batching
    if rounds < 1 or warmup < 0:
        raise ValueError("rounds must be positive and warmup not negative")
    from corrige.bench.machine import machine_info
    from corrige.portal.quiz import QuestionBank
    from corrige.tutor.retrieval import default_cache_dir

    logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per request otherwise
    backends = list(BACKENDS) if database else ["sqlite"]
    recorded = {b: _Recorded() for b in backends}
    started = time.perf_counter()
    # the bank the servers read (the machine's cache directory): built and checked once, not every run
    questions = one_question_per_category(QuestionBank.cached(default_cache_dir()))
    with ExitStack() as stack:
        servers, schema_url = _start_servers(stack, batching, model, database)
        clients = _sessions(stack, servers)
        where = " and ".join(f"{b} {servers[b].url}" for b in backends)
        console.print(
            f"servers ready ({where}); {warmup} warm-up + {rounds} measured rounds of {len(clients) * len(PATHS)}"
        )
        _run_rounds(clients, questions, recorded, warmup, rounds)
        recorded["sqlite"].audit_rows = _count_rows(servers["sqlite"].state_dir / "portal.sqlite")
        if schema_url:
            recorded["postgresql"].audit_rows = _count_pg_rows(schema_url)

    per_backend = {b: _figures(r) for b, r in recorded.items()}
    rows, figures = per_backend["sqlite"]
    met = figures["overhead_p50_ms"] <= TARGET_OVERHEAD_P50_MS
    command = f"corrige bench portal --rounds {rounds} --warmup {warmup} --batching {batching}"
    result = {
        "command": command + (" --database URL" if database else ""),
        "machine": machine_info("1"),
        "model": str(model) if model else f"bundled ({BUNDLED_MODEL.relative_to(BUNDLED_MODEL.parents[2])})",
        "settings": {"rounds": rounds, "warmup": warmup, "batching": batching, "questions": len(questions)},
        "series": [asdict(r) for r in rows],
        "figures": {k: round(v, 3) for k, v in figures.items()},
        "target": {"name": "overhead_p50_ms", "limit_ms": TARGET_OVERHEAD_P50_MS, "met": met},
        "audit_rows_written": recorded["sqlite"].audit_rows,
        "seconds": round(time.perf_counter() - started, 1),
    }
    _print(console, rows, figures, met, title="sqlite" if database else "")
    if database:
        _compare_backends(console, result, figures, per_backend["postgresql"], recorded["postgresql"].audit_rows)
    if settings.json_output:
        write_json(settings.json_output, result, console, ensure_ascii=False)
    return result


def _start_servers(
    stack: ExitStack, batching: str, model: Path | None, database: str | None
) -> tuple[dict[str, LabServer], str | None]:
    """The SQLite server, and with `database` the PostgreSQL one in a schema of its own; both load at once."""
    servers = {"sqlite": LabServer.corrige(batching, model)}
    schema_url = None
    if database:
        schema_url = stack.enter_context(bench_schema(database))
        servers["postgresql"] = LabServer.corrige(batching, model, extra=["--database-url", schema_url])
    for server in servers.values():
        stack.callback(server.stop)
        server.start()
    return servers, schema_url


def _sessions(stack: ExitStack, servers: dict[str, LabServer]) -> dict[str, tuple[httpx.Client, dict[str, str]]]:
    """A keep-alive client per server, with the CSRF header of its learner session."""
    import httpx

    clients = {}
    for backend, server in servers.items():
        server.wait_ready()
        client = stack.enter_context(httpx.Client(base_url=server.url, timeout=60))
        csrf = client.get("/portal/api/session").json()["csrf_token"]
        clients[backend] = (client, {"X-CSRF-Token": csrf})
    return clients


def _call(session: tuple[httpx.Client, dict[str, str]], backend: str, name: str, q: Any, i: int) -> tuple[float, dict]:
    """One request on one path, timed from the call to the parsed JSON."""
    client, headers = session
    if name == "portal":
        answer = q.expected if i % 2 else q.sentence  # graded exact and wrong alike
        args = ("/portal/api/quiz/answer", {"question_id": q.id, "answer": answer})
    elif name == "grammar":
        args = ("/v1/grammar/correct", {"sentence": q.sentence})
    else:
        args = ("/portal/api/correct", {"sentence": q.sentence})
    t0 = time.perf_counter()
    response = client.post(args[0], json=args[1], headers=headers)
    body = response.json()
    elapsed_ms = 1e3 * (time.perf_counter() - t0)
    if response.status_code != 200:
        raise RuntimeError(f"{backend}: {args[0]} answered {response.status_code}: {body}")
    return elapsed_ms, body


def _run_rounds(
    clients: dict[str, tuple[httpx.Client, dict[str, str]]],
    questions: list,
    recorded: dict[str, _Recorded],
    warmup: int,
    rounds: int,
) -> None:
    """Each round sends one question through every path of every backend, in an order that rotates."""
    calls = [(backend, name) for backend in recorded for name in PATHS]
    for i in range(warmup + rounds):
        q = questions[i % len(questions)]
        order = calls[i % len(calls) :] + calls[: i % len(calls)]
        times: dict[tuple[str, str], float] = {}
        for backend, name in order:
            times[backend, name], body = _call(clients[backend], backend, name, q, i)
            if i >= warmup and name == "portal":
                for stage, ms in body["timings_ms"].items():
                    recorded[backend].server_portal.setdefault(stage, []).append(ms)
            elif i >= warmup and name == "grammar":
                recorded[backend].server_grammar_total.append(body["timings_ms"]["total"])
        if i >= warmup:
            for (backend, name), ms in times.items():
                recorded[backend].samples[name].append(ms)
            for backend, r in recorded.items():
                r.paired.append(times[backend, "portal"] - times[backend, "grammar"])


def _compare_backends(
    console: Console,
    result: dict[str, Any],
    figures: dict[str, float],
    postgresql: tuple[list[Series], dict[str, float]],
    audit_rows: int,
) -> None:
    """PostgreSQL's figures beside SQLite's, and the gap of their submit overheads against its target."""
    pg_rows, pg_figures = postgresql
    gap = pg_figures["overhead_p50_ms"] - figures["overhead_p50_ms"]
    gap_paired = pg_figures["overhead_paired_median_ms"] - figures["overhead_paired_median_ms"]
    gap_met = gap <= TARGET_BACKEND_GAP_MS
    result["postgresql"] = {
        "series": [asdict(r) for r in pg_rows],
        "figures": {k: round(v, 3) for k, v in pg_figures.items()},
        "audit_rows_written": audit_rows,
    }
    result["backend_gap"] = {
        "overhead_p50_ms": round(gap, 3),
        "overhead_paired_median_ms": round(gap_paired, 3),
        "audit_p50_ms": round(pg_figures["server_portal_audit_p50_ms"] - figures["server_portal_audit_p50_ms"], 3),
        "limit_ms": TARGET_BACKEND_GAP_MS,
        "met": gap_met,
    }
    _print(console, pg_rows, pg_figures, pg_figures["overhead_p50_ms"] <= TARGET_OVERHEAD_P50_MS, "postgresql")
    verdict = "[green]met[/]" if gap_met else "[red]not met[/]"
    console.print(
        f"PostgreSQL vs SQLite, submit overhead at p50: {gap:+.2f} ms (paired medians {gap_paired:+.2f} ms; "
        f"audit write {result['backend_gap']['audit_p50_ms']:+.2f} ms); target <= {TARGET_BACKEND_GAP_MS:g} ms: "
        f"{verdict}"
    )


def _figures(recorded: _Recorded) -> tuple[list[Series], dict[str, float]]:
    import numpy as np

    rows = [series_ms(PATHS[name], recorded.samples[name]) for name in PATHS]
    portal, grammar, tutor_page = rows
    figures = {
        "portal_p50_ms": portal.p50_ms,
        "grammar_p50_ms": grammar.p50_ms,
        "overhead_p50_ms": portal.p50_ms - grammar.p50_ms,
        "overhead_paired_median_ms": float(np.median(recorded.paired)),
        "tutor_page_overhead_p50_ms": tutor_page.p50_ms - grammar.p50_ms,
        "server_grammar_total_p50_ms": float(np.median(recorded.server_grammar_total)),
        **{f"server_portal_{stage}_p50_ms": float(np.median(v)) for stage, v in recorded.server_portal.items()},
    }
    return rows, figures


@contextmanager
def bench_schema(database: str) -> Iterator[str]:
    """A schema of the bench's own in `database` (the URL given, `search_path` set to it), dropped
    at the end with its tables: the run leaves the database as it found it."""
    try:
        import psycopg
    except ImportError as exc:
        raise RuntimeError("--database needs psycopg: pip install 'corrige[postgres]'") from exc

    from corrige.portal.store import redact, with_search_path

    schema = f"corrige_bench_{os.getpid()}_{secrets.token_hex(4)}"
    try:
        with psycopg.connect(database, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
    except psycopg.Error as exc:
        raise RuntimeError(f"cannot make a schema in {redact(database)}: {exc}") from exc
    try:
        yield with_search_path(database, schema)
    finally:
        with psycopg.connect(database, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def _count_rows(db_path: Path) -> int:
    import sqlite3

    conn = sqlite3.connect(db_path)
    try:
        return conn.execute("SELECT COUNT(*) FROM submissions").fetchone()[0]
    finally:
        conn.close()


def _count_pg_rows(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute("SELECT COUNT(*) FROM submissions").fetchone()[0]


def _print(console: Console, rows: list[Series], figures: dict[str, float], met: bool, title: str = "") -> None:
    on = f" ({title})" if title else ""
    table = Table(title=f"learner portal vs grammar API, same sentences, one server{on}, interleaved")
    for name in ("path", "n", "p50 ms", "p95 ms", "mean ms"):
        table.add_column(name, justify="left" if name == "path" else "right")
    for r in rows:
        table.add_row(r.name, str(r.n), f"{r.p50_ms:.2f}", f"{r.p95_ms:.2f}", f"{r.mean_ms:.2f}")
    console.print(table)
    stages = Table(title=f"the portal submit's stages, as the server timed them{on} (p50 ms)")
    stages.add_column("stage")
    stages.add_column("p50 ms", justify="right")
    for key, value in figures.items():
        if key.startswith("server_portal_"):
            stages.add_row(key.removeprefix("server_portal_").removesuffix("_p50_ms"), f"{value:.3f}")
    stages.add_row("grammar API total (for comparison)", f"{figures['server_grammar_total_p50_ms']:.3f}")
    console.print(stages)
    verdict = "[green]met[/]" if met else "[red]not met[/]"
    console.print(
        f"portal overhead{on} at p50: {figures['overhead_p50_ms']:.2f} ms "
        f"(median of paired differences {figures['overhead_paired_median_ms']:.2f} ms); "
        f"target <= {TARGET_OVERHEAD_P50_MS:g} ms: {verdict}"
    )
