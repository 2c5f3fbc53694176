"""The pinned performance baseline: a commit of this history, named by the tag perf-baseline (where
the clone has tags) and by docs/bench/perf-baseline.txt, that `make bench-compare` measures
this tree against, on both bundled models."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30)


def test_the_pinned_baseline_is_a_commit_of_this_history():
    pinned = (ROOT / "docs" / "bench" / "perf-baseline.txt").read_text().strip()
    if git("rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        pytest.skip("a shallow clone holds only the newest commits")
    assert git("merge-base", "--is-ancestor", pinned, "HEAD").returncode == 0, pinned
    tag = git("rev-parse", "-q", "--verify", "perf-baseline^{commit}")
    if tag.returncode == 0:  # a clone without tags has only the file
        assert tag.stdout.strip() == pinned, "the tag and docs/bench/perf-baseline.txt must name one commit"


def test_make_bench_compare_runs_both_models_against_it():
    run = subprocess.run(["make", "-n", "bench-compare"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    pinned = (ROOT / "docs" / "bench" / "perf-baseline.txt").read_text().strip()
    lines = [line for line in run.stdout.splitlines() if "bench compare" in line]
    assert len(lines) == 2 and all(pinned in line or "perf-baseline" in line for line in lines)
    assert "--model corrige/models/seed" in lines[0] and "--model" not in lines[1]  # the seed, then the reader
