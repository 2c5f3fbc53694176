"""`corrige bench compare`: this working tree against a baseline revision, paired in one run.

A change that should not move the figures (a refactor) is checked against the code it
replaced, on the same machine and at the same moment, because a shared machine's speed drifts
by more than the 5% such a change may cost. The baseline is `git archive REV corrige` unpacked
into a temporary directory and put first on the baseline server's path (`baseline_env`), so both servers
run with the same virtual environment and the same model directory; only the code differs (or,
with `baseline_own_model`, the baseline serves its own revision's copy of the model).

Both servers run at once. Each round measures both, in an order that alternates from round to
round, so a slow spell of the machine hits both alike:
- one client: a block of sequential corrections (latency p50);
- many clients: a closed-loop burst (throughput, corrections per second).
Reported: the median over rounds of each figure, for each tree, and their ratio.
"""

from __future__ import annotations

import logging
import statistics
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from corrige.bench.load import LoadSpec, run_load
from corrige.bench.machine import machine_info
from corrige.bench.servers import LabServer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CompareConfig:
    baseline: str  # a git revision
    model: Path
    rounds: int = 5
    block: int = 60  # sequential corrections per one-client block
    clients: int = 64  # the throughput burst's closed-loop callers
    burst_requests: int = 640  # measured corrections per burst
    batching: str = "continuous"
    # the baseline serves its own revision's copy of `model` (a model retrained since, as the seed
    # was to write <|gloss|>, is compared as each revision shipped it)
    baseline_own_model: bool = False


@dataclass
class TreeFigures:
    """One tree's figures, one value per round."""

    name: str
    p50_ms: list[float] = field(default_factory=list)
    req_per_s: list[float] = field(default_factory=list)
    failed: int = 0

    def medians(self) -> dict[str, float]:
        return {"p50_ms": statistics.median(self.p50_ms), "req_per_s": statistics.median(self.req_per_s)}


def unpack_revision(repo: Path, revision: str, into: Path) -> str:
    """Unpack `revision`'s `corrige` package into `into`; returns the full commit id."""
    commit = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", f"{revision}^{{commit}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    archive = subprocess.run(["git", "-C", str(repo), "archive", commit, "corrige"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return commit


def baseline_model(cfg: CompareConfig, repo: Path, tree: Path) -> Path:
    """The model directory the baseline serves: `cfg.model`, or with `baseline_own_model` the same
    path inside the unpacked revision (`cfg.model` must then lie inside the repository)."""
    if not cfg.baseline_own_model:
        return cfg.model
    try:
        inside = cfg.model.resolve().relative_to(repo.resolve())
    except ValueError:
        raise ValueError(f"{cfg.model} is not inside {repo}: the baseline has no copy of it") from None
    own = tree / inside
    if not own.is_dir():
        raise ValueError(f"the baseline revision has no {inside}")
    return own


def baseline_env(tree: Path) -> dict[str, str]:
    """The environment that makes a Python process import `corrige` from `tree`: first on the path,
    and no current directory ahead of it (`python -m` would otherwise put this checkout first)."""
    return {"PYTHONPATH": str(tree), "PYTHONSAFEPATH": "1"}


def _load(url: str, cfg: CompareConfig, clients: int, requests: int, seed: int) -> tuple[dict[str, Any], int]:
    """One closed-loop load on `url`: its summary, and how many measured requests failed."""
    warmup = 2 if clients == 1 else 1
    spec = LoadSpec(
        url=url, clients=clients, requests=requests, warmup=warmup, seed=seed, model=cfg.model, duration=600.0
    )
    summary = run_load(spec).summary()
    return summary, summary["requests"] - summary["ok"]


def _measure_round(servers: list[tuple[LabServer, TreeFigures]], cfg: CompareConfig, index: int) -> None:
    order = servers if index % 2 == 0 else servers[::-1]
    for server, figures in order:
        summary, failed = _load(server.url, cfg, 1, cfg.block, seed=index)
        figures.p50_ms.append(summary["latency_ms"]["p50"])
        figures.failed += failed
    for server, figures in order:
        summary, failed = _load(server.url, cfg, cfg.clients, cfg.burst_requests, seed=index)
        figures.req_per_s.append(summary["req_per_s"])
        figures.failed += failed


def run_compare(cfg: CompareConfig, repo: Path, on_round: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Start both servers, measure `cfg.rounds` paired rounds, return the report (see the module docstring)."""
    with tempfile.TemporaryDirectory(prefix="corrige-baseline-") as tree:
        commit = unpack_revision(repo, cfg.baseline, Path(tree))
        current = LabServer.corrige(cfg.batching, model=cfg.model)
        baseline = LabServer.corrige(cfg.batching, model=baseline_model(cfg, repo, Path(tree)))
        current.name, baseline.name = "current", "baseline"
        baseline.env.update(baseline_env(Path(tree)))
        figures = [TreeFigures("current"), TreeFigures("baseline")]
        try:
            for server in (current, baseline):
                server.start()
            for server in (current, baseline):
                server.wait_ready()
            pairs = list(zip((current, baseline), figures, strict=True))
            for index in range(cfg.rounds):
                _measure_round(pairs, cfg, index)
                if on_round is not None:
                    on_round(index)
        finally:
            current.stop()
            baseline.stop()
    now, then = figures[0].medians(), figures[1].medians()
    return {
        "config": {**asdict(cfg), "model": str(cfg.model)},
        "baseline_commit": commit,
        "machine": machine_info(),
        "trees": {f.name: {**asdict(f), "median": f.medians()} for f in figures},
        "ratios": {key: now[key] / then[key] for key in now},  # current / baseline
    }
