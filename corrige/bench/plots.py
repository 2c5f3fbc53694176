"""The serving lab's figures: the sweep's latency and throughput against concurrent clients, one
line per server; the soak's memory and descriptors over time, one line per process."""

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
    # the soak's processes
    "server": "#1f77b4",
    "engine": "#2ca02c",
    "trace_writer": "#ff7f0e",
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
    title = (
        f"corrige bench sweep: POST /v1/grammar/correct, bundled tutor, {machine.get('cores', '?')} cores "
        "shared by the server and the load generator"
    )
    return _save(fig, title, path)


def _save(fig, title: str, path: Path) -> Path:
    """The figure's title, then the PNG at `path` (its folder made), and the figure closed."""
    import matplotlib.pyplot as plt

    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    log.info("wrote %s", path)
    return path


def soak_plot(result: dict[str, Any], path: Path) -> Path:
    """Write a PNG: RSS over time per process (the warm-up shaded), and open descriptors."""
    import matplotlib

    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt

    samples = result["samples"]
    fig, (ax_rss, ax_fds) = plt.subplots(
        2, 1, figsize=(10, 6), sharex=True, gridspec_kw={"height_ratios": [3, 1.3]}
    )  # fmt: skip
    minutes = [s["t"] / 60 for s in samples]
    for role in result["processes"]:
        color = STYLE.get(role)
        rss = [s["rss"].get(role) for s in samples]
        pts = [(m, r / 2**20) for m, r in zip(minutes, rss, strict=True) if r is not None]
        growth = (result["processes"][role]["rss"] or {}).get("growth")
        label = role.replace("_", " ") + (f" ({growth:+.1%} after warm-up)" if growth is not None else "")
        ax_rss.plot([m for m, _ in pts], [r for _, r in pts], "-", color=color, label=label)
        fds = [(m, s["fds"].get(role)) for m, s in zip(minutes, samples, strict=True) if s["fds"].get(role) is not None]
        ax_fds.plot([m for m, _ in fds], [n for _, n in fds], "-", color=color, label=role.replace("_", " "))
    for ax in (ax_rss, ax_fds):
        ax.axvspan(0, result["warmup_s"] / 60, color="#cccccc", alpha=0.4, lw=0)
        ax.grid(True, alpha=0.3)
    ax_rss.set_ylabel("RSS, MB")
    ax_rss.set_ylim(bottom=0)
    ax_rss.legend(fontsize=8, loc="lower right")
    ax_rss.set_title("resident memory per process (grey: warm-up)", fontsize=10)
    ax_fds.set_ylabel("open descriptors")
    ax_fds.set_xlabel("minutes of load")
    ax_fds.legend(fontsize=8, loc="lower right")
    cfg, req = result["config"], result["requests"]
    title = (
        f"corrige bench soak: {cfg['clients']} closed-loop clients, {result['run_s'] / 60:.1f} min, "
        f"{req['done']} corrections ({req['failed']} failed), {result['machine'].get('cores', '?')} cores "
        f"shared by the server and the load; {'passed' if result['passed'] else 'FAILED'}"
    )
    return _save(fig, title, path)
