"""The latency budget: the TOML file (bundled profiles, validation), burn rates, the sustained
flag, the minimum sample, shares, the profile each model gets, and the latency formula with
measured values."""

from __future__ import annotations

import math
from importlib import resources
from pathlib import Path

import pytest
from obs_support import MS, T0, make_trace, sequential

from corrige.obs import spans as names
from corrige.obs.budget import (
    MIN_SAMPLES,
    BudgetError,
    budget_profiles,
    budget_report,
    bundled_budget_path,
    formula,
    load_budget,
)
from corrige.obs.report import SELF, TraceTable
from corrige.obs.store import group_traces

REFERENCE_SPLIT = {
    "HTTP + schema + guards": 50,
    "tokenize": 20,
    "retrieve rule cards": 200,
    "prefill": 1200,
    "decode": 3300,
    "format + cost": 30,
    "queue wait + untraced": 200,
}


def test_bundled_file_has_the_reference_split_and_a_default_tutor_profile_in_milliseconds():
    assert set(budget_profiles()) == {"reference", "tutor"}
    reference = load_budget(profile="reference")
    assert {a.name: a.ms for a in reference.allocations} == REFERENCE_SPLIT
    assert reference.total_ms == 5000
    tutor = load_budget()  # the file's default
    assert tutor.profile == "tutor"
    assert 10 <= tutor.total_ms <= 60  # a correction takes tens of ms, not seconds
    assert [a.name for a in tutor.allocations] == list(REFERENCE_SPLIT)  # the same stages, rescaled
    for budget in (reference, tutor):
        covered = [s for a in budget.allocations for s in a.spans]
        assert sorted(covered) == sorted({*names.STAGES, SELF})  # every stage span, each once
    decode = tutor.stage_of(names.DECODE)
    assert decode is not None and decode.ms == max(a.ms for a in tutor.allocations)


def _write(tmp_path, text: str):
    path = tmp_path / "budget.toml"
    path.write_text(text, encoding="utf-8")
    return path


GOOD = """
default_profile = "p"
[profiles.p]
total_ms = 3
[[profiles.p.stages]]
name = "model"
ms = 2
spans = ["model.prefill", "model.decode"]
[[profiles.p.stages]]
name = "rest"
ms = 1
spans = ["http.request:self"]
"""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("this is = not toml [", "not valid TOML"),
        ("[profiles]\n", "no [profiles.<name>] table"),
        (GOOD.replace('"model.decode"', '"model.decod"'), "unknown span 'model.decod'"),
        (GOOD.replace('"http.request:self"', '"model.decode"'), "already in stage 'model'"),
        (GOOD.replace("total_ms = 3", "total_ms = 4"), "add up to 3 ms but total_ms says 4"),
        (GOOD.replace("ms = 2\n", "ms = -2\n"), "`ms` must be a positive number"),
        (GOOD.replace("ms = 2\n", 'ms = "2"\n'), "`ms` must be a positive number"),
        (GOOD.replace("ms = 2\n", "msec = 2\n"), "unknown key(s) ['msec']"),
        (GOOD.replace('name = "rest"', 'name = "model"'), "stage 'model' appears twice"),
        (GOOD.replace('default_profile = "p"', 'default_profile = "q"'), "no profile 'q'"),
        (GOOD + '[models.m]\nprofile = "q"\nwhy = "x"\n', "models.m names no profile of the file ('q')"),
        (GOOD + '[models.m]\nprofile = "p"\n', "models.m must have exactly `profile` and `why`"),
        ("models = 3\n" + GOOD, "`models` must be a table"),
    ],
)
def test_bad_files_fail_with_a_message_naming_the_file_and_the_problem(tmp_path, text, message):
    path = _write(tmp_path, text)
    with pytest.raises(BudgetError) as caught:
        load_budget(path)
    assert message in str(caught.value)
    assert str(path) in str(caught.value)


def test_a_missing_file_and_an_unknown_profile_are_budget_errors(tmp_path):
    with pytest.raises(BudgetError, match="cannot read"):
        load_budget(tmp_path / "nope.toml")
    with pytest.raises(BudgetError, match="the file has reference, tutor"):
        load_budget(bundled_budget_path(), "fast")


# ---- which profile applies: it follows the model ----

TWO_PROFILES = (
    GOOD
    + """
[profiles.big]
[[profiles.big.stages]]
name = "model"
ms = 20
spans = ["model.prefill", "model.decode"]

[models.large]
profile = "big"
why = "measured on the large model"
"""
)


def test_the_profile_follows_the_model_and_says_why(tmp_path):
    path = _write(tmp_path, TWO_PROFILES)
    large = load_budget(path, model="large")
    assert (large.profile, large.model, large.why) == ("big", "large", "measured on the large model")
    other = load_budget(path, model="small")  # not in [models]: the default, and it says so
    assert other.profile == "p" and other.why == "the file's default profile: no [models.small] entry"
    assert load_budget(path).why == "the file's default profile"
    asked = load_budget(path, "p", model="large")  # an explicit profile wins over the model's
    assert (asked.profile, asked.why) == ("p", "asked for")
    # the report carries the choice, for `corrige budget --json` and the dashboard
    report = budget_report(_table([[(names.DECODE, 1.0)]]), large).to_dict()
    assert (report["profile"], report["model"], report["why"]) == ("big", "large", "measured on the large model")


def test_bundled_file_names_a_profile_and_a_reason_for_each_bundled_model():
    models = Path(str(resources.files("corrige").joinpath("models")))
    bundled = sorted(p.name for p in models.iterdir() if (p / "config.json").exists())
    assert bundled == ["reader", "seed", "tutor"]
    for name in bundled:
        budget = load_budget(model=name)
        assert budget.profile == "tutor" and budget.model == name
        assert budget.why and "default" not in budget.why  # an entry of its own, not the fallback
    assert "upper bound" in load_budget(model="seed").why
    assert load_budget(model="tutor").why == "measured on this model"


def test_the_server_names_its_model_by_directory(tmp_path):
    from corrige.server.settings import Settings

    assert Settings().served_model == "reader"  # the bundled model
    assert Settings(model_dir=Path("corrige/models/tutor/")).served_model == "tutor"
    assert load_budget(model=Settings().served_model).why == load_budget(model="reader").why


# ---- the report ----


def _table(stage_lists, gap_ms=100.0):
    records = []
    for i, stages in enumerate(stage_lists):
        records += make_trace(sequential(stages), start_ns=T0 + round(i * gap_ms * MS))
    return TraceTable.from_traces(group_traces(records))


def test_burn_rate_is_the_mean_over_the_allocation_and_shares_add_up(tmp_path):
    budget = load_budget(_write(tmp_path, GOOD))
    # model: 1 ms in 99 requests and one 100 ms outlier; nothing uncovered
    stages = [[(names.PREFILL, 0.5), (names.DECODE, 0.5)] for _ in range(99)] + [[(names.DECODE, 100.0)]]
    report = budget_report(_table(stages), budget)
    model, rest = report.stages
    assert model.name == "model" and model.dist.n == 100
    assert model.burn == pytest.approx((99 + 100) / 100 / 2)  # mean 1.99 ms / 2 ms
    assert model.burn_p50 == pytest.approx(0.5)
    assert model.share == pytest.approx(1.0)
    assert rest.share == pytest.approx(0.0)
    assert sum(s.share for s in report.stages) == pytest.approx(1.0)
    # the stages' burns, weighted by their allocations, make the total's: means add up
    assert sum(s.burn * s.allocation_ms for s in report.stages if s.dist.n) == pytest.approx(
        report.total.burn * report.total.allocation_ms
    )
    assert report.total.allocation_ms == 3 and report.total.dist.n == 100
    assert report.flagged == []


def test_one_outlier_lifts_the_burn_but_is_not_sustained(tmp_path):
    budget = load_budget(_write(tmp_path, GOOD))
    report = budget_report(_table([[(names.DECODE, 1.0)] for _ in range(99)] + [[(names.DECODE, 300.0)]]), budget)
    model = report.stages[0]
    assert model.burn == pytest.approx((99 + 300) / 100 / 2) and model.burn > 1.5
    assert [b > 1.5 for b in model.window_burns] == [False, False, False, False, True]
    assert model.sustained is False and report.flagged == []


def test_a_lasting_slowdown_is_flagged_a_burst_is_not(tmp_path):
    budget = load_budget(_write(tmp_path, GOOD))
    steady_hot = [[(names.DECODE, 4.0)] for _ in range(100)]  # 2x, all the time
    report = budget_report(_table(steady_hot), budget)
    model = report.stages[0]
    assert model.burn == pytest.approx(2.0) and len(model.window_burns) == 5
    assert model.sustained is True and report.flagged == ["model"]

    # the last 60 % of the window at 2.5x: 3 of 5 sub-windows hot ("most"), window burn 1.7: flagged
    lasting = [[(names.DECODE, 1.0)] for _ in range(40)] + [[(names.DECODE, 5.0)] for _ in range(60)]
    assert budget_report(_table(lasting), budget).stages[0].sustained is True
    # the last 40 %: window burn 1.3, 2 of 5 sub-windows hot: not flagged
    burst = [[(names.DECODE, 1.0)] for _ in range(60)] + [[(names.DECODE, 5.0)] for _ in range(40)]
    cool = budget_report(_table(burst), budget).stages[0]
    assert cool.sustained is False and max(cool.window_burns) == pytest.approx(2.5)

    # hot over the whole window (burn 1.84), but the heat sits in the first two sub-windows; the
    # last three have 9 slow requests of 20 each, a burn of 1.4: not sustained
    front_loaded = [5.0] * 40 + ([5.0] * 9 + [1.0] * 11) * 3
    mixed = budget_report(_table([[(names.DECODE, ms)] for ms in front_loaded]), budget).stages[0]
    assert mixed.burn == pytest.approx(1.84)
    assert [b > 1.5 for b in mixed.window_burns] == [True, True, False, False, False]
    assert mixed.sustained is False


def test_too_few_traces_cannot_tell_sustained(tmp_path):
    budget = load_budget(_write(tmp_path, GOOD))
    report = budget_report(_table([[(names.DECODE, 10.0)] for _ in range(15)]), budget)
    assert report.stages[0].burn == pytest.approx(5.0)
    assert report.stages[0].sustained is None and report.flagged == []


def _untraced_at_twice_its_allocation(n: int) -> TraceTable:
    """n requests of 3 ms: 1 ms of decode (burn 0.5 of "model"), 2 ms no span covers (2x "rest")."""
    records = [r for i in range(n) for r in make_trace([(names.DECODE, 0.0, 1.0)], root_ms=3.0, start_ns=T0 + i * MS)]
    return TraceTable.from_traces(group_traces(records))


@pytest.mark.parametrize("n", [12, 40, MIN_SAMPLES - 1])
def test_a_hot_stage_on_too_few_samples_is_grey_not_flagged(tmp_path, n):
    """A light load: a handful of requests whose untraced time runs at 2x its allocation. Under
    MIN_SAMPLES the stage has a burn but no verdict, and is never flagged, however hot."""
    budget = load_budget(_write(tmp_path, GOOD))
    report = budget_report(_table([[(names.DECODE, 1.0)] for _ in range(n)]), budget)
    model = report.stages[0]
    assert model.burn == pytest.approx(0.5) and model.verdict == "too_few"
    hot = budget_report(_untraced_at_twice_its_allocation(n), budget)
    rest = hot.stages[1]
    assert rest.burn == pytest.approx(2.0) and rest.dist.n == n
    assert rest.verdict == "too_few" and rest.sustained is None
    assert hot.flagged == [] and rest in hot.too_few
    assert hot.to_dict()["min_samples"] == MIN_SAMPLES
    assert hot.to_dict()["stages"][1]["verdict"] == "too_few"


def test_the_same_stage_on_enough_samples_is_judged_and_flagged(tmp_path):
    budget = load_budget(_write(tmp_path, GOOD))
    report = budget_report(_untraced_at_twice_its_allocation(MIN_SAMPLES), budget)
    rest = report.stages[1]
    assert rest.dist.n == MIN_SAMPLES and rest.verdict == "over" and rest.sustained is True
    assert report.flagged == ["rest"] and report.too_few == []
    assert report.stages[0].verdict == "ok"  # 1 ms of 2: burn 0.5
    assert MIN_SAMPLES == 100  # the fewest samples with a p99 of their own (docs/observability.md)


def test_spans_the_budget_does_not_name_show_as_unbudgeted(tmp_path):
    budget = load_budget(_write(tmp_path, GOOD))
    report = budget_report(_table([[(names.TOKENIZE, 1.0), (names.DECODE, 3.0)] for _ in range(30)]), budget)
    unbudgeted = report.stages[-1]
    assert unbudgeted.name == "unbudgeted" and unbudgeted.spans == (names.TOKENIZE,)
    assert unbudgeted.allocation_ms is None and math.isnan(unbudgeted.burn)
    assert unbudgeted.share == pytest.approx(0.25)


def test_formula_from_measured_spans_names_the_dominant_term():
    def request(k: int, steps: int) -> list:
        decode = {names.STEPS: steps, names.OUTPUT_TOKENS: k}
        return [
            (names.VALIDATE, 0.2),
            (names.SECURITY, 0.05),
            (names.TOKENIZE, 0.1),
            (names.PREFILL, 2.0),
            (names.DECODE, 0.5 * steps, decode),  # 0.5 ms a step
            (names.FORMAT, 0.4),
        ]

    # one token per step, and 21 tokens in 6 steps (speculative decoding kept guessed tokens)
    table = _table([request(21, 20), request(21, 6)])
    f = formula(table)
    terms = {t.name: t.ms for t in f.terms}
    assert terms["t_parse"] == pytest.approx(0.2)
    assert terms["t_tokenize"] == pytest.approx(0.1)
    assert terms["t_prefill"] == pytest.approx(2.0)
    assert f.k == pytest.approx(13)  # K counts decode steps, not tokens
    assert f.t_decode_step_ms == pytest.approx(0.5)  # Σ decode ms / Σ steps = (10 + 3) / (20 + 6)
    assert terms["K·t_decode_step"] == pytest.approx(6.5)
    assert terms["t_detok + t_serialize"] == pytest.approx(0.4)
    assert f.predicted_ms == pytest.approx(0.2 + 0.1 + 2.0 + 6.5 + 0.4)
    assert f.measured_ms == pytest.approx(0.2 + 0.05 + 0.1 + 2.0 + 6.5 + 0.4)
    assert f.dominant is not None and f.dominant.name == "K·t_decode_step"
    assert f.to_dict()["dominant_share"] == pytest.approx(6.5 / 9.2, abs=1e-4)


def test_bundled_tutor_budget_against_synthetic_tutor_traffic_flags_nothing():
    from corrige.cli.traces_bench import synthetic_spans

    table = TraceTable.from_traces(group_traces(synthetic_spans(300, seed=3)))
    report = budget_report(table, load_budget())
    assert report.traces == 300
    assert report.flagged == []
    assert all(0 < s.burn < 1.5 for s in report.stages if s.allocation_ms)
    assert report.formula.dominant.name == "K·t_decode_step"
    assert sum(s.share for s in report.stages) == pytest.approx(1.0)
