"""`corrige bench model` on the tiny preset: the report's shape, not its timings."""

import io
import json
import sys

import pytest
from rich.console import Console

from corrige.bench.model import run_model_bench


def console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=120), out


def test_numpy_only_run_writes_json(tmp_path):
    con, text = console()
    path = tmp_path / "nested" / "model.json"
    report = run_model_bench(
        con, preset="tiny", batches=[1, 3], prompt_len=4, new_tokens=3, repeats=2, reference=False, output=path
    )
    assert json.loads(path.read_text()) == json.loads(json.dumps(report))
    assert [r["batch"] for r in report["results"]] == [1, 3]
    for r in report["results"]:
        assert set(r["ours"]) == {"prefill_ms", "decode_step_ms", "request_ms", "tokens_per_s"}
        assert all(v > 0 for v in r["ours"].values())
        assert len(r["raw_s"]["ours"]["request"]) == 2
        assert "transformers" not in r
    assert report["machine"]["numpy"] and report["machine"]["cores"] >= 1
    assert "decode step" in text.getvalue()


def test_reference_run_compares_with_transformers():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    con, text = console()
    report = run_model_bench(con, preset="tiny", batches=[2], prompt_len=5, new_tokens=4, repeats=2, reference=True)
    (r,) = report["results"]
    assert r["same_tokens"] is True  # same weights, same greedy tokens
    assert set(r["ratios"]) == {"prefill", "decode_step", "request"}
    assert r["transformers"]["decode_step_ms"] > 0
    assert "transformers" in text.getvalue()


def test_missing_torch_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` fail
    con, text = console()
    with pytest.raises(SystemExit):
        run_model_bench(con, preset="tiny", batches=[1], prompt_len=2, new_tokens=2, repeats=1, reference=True)
    assert "--no-reference" in text.getvalue()


def test_requests_must_fit_the_window():
    con, _ = console()
    with pytest.raises(ValueError, match="do not fit"):
        run_model_bench(con, preset="tiny", batches=[1], prompt_len=30, new_tokens=10, repeats=1, reference=False)


def test_blas_is_held_to_one_thread_by_default_and_restored():
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def blas_threads():
        return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]

    # the test processes hold BLAS to one thread (tests/conftest.py): two here, which the bench
    # must lower to one and give back
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        before = blas_threads()
        con, _ = console()
        kwargs = dict(preset="tiny", batches=[1], prompt_len=2, new_tokens=2, repeats=1, reference=False)
        report = run_model_bench(con, **kwargs)
        assert {b["num_threads"] for b in report["machine"]["blas"] if b["user_api"] == "blas"} == {1}
        assert report["config"]["blas_threads"] == 1
        assert blas_threads() == before
        report = run_model_bench(con, **kwargs, blas_threads=None)  # left alone
        assert [b["num_threads"] for b in report["machine"]["blas"] if b["user_api"] == "blas"] == before
