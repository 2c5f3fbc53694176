"""`corrige bench http`: one correction at a time through HTTP, against the same work in process.

A real `corrige serve` subprocess listens on a free loopback port (rate limit off). The bench
sends N sequential `POST /v1/grammar/correct` with one keep-alive `httpx.Client` and times each
from the call to the parsed JSON. In the same run, in this process, the same sentences go
through the same pipeline without HTTP: `Tutor.build_prompt` → `Engine.generate` (same engine
settings) → `Tutor.interpret`. Blocks of each alternate, so a slow spell on a shared machine
hits both alike. Reported: p50 / p95 / mean of each, the server's own `timings_ms.total`, a
`GET /healthz` round trip after each correction (the floor that the client, uvicorn and
FastAPI cost with no model work), the same correction from a minimal socket client (what
httpx itself costs), and the HTTP overhead as the difference and the ratio of the medians.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from corrige.bench.machine import Series, machine_info, numpy_blas, series, write_json
from corrige.bench.servers import LabServer
from corrige.model.blas import limit_blas_threads

if TYPE_CHECKING:
    import httpx

    from corrige.engine import Engine, EngineConfig
    from corrige.tutor.agent import Tutor

log = logging.getLogger(__name__)

# Learner sentences (errors of the kinds the tutor knows, and a few correct ones).
SENTENCES = (
    "Yesterday I goed to the store",
    "She like cats.",
    "He don't want to come with us.",
    "I have 20 years.",
    "We was very happy yesterday.",
    "My sister is more tall than me.",
    "I am agree with you.",
    "They buyed a new car last week.",
    "She is a engineer.",
    "I didn't went to school today.",
    "He has lived here since three years.",
    "People is very friendly here.",
    "I like play football.",
    "The house of my parents is big.",
    "She likes cats.",
    "We went to the beach on Sunday.",
)

# overhead_p50_ms: everything between an httpx client and the in-process pipeline (the client library,
# the engine process's pipe, rule cards included); http_layers_p50_ms: what the server's HTTP layers
# (the wire, uvicorn, ingress, validation, guards, tracing, the JSON answer) add over its own engine call
TARGETS = {"http_p50_ms": 10.0, "http_p95_ms": 15.0, "overhead_p50_ms": 1.0, "http_layers_p50_ms": 1.0}


TUTOR_STAGES = ("tokenize", "format", "rules")  # the server's stages that are the tutor's work, not HTTP's


class _RawClient:
    """A minimal keep-alive HTTP/1.1 client on a plain socket: what the same request costs without
    httpx's machinery (it knows only Content-Length bodies, which is all the server sends here)."""

    def __init__(self, port: int) -> None:
        import socket

        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def post_json(self, path: str, payload: dict) -> dict:
        body = json.dumps(payload).encode()
        head = f"POST {path} HTTP/1.1\r\nhost: bench\r\ncontent-type: application/json\r\n"
        self.sock.sendall(f"{head}content-length: {len(body)}\r\n\r\n".encode() + body)
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self._recv()
        header, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        length = next(
            int(line.split(b":", 1)[1]) for line in header.split(b"\r\n") if line.lower().startswith(b"content-length:")
        )
        while len(self.buffer) < length:
            self.buffer += self._recv()
        data, self.buffer = self.buffer[:length], self.buffer[length:]
        if not header.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"the server answered {header.splitlines()[0]!r}: {data[:200]!r}")
        return json.loads(data)

    def _recv(self) -> bytes:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        return chunk

    def close(self) -> None:
        self.sock.close()


@dataclass
class _Samples:
    """What the measured blocks record, request by request (seconds unless named otherwise)."""

    http_s: list[float] = field(default_factory=list)
    raw_s: list[float] = field(default_factory=list)
    http_layers_s: list[float] = field(default_factory=list)
    floor_s: list[float] = field(default_factory=list)
    server_total_ms: list[float] = field(default_factory=list)
    server_engine_ms: list[float] = field(default_factory=list)
    completion_tokens: list[int] = field(default_factory=list)
    pipeline_s: list[float] = field(default_factory=list)
    engine_s: list[float] = field(default_factory=list)


def run_http_bench(
    console: Console,
    requests: int = 400,
    warmup: int = 40,
    block: int = 25,
    model: Path | None = None,
    batching: str = "continuous",
    access_log: bool = False,
    output: Path | None = None,
    json_output: Path | None = None,
) -> dict[str, Any]:
    if requests < 1 or warmup < 0 or block < 1:
        raise ValueError("requests and block must be positive, warmup not negative")
    blas_limit = limit_blas_threads(1)

    from corrige.engine import EngineConfig
    from corrige.tutor.agent import Tutor

    tutor = Tutor.load(model)
    engine_config = EngineConfig(policy=batching)  # the engine's defaults are the server's
    sentences = [SENTENCES[i % len(SENTENCES)] for i in range(requests + warmup)]
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per request otherwise
    started = time.perf_counter()
    server = LabServer.corrige(batching, model, access_log=access_log)
    samples = _measure(console, server, tutor, engine_config, sentences, warmup, block)
    elapsed = time.perf_counter() - started
    rows, figures = _figures(samples)
    goals = {
        name: {"value": round(figures[name], 3), "target": f"<= {limit:g}", "met": figures[name] <= limit}
        for name, limit in TARGETS.items()
    }
    result = {
        "machine": machine_info(blas_limit),
        "model": str(model) if model else "bundled (corrige/models/reader)",
        "settings": {
            "requests": requests,
            "warmup": warmup,
            "block": block,
            "batching": batching,
            "access_log": access_log,
            "engine": asdict(engine_config) | {"policy": str(engine_config.policy)},
        },
        "series": [asdict(r) for r in rows],
        "figures": figures,
        "targets": goals,
        "seconds": elapsed,
    }
    _print(console, rows, figures, goals)
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(markdown(result))
        console.print(f"wrote {output}")
    if json_output:
        write_json(json_output, result, console)
    return result


def _measure(
    console: Console,
    server: LabServer,
    tutor: Tutor,
    engine_config: EngineConfig,
    sentences: list[str],
    warmup: int,
    block: int,
) -> _Samples:
    """The warm-up of each way, then blocks of `block` sentences over HTTP and in process, in turn."""
    import httpx

    from corrige.engine import Engine

    samples = _Samples()
    loop = asyncio.new_event_loop()
    with server, Engine(tutor.weights, engine_config, drafter=tutor.drafter) as engine:
        raw = _RawClient(server.port)
        with httpx.Client(base_url=server.url, timeout=30) as client:
            console.print(
                f"server {server.url} ready; {warmup} warm-up + {len(sentences) - warmup} measured corrections each way"
            )
            _over_http(client, raw, sentences[:warmup], None)
            loop.run_until_complete(_in_process(tutor, engine, sentences[:warmup], None))
            for start in range(warmup, len(sentences), block):
                chunk = sentences[start : start + block]
                _over_http(client, raw, chunk, samples)
                loop.run_until_complete(_in_process(tutor, engine, chunk, samples))
        raw.close()
    loop.close()
    return samples


def _over_http(client: httpx.Client, raw: _RawClient, batch: list[str], samples: _Samples | None) -> None:
    """Each sentence through httpx, then a `/healthz` round trip, then the same sentence from the socket client."""
    for sentence in batch:
        t0 = time.perf_counter()
        response = client.post("/v1/grammar/correct", json={"sentence": sentence})
        body = response.json()
        elapsed_s = time.perf_counter() - t0
        if response.status_code != 200:
            raise RuntimeError(f"the server answered {response.status_code}: {body}")
        t0 = time.perf_counter()
        client.get("/healthz").json()
        floor = time.perf_counter() - t0
        t0 = time.perf_counter()
        raw_body = raw.post_json("/v1/grammar/correct", {"sentence": sentence})
        raw_elapsed = time.perf_counter() - t0
        if samples is None:
            continue
        samples.http_s.append(elapsed_s)
        samples.raw_s.append(raw_elapsed)
        # what is left of this request once the engine call and the tutor's own
        # stages (tokenize, format, rule cards) are taken out: the wire, uvicorn,
        # ingress (body, JSON, validation), the guards, tracing and the JSON answer
        tutor_ms = sum(raw_body["timings_ms"].get(k, 0.0) for k in ("engine", *TUTOR_STAGES))
        samples.http_layers_s.append(raw_elapsed - tutor_ms / 1e3)
        samples.floor_s.append(floor)
        samples.server_total_ms.append(body["timings_ms"]["total"])
        samples.server_engine_ms.append(body["timings_ms"]["engine"])
        samples.completion_tokens.append(body["usage"]["completion_tokens"])


async def _in_process(tutor: Tutor, engine: Engine, batch: list[str], samples: _Samples | None) -> None:
    """Each sentence through the same pipeline without HTTP: build the prompt, generate, interpret."""
    from corrige.engine import SamplingParams

    eos = tutor.tokenizer.special.eos
    for sentence in batch:
        start = time.perf_counter()
        prompt = tutor.build_prompt(sentence)
        max_tokens = tutor.max_new_tokens_for(len(prompt))
        params = SamplingParams(max_tokens=max_tokens, stop_token_ids=(eos,), logprobs=True)
        called = time.perf_counter()
        output = await engine.generate(prompt, params)
        returned = time.perf_counter()
        tutor.interpret(sentence, output.token_ids, output.logprobs or [], len(prompt))
        if samples is not None:
            samples.pipeline_s.append(time.perf_counter() - start)
            samples.engine_s.append(returned - called)


def _figures(samples: _Samples) -> tuple[list[Series], dict[str, float]]:
    """The series of each path, and the overheads as differences and ratios of their medians."""
    import numpy as np

    rows = [
        series("HTTP end to end (httpx → uvicorn → FastAPI → engine → JSON)", samples.http_s),
        series("server handler (its timings_ms.total)", [t / 1e3 for t in samples.server_total_ms]),
        series("in process: tokenize + engine.generate + interpret", samples.pipeline_s),
        series("in process: engine.generate alone", samples.engine_s),
        series("HTTP floor: GET /healthz round trip (no model)", samples.floor_s),
        series("HTTP end to end, minimal socket client instead of httpx", samples.raw_s),
    ]
    http, _, pipeline, engine_row, _, raw_row = rows
    figures = {
        "http_p50_ms": http.p50_ms,
        "http_p95_ms": http.p95_ms,
        "overhead_p50_ms": http.p50_ms - pipeline.p50_ms,
        "overhead_vs_engine_call_p50_ms": http.p50_ms - engine_row.p50_ms,
        "ratio_p50": http.p50_ms / pipeline.p50_ms,
        "overhead_raw_client_p50_ms": raw_row.p50_ms - pipeline.p50_ms,
        "server_engine_p50_ms": float(np.median(samples.server_engine_ms)),
        "http_layers_p50_ms": float(np.median(samples.http_layers_s)) * 1e3,
        "completion_tokens_mean": float(np.mean(samples.completion_tokens)),
    }
    return rows, figures


def _print(console: Console, rows: list[Series], figures: dict[str, float], goals: dict[str, Any]) -> None:
    table = Table(title="one correction at a time: HTTP vs in process")
    for name in ("path", "n", "p50 ms", "p95 ms", "mean ms"):
        table.add_column(name, justify="left" if name == "path" else "right")
    for r in rows:
        table.add_row(r.name, str(r.n), f"{r.p50_ms:.2f}", f"{r.p95_ms:.2f}", f"{r.mean_ms:.2f}")
    wide = console if console.is_terminal else Console(file=console.file, width=120)
    wide.print(table)
    console.print(
        f"HTTP overhead at p50: {figures['overhead_p50_ms']:.2f} ms over the in-process pipeline "
        f"(x{figures['ratio_p50']:.2f}), {figures['overhead_vs_engine_call_p50_ms']:.2f} ms over the engine call; "
        f"the server's HTTP layers alone (socket client, less the server's engine, tokenize, format and rules "
        f"stages): {figures['http_layers_p50_ms']:.2f} ms"
    )
    for name, goal in goals.items():
        console.print(f"{'[green]met[/]' if goal['met'] else '[red]not met[/]'} {name}: {goal}", soft_wrap=True)


def markdown(result: dict[str, Any]) -> str:
    s, f, m = result["settings"], result["figures"], result["machine"]
    lines = [
        "# HTTP benchmark: one correction at a time, through HTTP and in process",
        "",
        "`corrige bench http` starts `corrige serve` (rate limit off, access log "
        + ("on" if s["access_log"] else "off")
        + f", `--batching {s['batching']}`, the engine in its own process by default) on a free loopback"
        " port and sends sequential",
        "`POST /v1/grammar/correct` requests from one keep-alive `httpx.Client`, timing each from the call",
        "to the parsed JSON. In the same run and process, the same sentences go through the same pipeline",
        "without HTTP (`Tutor.build_prompt` → `Engine.generate` with the server's engine settings →",
        "`Tutor.interpret`). Blocks of "
        + f"{s['block']} requests alternate between the two; the first {s['warmup']} of each are warm-up.",
        "",
        "## Command and machine",
        "",
        "```",
        f"corrige bench http --requests {s['requests']} --output docs/bench/http.md",
        "```",
        "",
        f"{m.get('cores')} cores ({m.get('cpu')}), Python {m.get('python')}, NumPy {m.get('numpy')}, "
        f"BLAS {', '.join(numpy_blas(m)) or m.get('blas_limit')}; 1-minute load average at the start "
        f"{m.get('load_average_1min')}. Model: {result['model']}. The client, the server (with its engine",
        "process, unless `CORRIGE_ENGINE_PROCESS=false`) and the in-process engine share the machine's cores.",
        "",
        "## Results",
        "",
        "| path | n | p50 ms | p95 ms | mean ms |",
        "|---|--:|--:|--:|--:|",
    ]
    for r in result["series"]:
        lines.append(f"| {r['name']} | {r['n']} | {r['p50_ms']:.2f} | {r['p95_ms']:.2f} | {r['mean_ms']:.2f} |")
    lines += [
        "",
        f"Answers averaged {f['completion_tokens_mean']:.1f} generated tokens. HTTP adds "
        f"**{f['overhead_p50_ms']:.2f} ms** at the median over the in-process pipeline "
        f"(x{f['ratio_p50']:.2f}) and {f['overhead_vs_engine_call_p50_ms']:.2f} ms over the bare engine call; "
        f"with a minimal socket client instead of httpx it adds {f['overhead_raw_client_p50_ms']:.2f} ms. "
        "Per socket-client request, its latency less the server's own `engine`, `tokenize`, `format` and "
        "`rules` stages (what is left is the wire, uvicorn, ingress and validation, the guards, tracing and "
        f"the JSON answer) has a median of **{f.get('http_layers_p50_ms', float('nan')):.2f} ms**.",
        "",
        "| target | value | limit | met |",
        "|---|--:|--:|---|",
    ]
    for name, goal in result["targets"].items():
        lines.append(f"| {name} | {goal['value']:.2f} | {goal['target']} | {'yes' if goal['met'] else 'no'} |")
    lines.append("")
    return "\n".join(lines)
