"""`GET /v1/obs/summary` and `/dashboard` in a real app (lifespan, engine, trace store): the
numbers are those of `corrige budget` and `corrige traces report` over the same traces."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from obs_support import fill, orphan

from corrige.cli.traces_bench import synthetic_spans
from corrige.obs.budget import budget_report, load_budget
from corrige.obs.report import TraceTable, percentile_report
from corrige.obs.store import TraceStore
from corrige.server.app import create_app
from corrige.server.routes.dashboard import MAX_LAST
from corrige.server.settings import Settings


def settings_for(model_dir, store_path, **overrides) -> Settings:
    values = {
        "model_dir": model_dir,
        "rate_limit": 0,
        "access_log": False,
        "blas_threads": 0,
        "rules": "off",
        "trace_store": store_path,
        **overrides,
    }
    return Settings(**values)


@pytest.fixture
def store_path(tmp_path):
    path = tmp_path / "traces.sqlite"
    store = TraceStore(path)
    fill(store, [*synthetic_spans(250, seed=5), orphan(), orphan()])
    store.close()
    return path


def expected(store_path, last: int, model_dir, profile: str | None = None, budget_file=None):
    """What `corrige budget --json --model MODEL_DIR` and `corrige traces report --json` give."""
    table = TraceTable.from_traces(TraceStore(store_path).traces(last))
    budget = load_budget(budget_file, profile, model=model_dir.name)
    return budget_report(table, budget).to_dict(), percentile_report(table).to_dict()


@pytest.mark.parametrize("tracing", [True, False], ids=["server-store", "own-store"])
def test_summary_has_the_cli_numbers_the_orphans_and_the_engine_history(fixture_model, store_path, tracing):
    settings = settings_for(fixture_model, store_path, tracing=tracing)
    with TestClient(create_app(settings)) as client:
        assert (client.app.state.trace_store is not None) is tracing
        response = client.get("/v1/obs/summary", params={"last": 200})
        assert response.status_code == 200, response.text
        data = response.json()
    budget, report = expected(store_path, 200, fixture_model)
    assert data["budget"] == budget
    assert data["report"] == report
    assert data["report"]["traces"] + data["report"]["incomplete"] == 200  # the two orphans are traces too
    assert data["orphans"]["count"] == 2 and len(data["orphans"]["examples"]) == 2
    assert data["store"] is True and str(store_path) not in response.text  # no file paths in answers
    assert data["profiles"] == ["reference", "tutor"]
    # a model the bundled file does not list: its default profile, and the summary says so
    assert (budget["profile"], budget["model"]) == ("tutor", fixture_model.name)
    assert budget["why"] == f"the file's default profile: no [models.{fixture_model.name}] entry"
    steps = data["steps"]
    assert len(steps["t"]) == len(steps["batch_mean"]) == len(steps["waiting_max"]) == 240  # 60 s of 250 ms
    assert sum(steps["steps"]) >= 1  # the warm-up correction ran through the engine
    assert data["engine"]["slots_total"] == settings.n_slots


def test_profile_choice_and_errors(fixture_model, store_path, tmp_path):
    with TestClient(create_app(settings_for(fixture_model, store_path))) as client:
        reference = client.get("/v1/obs/summary", params={"profile": "reference", "last": 50}).json()
        assert reference["budget"]["profile"] == "reference" and reference["budget"]["total"]["allocation_ms"] == 5000
        assert reference["budget"]["why"] == "asked for"
        assert reference["budget"] == expected(store_path, 50, fixture_model, "reference")[0]
        unknown = client.get("/v1/obs/summary", params={"profile": "turbo"})
        assert unknown.status_code == 422 and unknown.json()["error"]["code"] == "unknown_profile"
        assert client.get("/v1/obs/summary", params={"last": 0}).status_code == 422
        too_many = client.get("/v1/obs/summary", params={"last": MAX_LAST + 1})
        assert too_many.status_code == 422 and too_many.json()["error"]["code"] == "validation_error"
        assert client.get("/v1/obs/summary", params={"last": MAX_LAST}).status_code == 200

    bad = tmp_path / "bad.toml"
    bad.write_text("[profiles.x]\n")
    with TestClient(create_app(settings_for(fixture_model, store_path, budget_file=bad))) as client:
        response = client.get("/v1/obs/summary")
        assert response.status_code == 500 and response.json()["error"]["code"] == "bad_budget"
        assert str(bad) not in response.text  # the path is in the log, not the answer


def test_no_store_yet_gives_an_empty_summary(fixture_model, tmp_path):
    missing = tmp_path / "none" / "traces.sqlite"
    with TestClient(create_app(settings_for(fixture_model, missing, tracing=False))) as client:
        data = client.get("/v1/obs/summary").json()
    assert data["store"] is False and data["report"]["traces"] == 0 and data["orphans"]["count"] == 0
    assert data["budget"]["stages"][0]["n"] == 0 and data["budget"]["stages"][0]["burn"] is None
    assert not missing.exists()  # the dashboard never creates a store


def test_the_page_and_its_static_files(fixture_model, store_path):
    with TestClient(create_app(settings_for(fixture_model, store_path))) as client:
        page = client.get("/dashboard")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        html = page.text
        assert '<script src="/static/dashboard/dashboard.js">' in html
        # the served model's profile, named as such, until one is picked
        assert f'<option value="" selected>tutor (the {fixture_model.name} model\'s)</option>' in html
        assert "http://" not in html and "https://" not in html  # nothing from elsewhere
        reference_page = client.get("/dashboard", params={"profile": "reference", "last": 100}).text
        assert '<option value="reference" selected>' in reference_page and 'data-last="100"' in reference_page
        script = client.get("/static/dashboard/dashboard.js")
        assert script.status_code == 200 and "/v1/obs/summary" in script.text
        assert "javascript" in script.headers["content-type"]
        assert client.get("/static/dashboard/dashboard.css").status_code == 200
        # no course shorthand ("seed 000", "seed 004") in what the operator sees
        for text in (html, reference_page, script.text):
            assert not re.search(r"(?i)seeds? 0\d", text)


def test_the_profile_follows_the_served_model(fixture_model, store_path, tmp_path):
    """A budget file that gives the served model (by its directory's name) a profile of its own:
    the summary, the page and the burn-rate gauge use it, and say why."""
    from corrige.obs.budget import bundled_budget_path

    own = tmp_path / "budget.toml"
    own.write_text(
        bundled_budget_path().read_text(encoding="utf-8")
        + f'\n[models.{fixture_model.name}]\nprofile = "reference"\nwhy = "a test model, read at CPU scale"\n',
        encoding="utf-8",
    )
    settings = settings_for(fixture_model, store_path, budget_file=own)
    with TestClient(create_app(settings)) as client:
        budget = client.get("/v1/obs/summary", params={"last": 100}).json()["budget"]
        html = client.get("/dashboard").text
        gauge = client.app.state.metrics
    assert (budget["profile"], budget["model"], budget["why"]) == (
        "reference",
        fixture_model.name,
        "a test model, read at CPU scale",
    )
    assert budget == expected(store_path, 100, fixture_model, budget_file=own)[0]
    assert f'<option value="" selected>reference (the {fixture_model.name} model\'s)</option>' in html
    assert gauge.allocations["retrieve rule cards"][0] == pytest.approx(0.2)  # seconds: reference's 200 ms
