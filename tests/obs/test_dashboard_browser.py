"""The dashboard in headless Chromium against a real server: it renders, updates live, and shows
the numbers the API gives. The trace store is pre-filled with synthetic traces before the server
starts; corrections sent through the server add their own traces and engine steps."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import httpx
import pytest
from e2e_support import ServerProcess, wait_for
from obs_support import T0, fill, make_trace, orphan, sequential

from corrige.cli.traces_bench import synthetic_spans
from corrige.obs import spans as names
from corrige.obs.budget import MIN_SAMPLES
from corrige.obs.store import TraceStore

playwright_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
UVICORN = ["-m", "uvicorn", "--factory", "corrige.server.app:app_from_env", "--no-access-log", "--log-level", "warning"]
PREFILLED, ORPHANS, CORRECTIONS = 500, 3, 24
# the only prefilled traces with rule-card retrieval, 4x its 15 ms; with the corrections' (rules
# off: skipped, ~0 ms) still too few samples, and a burn above 1.5x
RARE, RARE_MS = 30, 60.0

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")


@pytest.fixture(scope="module")
def server(serving_model, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dashboard")
    store_path = tmp / "traces.sqlite"
    store = TraceStore(store_path)
    common = [r for r in synthetic_spans(PREFILLED, seed=21) if r.name != names.RETRIEVE]
    fill(store, [*common, *rare_retrievals(), *(orphan() for _ in range(ORPHANS))])
    store.close()
    env = {
        "CORRIGE_MODEL_DIR": str(serving_model),
        "CORRIGE_RATE_LIMIT": "0",
        "CORRIGE_ACCESS_LOG": "false",
        "CORRIGE_RULES": "off",  # no encoder to load: the page is the point here
        "CORRIGE_TRACE_STORE": str(store_path),
        "CORRIGE_N_SLOTS": "4",  # bursts of 8 corrections: 4 run, 4 wait their turn
    }
    process = ServerProcess(UVICORN, env, tmp / "server.log")
    try:
        yield process.start()
    finally:
        process.stop()


def rare_retrievals() -> list:
    """RARE requests, after the synthetic ones, that each spend RARE_MS retrieving rule cards."""
    bytes_ = {names.BYTES_IN: 40, names.BYTES_OUT: 2000}
    stages = sequential([(names.VALIDATE, 0.2, bytes_), (names.RETRIEVE, RARE_MS, bytes_)])
    return [r for i in range(RARE) for r in make_trace(stages, start_ns=T0 + (30 + i) * 1_000_000_000)]


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


def test_dashboard_shows_the_api_numbers_live(server, serving_model):
    send_corrections(server.url)
    every = PREFILLED + RARE + ORPHANS + CORRECTIONS
    # the server writes traces from a background thread: wait until all of them are in the store,
    # after which nothing changes it and page and API must agree
    data = wait_for(
        lambda: (d := summary(server.url)) and d["report"]["traces"] + d["report"]["incomplete"] == every and d,
        "every trace in the store",
    )
    assert max(data["steps"]["batch_max"]) >= 2  # the bursts were batched...
    # ...never past the 4 slots: the others waited their turn in the server's fair admission, which
    # lets into the engine only what its batch holds (so the engine's own queue stays empty)
    assert max(data["steps"]["batch_max"]) <= 4

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
            api = summary(server.url)  # no profile: the served model's, as the page asks
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
            assert int(shown(page, "trace-count")[0]) == report["traces"] == PREFILLED + RARE + CORRECTIONS
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
            assert queue_max == max(api["steps"]["waiting_max"])  # the engine's queue (empty: see above)
            assert page.locator("#queue-chart polyline").count() == 2

            # a stage hot on too few samples: grey and "too few samples (n=…)", never red nor flagged
            rare = next(s for s in budget["stages"] if s["spans"] == [names.RETRIEVE])
            n = rare["n"]
            assert RARE <= n < MIN_SAMPLES and rare["burn"] > budget["burn_limit"]  # it would be red
            assert rare["verdict"] == "too_few" and rare["sustained"] is None and budget["flagged"] == []
            bar = page.locator(f'#burn-bars rect[data-stage="{rare["name"]}"]')
            assert bar.get_attribute("fill") == "var(--few)" and bar.get_attribute("data-verdict") == "too_few"
            assert f"too few samples (n={n})" in page.locator("#burn-bars").text_content()
            burn_cell = page.locator(f'#budget-table tr[data-stage="{rare["name"]}"] td').nth(7)
            assert burn_cell.get_attribute("class") == "burn-few"
            assert burn_cell.inner_text().endswith(f"too few samples (n={n})")
            assert shown(page, "flagged")[0] == "none"
            assert shown(page, "min-samples")[0] == str(MIN_SAMPLES)
            judged = [s for s in budget["stages"] if s["allocation_ms"] and s["n"] >= MIN_SAMPLES]
            assert judged and all(s["verdict"] in ("ok", "warn", "over") for s in judged)
            for stage in judged:
                colour = page.locator(f'#burn-bars rect[data-stage="{stage["name"]}"]').get_attribute("fill")
                assert colour == {"ok": "var(--ok)", "warn": "var(--warn)", "over": "var(--bad)"}[stage["verdict"]]

            # which profile applies, and why; and no course shorthand anywhere on the page
            assert shown(page, "profile-model")[0] == budget["model"] == serving_model.name
            assert shown(page, "profile-why")[0] == budget["why"] and budget["why"]
            assert shown(page, "served-model")[0] == serving_model.name
            for text in (page.locator("body").inner_text(), page.content()):
                assert not re.search(r"(?i)seeds? 0\d", text)
                assert "spreadsheet" not in text.lower()

            # the journey of the bytes
            assert page.locator("#bytes-table tbody tr").count() == len(report["bytes"])

            page.screenshot(path=str(ARTIFACTS / "dashboard.png"), full_page=True)

            # another profile: the page follows
            page.select_option("#profile", "reference")
            page.wait_for_selector("[data-testid=budget-profile]:text-is('reference')")
            total = page.locator("#budget-table tbody tr.total td").nth(2)
            assert total.inner_text() == "5,000"
            assert "profile=reference" in page.url
            assert shown(page, "profile-why")[0] == "asked for"
            assert errors == []
        finally:
            browser.close()
    assert requested and all(url.startswith(server.url) or url.startswith("data:") for url in requested), requested
    assert (ARTIFACTS / "dashboard.png").stat().st_size > 10_000
