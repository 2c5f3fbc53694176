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
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from corrige.bench.servers import LabServer
from corrige.tutor.agent import BUNDLED_MODEL

log = logging.getLogger(__name__)

TARGET_OVERHEAD_P50_MS = 3.0
PATHS = {
    "portal": "POST /portal/api/quiz/answer (submit)",
    "grammar": "POST /v1/grammar/correct",
    "tutor_page": "POST /portal/api/correct (tutor page)",
}


@dataclass
class Series:
    path: str
    n: int
    p50_ms: float
    p95_ms: float
    mean_ms: float


def summarise(path: str, samples_ms: list[float]) -> Series:
    import numpy as np

    ms = np.asarray(samples_ms)
    return Series(path, len(ms), float(np.percentile(ms, 50)), float(np.percentile(ms, 95)), float(ms.mean()))


def one_question_per_category(bank) -> list:
    return [questions[0] for _, questions in sorted(bank.by_category.items())]


def run_portal_bench(
    console: Console,
    rounds: int = 300,
    warmup: int = 50,
    model: Path | None = None,
    batching: str = "continuous",
    json_output: Path | None = None,
) -> dict[str, Any]:
    if rounds < 1 or warmup < 0:
        raise ValueError("rounds must be positive and warmup not negative")
    import httpx
    import numpy as np

    from corrige.bench.engine import machine_info
    from corrige.portal.quiz import QuestionBank

    logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per request otherwise
    samples: dict[str, list[float]] = {name: [] for name in PATHS}
    paired: list[float] = []  # portal minus grammar, round by round
    server_portal: dict[str, list[float]] = {}
    server_grammar_total: list[float] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="corrige-bench-portal-") as tmp:
        state_dir = Path(tmp)
        questions = one_question_per_category(QuestionBank.cached(state_dir))
        server = LabServer.corrige(batching, model)
        with server, httpx.Client(base_url=server.url, timeout=60) as client:
            csrf = client.get("/portal/api/session").json()["csrf_token"]
            headers = {"X-CSRF-Token": csrf}

            def call(name: str, q, i: int) -> tuple[float, dict]:
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
                    raise RuntimeError(f"{args[0]} answered {response.status_code}: {body}")
                return elapsed_ms, body

            names = list(PATHS)
            console.print(f"server {server.url} ready; {warmup} warm-up + {rounds} measured rounds of {len(names)}")
            for i in range(warmup + rounds):
                q = questions[i % len(questions)]
                order = names[i % len(names) :] + names[: i % len(names)]
                times = {}
                for name in order:
                    times[name], body = call(name, q, i)
                    if i >= warmup and name == "portal":
                        for stage, ms in body["timings_ms"].items():
                            server_portal.setdefault(stage, []).append(ms)
                    elif i >= warmup and name == "grammar":
                        server_grammar_total.append(body["timings_ms"]["total"])
                if i >= warmup:
                    for name, ms in times.items():
                        samples[name].append(ms)
                    paired.append(times["portal"] - times["grammar"])
            audit_rows = _count_rows(server.state_dir / "portal.sqlite")

    rows = [summarise(PATHS[name], samples[name]) for name in PATHS]
    portal, grammar, tutor_page = rows
    figures = {
        "portal_p50_ms": portal.p50_ms,
        "grammar_p50_ms": grammar.p50_ms,
        "overhead_p50_ms": portal.p50_ms - grammar.p50_ms,
        "overhead_paired_median_ms": float(np.median(paired)),
        "tutor_page_overhead_p50_ms": tutor_page.p50_ms - grammar.p50_ms,
        "server_grammar_total_p50_ms": float(np.median(server_grammar_total)),
        **{f"server_portal_{stage}_p50_ms": float(np.median(v)) for stage, v in server_portal.items()},
    }
    met = figures["overhead_p50_ms"] <= TARGET_OVERHEAD_P50_MS
    result = {
        "command": f"corrige bench portal --rounds {rounds} --warmup {warmup} --batching {batching}",
        "machine": machine_info("1"),
        "model": str(model) if model else f"bundled ({BUNDLED_MODEL.relative_to(BUNDLED_MODEL.parents[2])})",
        "settings": {"rounds": rounds, "warmup": warmup, "batching": batching, "questions": len(questions)},
        "series": [asdict(r) for r in rows],
        "figures": {k: round(v, 3) for k, v in figures.items()},
        "target": {"name": "overhead_p50_ms", "limit_ms": TARGET_OVERHEAD_P50_MS, "met": met},
        "audit_rows_written": audit_rows,
        "seconds": round(time.perf_counter() - started, 1),
    }
    _print(console, rows, figures, met)
    if json_output:
        json_output.parent.mkdir(parents=True, exist_ok=True)
        json_output.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        console.print(f"wrote {json_output}")
    return result


def _count_rows(db_path: Path) -> int:
    import sqlite3

    conn = sqlite3.connect(db_path)
    try:
        return conn.execute("SELECT COUNT(*) FROM submissions").fetchone()[0]
    finally:
        conn.close()


def _print(console: Console, rows: list[Series], figures: dict[str, float], met: bool) -> None:
    table = Table(title="learner portal vs grammar API, same sentences, one server, interleaved")
    for name in ("path", "n", "p50 ms", "p95 ms", "mean ms"):
        table.add_column(name, justify="left" if name == "path" else "right")
    for r in rows:
        table.add_row(r.path, str(r.n), f"{r.p50_ms:.2f}", f"{r.p95_ms:.2f}", f"{r.mean_ms:.2f}")
    console.print(table)
    stages = Table(title="the portal submit's stages, as the server timed them (p50 ms)")
    stages.add_column("stage")
    stages.add_column("p50 ms", justify="right")
    for key, value in figures.items():
        if key.startswith("server_portal_"):
            stages.add_row(key.removeprefix("server_portal_").removesuffix("_p50_ms"), f"{value:.3f}")
    stages.add_row("grammar API total (for comparison)", f"{figures['server_grammar_total_p50_ms']:.3f}")
    console.print(stages)
    verdict = "[green]met[/]" if met else "[red]not met[/]"
    console.print(
        f"portal overhead at p50: {figures['overhead_p50_ms']:.2f} ms "
        f"(median of paired differences {figures['overhead_paired_median_ms']:.2f} ms); "
        f"target <= {TARGET_OVERHEAD_P50_MS:g} ms: {verdict}"
    )
