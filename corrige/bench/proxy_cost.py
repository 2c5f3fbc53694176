"""Where the time of a request through Ray Serve goes: the proxy's own CPU, apart from the CPU
contention of several replicas on a few cores.

One `corrige serve`, then `corrige serve --replicas 1` (one replica behind Ray Serve's proxy, so
nothing competes but the proxy and Ray's own processes), each under the same closed-loop load.
During each load the CPU time (user + system, /proc) of every process of the server's tree is
read before and after, and summed per role:

* one server: `server` (the HTTP process) and `engine` (its children: the engine process, the
  trace writer);
* Ray Serve: `proxy` (`ray::ProxyActor`), `replica` (`ray::ServeReplica`, the same app as one
  server's HTTP process) and `engine` (the replica's children), `driver` (`corrige serve
  --replicas`), and Ray's other processes one by one (`ray:gcs_server`, `ray:raylet`,
  `ray:ray::ServeController`, ...).

Divided by the requests answered, that is the CPU milliseconds one request costs in each role;
the proxy's share of the total is what Ray's hop costs whatever the number of replicas.

    python -m corrige.bench.proxy_cost --clients 8 --duration 30 --output docs/bench/proxy-cost.json
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path
from typing import Any

from corrige.bench.load import LoadSpec, run_load
from corrige.bench.machine import write_json
from corrige.bench.replicas import RAY_READY_TIMEOUT_S, stop_gracefully, wait_for_replicas
from corrige.bench.servers import LabServer, _children, free_port

log = logging.getLogger(__name__)

ROLES = {b"ray::ProxyActor": "proxy", b"ray::ServeReplica": "replica"}


def _cpu_ticks(pid: int) -> int | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None  # it just exited
    return int(fields[11]) + int(fields[12])  # utime, stime


def _role(pid: int, parent_role: str | None) -> str:
    """What a process of the tree is (see the module's docstring), from its command line and its parent's role."""
    try:
        argv = [a.decode(errors="replace") for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if a]
    except OSError:
        argv = []
    for title, role in ROLES.items():
        if argv and argv[0].startswith(title.decode()):
            return role
    if parent_role in ("replica", "server", "engine"):
        return "engine"  # what a server or a replica starts: its engine process, its trace writer
    if not argv:
        return "ray:?"
    # Ray's own processes, by name: gcs_server, raylet, ray::ServeController, a Python helper's script
    name = argv[0] if argv[0].startswith("ray::") else Path(argv[0]).name
    if name.startswith("python") and len(argv) > 1:
        name = Path(argv[2] if argv[1] in ("-m", "-u") and len(argv) > 2 else argv[1]).name
    return f"ray:{name.split()[0]}"


def cpu_by_role(root: int, root_role: str) -> dict[str, int]:
    """CPU ticks so far of `root`'s process tree, summed per role (see the module's docstring)."""
    totals: dict[str, int] = {}
    todo: list[tuple[int, str | None]] = [(root, None)]
    while todo:
        pid, parent_role = todo.pop()
        role = root_role if pid == root else _role(pid, parent_role)
        ticks = _cpu_ticks(pid)
        if ticks is not None:
            totals[role] = totals.get(role, 0) + ticks
        todo += [(child, role) for child in _children(pid)]
    return totals


def loaded_cpu(server: LabServer, root_role: str, clients: int, duration: float) -> dict[str, Any]:
    """The load's figures and the CPU milliseconds per answered request of each role."""
    spec = LoadSpec(server.url, clients=clients, requests=1_000_000, duration=duration, warmup=2)
    before = cpu_by_role(server.pid, root_role)
    summary = run_load(spec).summary()
    after = cpu_by_role(server.pid, root_role)
    tick_ms = 1000 / os.sysconf("SC_CLK_TCK")
    ok = max(1, summary["ok"])
    per_request = {role: round((after[role] - before.get(role, 0)) * tick_ms / ok, 3) for role in after}
    total = sum(per_request.values())
    ray_own = sum(ms for role, ms in per_request.items() if role.startswith("ray:") or role == "driver")
    return {
        "requests": summary["requests"],
        "ok": summary["ok"],
        "p50_ms": summary["latency_ms"]["p50"] if summary["latency_ms"] else None,
        "req_per_s": summary["req_per_s"],
        "cpu_ms_per_request": per_request,
        "cpu_ms_per_request_total": round(total, 3),
        "cpu_ms_per_request_ray_own": round(ray_own, 3),  # Ray's processes other than the proxy and replica
        "cpu_share": {role: round(ms / total, 3) for role, ms in per_request.items()} if total else {},
        "load_average": os.getloadavg()[0],
    }


def measure_proxy_cost(clients: int = 8, duration: float = 30.0, model: Path | None = None) -> dict[str, Any]:
    """One server, then one replica behind Ray Serve's proxy: the same load, CPU per request by role."""
    result: dict[str, Any] = {"clients": clients, "duration_s": duration, "cpus": os.cpu_count()}
    with LabServer.corrige("continuous", model=model) as one:
        one.wait_ready()
        result["one_server"] = loaded_cpu(one, "server", clients, duration)
    metrics_port = free_port()
    ray = LabServer.corrige("continuous", model=model, extra=["--replicas", "1", "--metrics-port", str(metrics_port)])
    try:
        ray.start().wait_ready(RAY_READY_TIMEOUT_S)
        wait_for_replicas(1, metrics_port, RAY_READY_TIMEOUT_S)
        result["ray_serve_1_replica"] = loaded_cpu(ray, "driver", clients, duration)
    finally:
        stop_gracefully(ray)
    one_cpu = result["one_server"]["cpu_ms_per_request_total"]
    ray_cpu = result["ray_serve_1_replica"]["cpu_ms_per_request_total"]
    result["extra_cpu_ms_per_request"] = round(ray_cpu - one_cpu, 3)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--duration", type=float, default=30.0)
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--output", type=Path, default=None, help="write the report as JSON here")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request of the load otherwise
    result = measure_proxy_cost(args.clients, args.duration, args.model)
    for side in ("one_server", "ray_serve_1_replica"):
        figures = result[side]
        log.info(
            "%s: %.1f CPU ms per request %s, p50 %.0f ms",
            side,
            figures["cpu_ms_per_request_total"],
            figures["cpu_ms_per_request"],
            figures["p50_ms"] or 0,
        )
    if args.output is not None:
        write_json(args.output, result)
        log.info("wrote %s", args.output)


if __name__ == "__main__":
    main()
