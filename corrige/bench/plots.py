"""The sweep's figure: latency and throughput against concurrent clients, one line per server."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

STYLE = {  # stable colours so figures from different runs compare at a glance
    "none": "#d62728",
    "threads": "#ff7f0e",
    "static": "#1f77b4",
    "continuous": "#2ca02c",
    "peer": "#7f7f7f",
}


def sweep_plot(result: dict[str, Any], path: Path) -> Path:
    """Write a PNG: p50 (solid) and p95 (dashed) latency, and requests/s, against clients (log axes)."""
    import matplotlib

    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt
    from matplotlib.ticker import ScalarFormatter

    clients = sorted(set(result["config"]["clients"]))
    servers = list(result["config"]["policies"]) + (["peer"] if result["config"]["peer"] else [])
    fig, (ax_lat, ax_rate) = plt.subplots(1, 2, figsize=(11, 4.2))
    for server in servers:
        rows = [p for c in clients for p in result["points"] if p["server"] == server and p["clients"] == c]
        rows = [p for p in rows if p["summary"]["latency_ms"]]
        if not rows:
            continue
        xs = [p["clients"] for p in rows]
        color = STYLE.get(server)
        label = "peer (transformers)" if server == "peer" else server
        ax_lat.plot(xs, [p["summary"]["latency_ms"]["p50"] for p in rows], "o-", color=color, label=f"{label} p50")
        ax_lat.plot(xs, [p["summary"]["latency_ms"]["p95"] for p in rows], "--", color=color, alpha=0.6)
        ax_rate.plot(xs, [p["summary"]["req_per_s"] for p in rows], "o-", color=color, label=label)
    for ax in (ax_lat, ax_rate):
        ax.set_xscale("log", base=2)
        ax.set_xticks(clients, [str(c) for c in clients])
        ax.set_xlabel("concurrent clients (closed loop)")
        ax.grid(True, which="both", alpha=0.3)
    for ax in (ax_lat, ax_rate):
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(ScalarFormatter())  # 100, not 10^2
    ax_lat.set_ylabel("latency, ms (solid p50, dashed p95)")
    ax_lat.set_title("latency per correction")
    ax_lat.legend(fontsize=8)
    ax_rate.set_ylabel("corrections per second")
    ax_rate.set_title("throughput")
    ax_rate.legend(fontsize=8)
    machine = result.get("machine", {})
    fig.suptitle(
        f"corrige bench sweep: POST /v1/grammar/correct, bundled tutor, {machine.get('cores', '?')} cores "
        "shared by the server and the load generator",
        fontsize=10,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    log.info("wrote %s", path)
    return path
