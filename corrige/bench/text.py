"""`corrige bench text`: a whole learner email against one of its sentences, end to end over HTTP.

A real `corrige serve` (`LabServer`, rate limit off) on a free loopback port; one client (one
keep-alive `httpx.Client`) sends, one request at a time, `POST /v1/grammar/correct` with the
email as `text` and with one sentence of it as `sentence`, interleaved (the order swapped every
round), so that a slow spell of a shared machine hits both alike. Each is timed from the call to
the parsed JSON. Around each request (outside the timed part) the engine's step counter is read:
the email's sentences should enter the same continuous-batching steps, so the email costs about
as many steps as its longest sentence, not the sum of them.

Target (issue 17): the email's p50 at most 2x the single sentence's. Those three kinds are sent
with `Cache-Control: no-cache`, so that every sentence goes to the model. A fourth kind is what an
editor sends next (LanguageTool's add-ons re-send the whole text after each change): the email
again with its last sentence edited, a new edit every round, answered by the server's answer cache
except for that sentence (`corrige/server/answer_cache.py`).
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from corrige.bench.machine import Series, machine_info, series, write_json
from corrige.bench.servers import LabServer, ServedBench
from corrige.model.blas import limit_blas_threads

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

# A learner's email of about 150 words: a greeting line, 7 sentences, a list of 2 items, line
# breaks; the errors are the ones Spanish speakers make (goed, she like, buyed, people is, ...).
EMAIL = """Dear Ana,

Thank you very much for your long email and for the beautiful photos of your holiday with your family at the beach.
Yesterday I goed to the new market near my house with my little sister after school. She like the fresh \
fruit there, so we buyed apples, oranges, some bread and a big melon for the weekend.
For the party on Saturday we still need two things from the shops:
- a big chocolate cake for twelve hungry people
- something cold to drink for all the little children
People is very friendly in this town, but the small shops in my street closes early on Saturday afternoon.
My brother don't want to come to the party because he has a exam on Monday morning.
Can you tell me what time the party start, and if I can bring my cousin Pablo with me, please?"""
# one sentence of it, short enough for the bundled model's window as a single request
SENTENCE = "Yesterday I goed to the new market near my house with my little sister after school."
assert SENTENCE in EMAIL

LAST_SENTENCE = "Can you tell me what time the party start, and if I can bring my cousin Pablo with me, please?"
assert EMAIL.endswith(LAST_SENTENCE)
# who the learner asks to bring, a different one in every round's edit
NAMES = tuple(
    """Pablo Lucía Marta Diego Sofía Javier Elena Carlos Inés Luis Carmen Jorge Paula Andrés Irene Raúl Sara
    Miguel Laura Hugo Alba Daniel Nuria Álvaro Rosa Sergio Julia Mario Clara Iván""".split()
)
RELATIVES = ("cousin", "friend", "neighbour", "brother", "sister", "classmate", "uncle", "aunt", "flatmate", "boss")
EDITS = len(NAMES) * len(RELATIVES)  # distinct edits


def edited_email(i: int) -> str:
    """The email after the learner fixed its last sentence ("the party start" → "starts") and changed who
    comes along, differently for each i < EDITS, so that no round finds that sentence answered before."""
    relative, name = divmod(i, len(NAMES))
    who = f"my {RELATIVES[relative]} {NAMES[name]}"
    edit = f"Can you tell me what time the party starts, and if I can bring {who} with me, please?"
    return EMAIL[: -len(LAST_SENTENCE)] + edit


PATH = "/v1/grammar/correct"
FRESH = {"Cache-Control": "no-cache"}  # every sentence read by the model, none answered from the answer cache
# `/v1/engine/stats` counters read around each request: model steps, tokens fed, the forward passes' CPU time
ENGINE_COUNTERS = ("steps", "prompt_tokens", "generated_tokens", "draft_tokens", "accepted_tokens", "model_cpu_s")
TARGET_RATIO = 2.0  # email p50 / sentence p50


def run_text_bench(console: Console, settings: ServedBench) -> dict[str, Any]:
    """`settings.measured` corrections of each (email, sentence), interleaved, after `settings.warmup` of each."""
    requests, warmup, model, batching = settings.measured, settings.warmup, settings.model, settings.batching
    if requests < 1 or warmup < 0:
        raise ValueError("requests must be positive, warmup not negative")
    if warmup + requests > EDITS:
        raise ValueError(f"at most {EDITS} rounds (warmup + requests): the re-checked email has that many edits")
    blas_limit = limit_blas_threads(1)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per request otherwise
    load_before = os.getloadavg() if hasattr(os, "getloadavg") else None
    started = time.perf_counter()
    recorded = _Recorded()
    _measure(console, LabServer.corrige(batching, model), recorded, warmup, requests)
    elapsed = time.perf_counter() - started
    rows, figures = _figures(recorded)
    ratio = figures["ratio_p50"]
    load_after = os.getloadavg() if hasattr(os, "getloadavg") else None
    result = {
        "machine": machine_info(blas_limit)
        | {"load_average_before": load_before and [round(x, 2) for x in load_before]}
        | {"load_average_after": load_after and [round(x, 2) for x in load_after]},
        "model": str(model) if model else "bundled (corrige/models/reader)",
        "settings": {"requests": requests, "warmup": warmup, "batching": batching, "clients": 1},
        "email": {"words": len(EMAIL.split()), "chars": len(EMAIL), **recorded.shape},
        "series": {name: vars(row) for name, row in rows.items()},
        "figures": figures,
        "target": {"ratio_p50": round(ratio, 3), "target": f"<= {TARGET_RATIO:g}", "met": ratio <= TARGET_RATIO},
        "seconds": elapsed,
    }
    _print(console, rows, figures, result)
    if settings.json_output:
        write_json(settings.json_output, result, console)
    return result


BODIES = {"email": {"text": EMAIL}, "sentence": {"sentence": SENTENCE}, "sentence_text": {"text": SENTENCE}}
KINDS = (*BODIES, "recheck")  # the re-checked email's body changes every round (`edited_email`)


@dataclass
class _Recorded:
    """Per request kind: client-side seconds, the server's own total, the engine's counters; and the email's shape."""

    samples: dict[str, list[float]] = field(default_factory=lambda: {name: [] for name in KINDS})
    server_ms: dict[str, list[float]] = field(default_factory=lambda: {name: [] for name in KINDS})
    work: dict[str, list[dict[str, float]]] = field(default_factory=lambda: {name: [] for name in KINDS})
    shape: dict[str, Any] = field(default_factory=dict)


def _measure(console: Console, server: LabServer, recorded: _Recorded, warmup: int, requests: int) -> None:
    """Every kind once a round, in an order that reverses each round, with a progress bar."""
    import httpx

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with server, httpx.Client(base_url=server.url, timeout=60) as client:
        with Progress(*columns, console=console, transient=True) as progress:
            task = progress.add_task(f"{server.url}: email and sentence, interleaved", total=warmup + requests)
            for i in range(warmup + requests):
                order = list(KINDS) if i % 2 == 0 else list(reversed(KINDS))
                for name in order:
                    _correct(server, client, name, i, recorded if i >= warmup else None, recorded.shape)
                progress.advance(task)


def _engine_counters(server: LabServer) -> dict[str, float]:
    stats = server.engine_stats() or {}
    return {key: float(stats.get(key, 0)) for key in ENGINE_COUNTERS}


def _correct(
    server: LabServer, client: httpx.Client, name: str, i: int, recorded: _Recorded | None, shape: dict[str, Any]
) -> None:
    """One request of one kind in round i, with the engine's counters read around it; recorded when measured."""
    body, headers = ({"text": edited_email(i)}, {}) if name == "recheck" else (BODIES[name], FRESH)
    before = _engine_counters(server)
    t0 = time.perf_counter()
    response = client.post(PATH, json=body, headers=headers)
    body = response.json()
    elapsed_s = time.perf_counter() - t0
    if response.status_code != 200:
        raise RuntimeError(f"the server answered {response.status_code}: {body}")
    if name == "email" and not shape:
        shape.update(sentences=len(body["sentences"]), pieces=sum(s["parts"] for s in body["sentences"]))
    if recorded is not None:
        recorded.samples[name].append(elapsed_s)
        recorded.server_ms[name].append(body["timings_ms"]["total"])
        after = _engine_counters(server)
        recorded.work[name].append({key: after[key] - before[key] for key in ENGINE_COUNTERS})


def _figures(recorded: _Recorded) -> tuple[dict[str, Series], dict[str, float]]:
    """The series of each kind, the email/sentence ratio of medians, and the engine's work per request."""
    import numpy as np

    samples, shape = recorded.samples, recorded.shape
    rows = {
        "email": series(
            f"email as `text` ({len(EMAIL.split())} words, {shape['sentences']} sentences)", samples["email"]
        ),
        "sentence": series("one sentence of it as `sentence`", samples["sentence"]),
        "sentence_text": series("the same sentence as `text`", samples["sentence_text"]),
        "recheck": series("the email again, its last sentence edited", samples["recheck"]),
    }
    figures: dict[str, float] = {
        "ratio_p50": rows["email"].p50_ms / rows["sentence"].p50_ms,
        "recheck_ratio_p50": rows["recheck"].p50_ms / rows["sentence"].p50_ms,
    }
    for name, row in rows.items():
        figures |= {f"{name}_p50_ms": row.p50_ms, f"{name}_p95_ms": row.p95_ms}
        figures[f"{name}_server_total_p50_ms"] = float(np.median(recorded.server_ms[name]))
        for key in ENGINE_COUNTERS:  # the engine's work for one request (steps, tokens, model CPU)
            figures[f"{name}_engine_{key}_p50"] = float(np.median([w[key] for w in recorded.work[name]]))
    return rows, figures


def tokens(figures: dict[str, float], key: str) -> float:
    """The tokens of one request's model work (p50s): its prompts read and its answers written."""
    return figures[f"{key}_engine_prompt_tokens_p50"] + figures[f"{key}_engine_generated_tokens_p50"]


def _print(console: Console, rows: dict[str, Series], figures: dict[str, float], result: dict[str, Any]) -> None:
    table = Table(title="a whole email vs one of its sentences, 1 client, over HTTP")
    columns = ("request", "n", "p50 ms", "p95 ms", "mean ms", "server p50 ms", "steps", "tokens", "model CPU ms")
    for name in columns:
        table.add_column(name, justify="left" if name == "request" else "right")
    for key, row in rows.items():
        table.add_row(
            row.name,
            str(row.n),
            f"{row.p50_ms:.2f}",
            f"{row.p95_ms:.2f}",
            f"{row.mean_ms:.2f}",
            f"{figures[f'{key}_server_total_p50_ms']:.2f}",
            f"{figures[f'{key}_engine_steps_p50']:g}",
            f"{tokens(figures, key):g}",
            f"{figures[f'{key}_engine_model_cpu_s_p50'] * 1e3:.2f}",
        )
    table.add_row("ratio email / sentence", "", f"x{figures['ratio_p50']:.2f}", *[""] * 6)
    table.add_row("ratio re-checked email / sentence", "", f"x{figures['recheck_ratio_p50']:.2f}", *[""] * 6)
    wide = console if console.is_terminal else Console(file=console.file, width=150)
    wide.print(table)
    goal = result["target"]
    mark = "[green]met[/]" if goal["met"] else "[red]not met[/]"
    console.print(f"{mark} email p50 / sentence p50 = {goal['ratio_p50']} (target {goal['target']})")
    console.print(f"re-checked email p50 / sentence p50 = {figures['recheck_ratio_p50']:.3f}")
