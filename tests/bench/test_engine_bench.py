"""`corrige bench engine`: a real (small) cell per policy, and the targets computed from cells."""

from dataclasses import replace

import pytest

from corrige.bench.engine import Cell, make_workload, run_cell, targets
from corrige.model.config import preset
from corrige.model.numpy_gpt import prepare
from corrige.model.weights import random_params


@pytest.fixture(scope="module")
def weights():
    cfg = preset("seed")
    return prepare(random_params(cfg, seed=0), cfg)


@pytest.mark.parametrize("policy", ["none", "continuous"])
def test_a_cell_reports_the_models_cost_per_request(weights, policy):
    workload = make_workload(weights.cfg.vocab_size, weights.cfg.n_ctx, 64, seed=0)
    cell = run_cell(weights, policy, clients=4, workload=workload, requests=24, duration=5.0, threads=2)
    assert cell.requests == 24
    assert cell.model_ms_per_request > 0
    # the forward passes are part of the loop's work, never more than all of it
    assert 0 <= cell.overhead_cpu < 1
    assert (cell.mean_batch > 1) == (policy == "continuous")


def _cell(policy: str, rps: float, model_ms: float) -> Cell:
    return Cell(policy, 32, 100, 1.0, rps, rps * 20, 10, 20, 15, 1.0, 0.1, 0.1, model_ms_per_request=model_ms)


def test_targets_report_the_ratio_and_the_ceiling_the_model_allows():
    none = _cell("none", 100, 6.0)
    cont = replace(_cell("continuous", 450, 1.5), mean_batch=30)
    goals = targets([none, cont])
    assert goals["continuous_vs_none_rps_at_32"] == {"value": 4.5, "target": ">= 8", "met": False}
    ceiling = goals["continuous_vs_none_model_ceiling_at_32"]
    assert ceiling["value"] == 4.0
    assert ceiling["none_model_ms_per_request"] == 6.0 and ceiling["continuous_model_ms_per_request"] == 1.5
    assert "continuous_vs_none_model_ceiling_at_32" not in targets([none])  # needs both cells
