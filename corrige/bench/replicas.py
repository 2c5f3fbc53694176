"""`corrige bench replicas`: one server against N replicas behind Ray Serve's proxy, in one run.

1. answers: the same sentences through one `corrige serve` and through the proxy; every
   correction (text, edits) must be the same;
2. latency: the same closed-loop load (`corrige.bench.load`, 8 clients, then 1) against each,
   with the machine's load average; the p50 ratio at 8 clients is what the replicas cost, the
   p50 difference at 1 client the proxy's own hop;
3. a replica killed: under a steady closed-loop load, one replica's process gets SIGKILL; every
   request must get an answer (none lost: no transport error or timeout), fewer than 1% may
   fail, and Ray must start a new replica (its own metrics port answers again).

The servers are `LabServer`s (subprocesses on free loopback ports); the Ray run is
`corrige serve --replicas N`. Replica processes are found by their title (`ray::ServeReplica`).
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from corrige.bench.load import LoadSpec, RequestResult, run_load
from corrige.bench.servers import LabServer, free_port
from corrige.bench.workload import build_workload

log = logging.getLogger(__name__)

RAY_READY_TIMEOUT_S = 420.0  # Ray's processes, then N model loads, on a busy 2-core machine
REPLICA_TITLE = b"ray::ServeReplica:corrige"


def replica_pids() -> list[int]:
    """The live Ray Serve replica processes of the `corrige` deployment on this machine."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "cmdline").read_bytes().startswith(REPLICA_TITLE):
                pids.append(int(entry.name))
        except OSError:
            continue
    return sorted(pids)


def metrics_ports_up(first_port: int, span: int) -> list[int]:
    """The ports in [first_port, first_port + span) where a replica answers GET /metrics."""
    up = []
    for port in range(first_port, first_port + span):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=1.0).status_code == 200:
                up.append(port)
        except httpx.TransportError:
            continue
    return up


def wait_for_replicas(n: int, first_port: int, timeout: float) -> float:
    """Seconds until n replicas answer on their metrics ports; raises TimeoutError."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if len(metrics_ports_up(first_port, n + 4)) >= n:
            return time.monotonic() - started
        time.sleep(0.5)
    raise TimeoutError(f"{n} replicas did not come up within {timeout:.0f} s")


def answers(url: str, sentences: list[str]) -> list[dict[str, Any]]:
    """The correction of each sentence (corrected text and edits), one request at a time."""
    out = []
    with httpx.Client(base_url=url, timeout=30.0) as client:
        for sentence in sentences:
            body = client.post("/v1/grammar/correct", json={"sentence": sentence, "rules": False}).json()
            out.append({"corrected": body.get("corrected"), "edits": body.get("edits"), "error": body.get("error")})
    return out


def load_average() -> float:
    return os.getloadavg()[0]


def _load(url: str, clients: int, requests: int, duration: float, seed: int) -> dict[str, Any]:
    spec = LoadSpec(url, clients=clients, requests=requests, duration=duration, warmup=2, seed=seed)
    before = load_average()
    summary = run_load(spec).summary()
    return {
        "requests": summary["requests"],
        "ok": summary["ok"],
        "errors": summary["errors"],
        "p50_ms": summary["latency_ms"]["p50"] if summary["latency_ms"] else None,
        "p95_ms": summary["latency_ms"]["p95"] if summary["latency_ms"] else None,
        "req_per_s": summary["req_per_s"],
        "load_average": {"before": before, "after": load_average()},
    }


def kill_one_replica(url: str, first_port: int, replicas: int, clients: int, duration: float) -> dict[str, Any]:
    """A steady closed loop for `duration` seconds; a third of the way in, SIGKILL to one replica."""
    results: list[RequestResult] = []
    spec = LoadSpec(url, clients=clients, requests=1_000_000, duration=duration, warmup=1, timeout_s=60.0)
    runner = threading.Thread(target=lambda: results.extend(run_load(spec).results), daemon=True)
    before = replica_pids()
    runner.start()
    time.sleep(duration / 3)
    victim = before[0]
    os.kill(victim, signal.SIGKILL)
    killed_at = time.monotonic()
    log.info("killed replica pid %d", victim)
    runner.join()
    back_s = None
    try:  # the replacement loads its model while the load runs; give it time after the load too
        wait_for_replicas(replicas, first_port, RAY_READY_TIMEOUT_S)
        back_s = time.monotonic() - killed_at
    except TimeoutError:
        pass
    after = replica_pids()
    sent = [r for r in results if r.phase != "warmup"]
    lost = [r for r in sent if r.status == 0]  # no answer at all: a transport error or a timeout
    failed = [r for r in sent if not r.ok]
    return {
        "duration_s": duration,
        "clients": clients,
        "killed_pid": victim,
        "replicas_before": before,
        "replicas_after": after,
        "replaced": victim not in after and len(after) == replicas,
        "back_after_s": back_s,
        "requests": len(sent),
        "lost": len(lost),
        "failed": len(failed),
        "failed_share": len(failed) / len(sent) if sent else 0.0,
        "errors": sorted({r.error or f"http_{r.status}" for r in failed}),
        "load_average": load_average(),
    }


def stop_gracefully(server: LabServer, timeout: float = 120.0) -> None:
    """SIGTERM, and time for `corrige serve --replicas` to drain its replicas and stop Ray's
    processes (a SIGKILL would leave them running); `stop` after that."""
    if server.proc is not None and server.proc.poll() is None:
        server.proc.terminate()
        try:
            server.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            log.warning("%s did not stop within %.0f s", server.name, timeout)
    server.stop()


def run_replicas_bench(
    replicas: int = 2,
    clients: int = 8,
    requests: int = 600,
    duration: float = 60.0,
    kill_duration: float = 60.0,
    n_answers: int = 100,
    model: Path | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """One server, then `replicas` replicas under Ray Serve: answers, p50 at `clients`, a kill."""
    sentences = list(build_workload(n=n_answers, seed=seed + 1, model=model).sentences)
    result: dict[str, Any] = {"replicas": replicas, "clients": clients, "cpus": os.cpu_count()}
    with LabServer.corrige("continuous", model=model) as one:
        single_answers = answers(one.url, sentences)
        result["one_server"] = _load(one.url, clients, requests, duration, seed)
        result["one_server_1_client"] = _load(one.url, 1, requests // 4, duration, seed)
    metrics_port = free_port()  # the replicas take the first free ports from here
    extra = ["--replicas", str(replicas), "--metrics-port", str(metrics_port)]
    ray = LabServer.corrige("continuous", model=model, extra=extra)
    try:
        ray.start().wait_ready(RAY_READY_TIMEOUT_S)
        result["replicas_ready_after_proxy_s"] = wait_for_replicas(replicas, metrics_port, RAY_READY_TIMEOUT_S)
        replica_answers = answers(ray.url, sentences)
        result["answers"] = {
            "sentences": len(sentences),
            "same": sum(a == b for a, b in zip(single_answers, replica_answers, strict=True)),
        }
        result["ray_serve"] = _load(ray.url, clients, requests, duration, seed)
        result["ray_serve_1_client"] = _load(ray.url, 1, requests // 4, duration, seed)
        result["metrics_ports"] = metrics_ports_up(metrics_port, replicas + 4)
        result["kill"] = kill_one_replica(ray.url, metrics_port, replicas, clients, kill_duration)
    finally:
        stop_gracefully(ray)
    one_p50, ray_p50 = result["one_server"]["p50_ms"], result["ray_serve"]["p50_ms"]
    result["p50_ratio"] = ray_p50 / one_p50 if one_p50 and ray_p50 else None
    # the proxy's own cost per request: one client, nothing to queue behind
    alone = result["ray_serve_1_client"]["p50_ms"], result["one_server_1_client"]["p50_ms"]
    result["proxy_ms_1_client"] = alone[0] - alone[1] if all(alone) else None
    kill = result["kill"]
    result["targets"] = {
        "same answers": result["answers"]["same"] == result["answers"]["sentences"],
        "p50 ratio <= 1.3": result["p50_ratio"] is not None and result["p50_ratio"] <= 1.3,
        "no request lost": kill["lost"] == 0,
        "fewer than 1% failed": kill["failed_share"] < 0.01,
        "replica replaced": kill["replaced"],
    }
    return result
