"""`corrige bench compare`: the baseline server really runs the baseline's code, and a tiny paired run."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from corrige.bench.compare import CompareConfig, baseline_env, baseline_model, run_compare, unpack_revision

REPO = Path(__file__).resolve().parents[2]


def _git(*args: str, cwd: Path) -> str:
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="module")
def marked_repo(tmp_path_factory) -> tuple[Path, str]:
    """A clone of this repository with one more commit, which marks `corrige/__init__.py`."""
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    clone = tmp_path_factory.mktemp("clone") / "repo"
    subprocess.run(["git", "clone", "-q", "--shared", str(REPO), str(clone)], check=True)
    init = clone / "corrige" / "__init__.py"
    init.write_text(init.read_text() + "\nBASELINE_MARK = 'from the baseline'\n")
    _git("commit", "-q", "-am", "mark", cwd=clone)
    return clone, _git("rev-parse", "HEAD", cwd=clone)


def test_the_unpacked_revision_is_what_a_baseline_process_imports(marked_repo, tmp_path):
    clone, commit = marked_repo
    assert unpack_revision(clone, "HEAD", tmp_path) == commit
    probe = "import corrige; print(corrige.__file__, getattr(corrige, 'BASELINE_MARK', None))"
    env = {**baseline_env(tmp_path), "PATH": "/usr/bin:/bin"}
    # run from this checkout's root, as the baseline server is: its own `corrige` must not win
    run = subprocess.run([sys.executable, "-c", probe], env=env, cwd=REPO, capture_output=True, text=True, check=True)
    out = run.stdout
    assert out.split() == [str(tmp_path / "corrige" / "__init__.py"), "from", "the", "baseline"]
    # ...and this process, without that path, does not see the mark
    import corrige

    assert not hasattr(corrige, "BASELINE_MARK")


def test_an_unknown_revision_is_refused_before_any_server_starts(tmp_path):
    with pytest.raises(subprocess.CalledProcessError):
        unpack_revision(REPO, "no-such-revision-anywhere", tmp_path)


@pytest.mark.slow  # two servers, the baseline's from its own tree
def test_a_paired_run_measures_both_trees_every_round(seed_model_dir):
    cfg = CompareConfig(baseline="HEAD", model=seed_model_dir, rounds=2, block=4, clients=2, burst_requests=6)
    report = run_compare(cfg, REPO)
    assert len(report["baseline_commit"]) == 40
    for tree in ("current", "baseline"):
        figures = report["trees"][tree]
        assert len(figures["p50_ms"]) == 2 and len(figures["req_per_s"]) == 2
        assert figures["failed"] == 0
        assert all(v > 0 for v in figures["p50_ms"] + figures["req_per_s"])
    for ratio in report["ratios"].values():
        assert math.isfinite(ratio) and ratio > 0


def test_the_command_names_an_unknown_revision_and_exits_2():
    from typer.testing import CliRunner

    from corrige.cli import app

    result = CliRunner().invoke(app, ["bench", "compare", "--baseline", "no-such-revision-anywhere"])
    assert result.exit_code == 2
    assert "cannot unpack 'no-such-revision-anywhere'" in result.output and "Traceback" not in result.output


def test_the_baseline_may_serve_its_own_revisions_copy_of_the_model(tmp_path):
    model = REPO / "corrige" / "models" / "seed"
    cfg = CompareConfig(baseline="HEAD", model=model, baseline_own_model=True)
    unpack_revision(REPO, "HEAD", tmp_path)
    own = baseline_model(cfg, REPO, tmp_path)
    assert own == tmp_path / "corrige" / "models" / "seed" and (own / "config.json").is_file()
    # without the flag both serve the same directory
    assert baseline_model(CompareConfig(baseline="HEAD", model=model), REPO, tmp_path) == model
    with pytest.raises(ValueError, match="not inside"):
        baseline_model(CompareConfig(baseline="HEAD", model=tmp_path, baseline_own_model=True), REPO, tmp_path)
