"""The dashboard in headless Chromium against a real server: it renders, updates live, and shows
the numbers the API gives. The trace store is pre-filled with synthetic traces before the server
starts; corrections sent through the server add their own traces and engine steps."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from e2e_support import ServerProcess, wait_for
from obs_support import fill, orphan

from corrige.cli.obs import synthetic_spans
from corrige.obs.store import TraceStore

playwright_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
UVICORN = ["-m", "uvicorn", "--factory", "corrige.server.app:app_from_env", "--no-access-log", "--log-level", "warning"]
PREFILLED, ORPHANS, CORRECTIONS = 500, 3, 24

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")


@pytest.fixture(scope="module")
def server(serving_model, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dashboard")
    store_path = tmp / "traces.sqlite"
    store = TraceStore(store_path)
    fill(store, [*synthetic_spans(PREFILLED, seed=21), *(orphan() for _ in range(ORPHANS))])
    store.close()
    env = {
        "CORRIGE_MODEL_DIR": str(serving_model),
        "CORRIGE_RATE_LIMIT": "0",
        "CORRIGE_ACCESS_LOG": "false",
        "CORRIGE_RULES": "off",  # no encoder to load: the page is the point here
        "CORRIGE_TRACE_STORE": str(store_path),
        "CORRIGE_N_SLOTS": "4",  # bursts of 8 corrections: 4 run, 4 wait (queue depth on the page)
    }
    process = ServerProcess(UVICORN, env, tmp / "server.log")
    try:
        yield process.start()
    finally:
        process.stop()


def send_corrections(url: str) -> None:
    """Bursts of concurrent corrections, so the engine batches them (batch size > 1)."""
    sentences = ["Yesterday I goed to the store.", "He don't want to come.", "She have two cats.", "I am agree."]

    async def burst():
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            for start in range(0, CORRECTIONS, 8):
                responses = await asyncio.gather(
                    *(
                        client.post("/v1/grammar/correct", json={"sentence": sentences[i % len(sentences)]})
                        for i in range(start, start + 8)
                    )
                )
                assert all(r.status_code == 200 for r in responses), [r.text for r in responses]

    asyncio.run(burst())


def summary(url: str, **params) -> dict:
    response = httpx.get(f"{url}/v1/obs/summary", params={"last": 1000, **params}, timeout=30)
    response.raise_for_status()
    return response.json()


def shown(page, testid: str) -> tuple[str, str]:
    node = page.locator(f'[data-testid="{testid}"]')
    return node.inner_text(), node.get_attribute("data-value")


def rounds_to(text: str, value: float) -> bool:
    """Whether `text` (e.g. "0.25x", "1,200", "+9.4%") is `value` rounded to the digits shown."""
    digits = text.replace(",", "").rstrip("%x").lstrip("+")
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    return abs(float(digits) - value) <= 0.5 * 10**-decimals + 1e-9


def test_dashboard_shows_the_api_numbers_live(server):
    send_corrections(server.url)
    every = PREFILLED + ORPHANS + CORRECTIONS
    # the server writes traces from a background thread: wait until all of them are in the store,
    # after which nothing changes it and page and API must agree
    data = wait_for(
        lambda: (d := summary(server.url)) and d["report"]["traces"] + d["report"]["incomplete"] == every and d,
        "every trace in the store",
    )
    assert max(data["steps"]["batch_max"]) >= 2  # the bursts were batched...
    assert max(data["steps"]["waiting_max"]) >= 1  # ...and some of them queued for a slot

    ARTIFACTS.mkdir(exist_ok=True)
    requested: list[str] = []
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1700})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("request", lambda request: requested.append(request.url))
            page.goto(f"{server.url}/dashboard")
            # it polls; selectors, not page.wait_for_function: the page's CSP forbids evaluating strings
            page.wait_for_selector("body:not([data-updates='0']):not([data-updates='1'])", timeout=20_000)
            api = summary(server.url, profile="tutor")
            report, budget = api["report"], api["budget"]

            # end to end vs the naive sum
            for testid, value in [
                ("e2e-p50", report["e2e"]["p50_ms"]),
                ("e2e-p95", report["e2e"]["p95_ms"]),
                ("e2e-p99", report["e2e"]["p99_ms"]),
                ("naive-p95", report["naive_p95_sum_ms"]),
                ("delta-ms", report["delta_ms"]),
            ]:
                text, raw = shown(page, testid)
                assert float(raw) == pytest.approx(value), testid
                assert rounds_to(text, value), (testid, text, value)
            assert rounds_to(shown(page, "delta-pct")[0], report["delta_pct"])
            assert int(shown(page, "trace-count")[0]) == report["traces"] == PREFILLED + CORRECTIONS
            assert shown(page, "orphans")[0] == str(api["orphans"]["count"]) == str(ORPHANS)
            assert "bad" in page.locator('[data-testid="orphans"]').get_attribute("class")

            # the spreadsheet: one row per allocation plus the total, with the API's numbers
            rows = page.locator("#budget-table tbody tr")
            assert rows.count() == len(budget["stages"]) + 1
            for i, stage in enumerate([*budget["stages"], budget["total"]]):
                cells = rows.nth(i).locator("td")
                assert cells.nth(0).inner_text() == stage["name"]
                for column, key in [(2, "allocation_ms"), (4, "mean_ms"), (5, "p50_ms"), (6, "p95_ms"), (7, "burn")]:
                    assert float(cells.nth(column).get_attribute("data-value")) == pytest.approx(stage[key])
                    text = cells.nth(column).inner_text().split()[0]
                    assert rounds_to(text, stage[key]), (stage["name"], key, text, stage[key])
            dominant = budget["formula"]["dominant"]
            assert dominant in shown(page, "dominant")[0]

            # budget vs actual: one segment per stage in each bar, widths in proportion to the numbers
            budget_rects = page.locator('#budget-bars g[data-row="budget"] rect')
            actual_rects = page.locator('#budget-bars g[data-row="actual"] rect')
            assert budget_rects.count() == actual_rects.count() == len(budget["stages"])
            widths = [float(budget_rects.nth(i).get_attribute("width")) for i in range(budget_rects.count())]
            whole = budget["total"]["allocation_ms"]
            for width, stage in zip(widths, budget["stages"], strict=True):
                assert width / sum(widths) == pytest.approx(stage["allocation_ms"] / whole, abs=0.002)
            actual = [float(actual_rects.nth(i).get_attribute("data-ms")) for i in range(actual_rects.count())]
            assert sum(actual) == pytest.approx(budget["total"]["mean_ms"], rel=1e-3)  # means add up

            # burn rate per stage
            bars = page.locator("#burn-bars rect")
            assert bars.count() == len(budget["stages"])
            for i, stage in enumerate(budget["stages"]):
                assert bars.nth(i).get_attribute("data-stage") == stage["name"]
                assert float(bars.nth(i).get_attribute("data-burn")) == pytest.approx(stage["burn"])

            # queue depth and batch size over time, from the engine's steps
            batch_max = float(page.locator("#batch-chart").get_attribute("data-max"))
            assert batch_max == max(max(api["steps"]["batch_max"]), max(api["steps"]["batch_mean"])) >= 2
            queue_max = float(page.locator("#queue-chart").get_attribute("data-max"))
            assert queue_max == max(api["steps"]["waiting_max"]) >= 1
            assert page.locator("#queue-chart polyline").count() == 2

            # the journey of the bytes
            assert page.locator("#bytes-table tbody tr").count() == len(report["bytes"])

            page.screenshot(path=str(ARTIFACTS / "dashboard.png"), full_page=True)

            # another profile: the page follows
            page.select_option("#profile", "seed")
            page.wait_for_selector("[data-testid=budget-profile]:text-is('seed')")
            total = page.locator("#budget-table tbody tr.total td").nth(2)
            assert total.inner_text() == "5,000"
            assert "profile=seed" in page.url
            assert errors == []
        finally:
            browser.close()
    assert requested and all(url.startswith(server.url) or url.startswith("data:") for url in requested), requested
    assert (ARTIFACTS / "dashboard.png").stat().st_size > 10_000
