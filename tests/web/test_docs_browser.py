"""The API docs page (`/docs`, Swagger UI) in Debian's chromium against a real server, with the
network cut: every request to another host than the server is aborted. The page must render the
whole API under the server's CSP, with no console error, no page error and no failed request."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import expect, sync_playwright

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}


def test_the_docs_page_renders_every_operation_offline(portal_server, artifacts):
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: the browser tests need Debian's chromium (`make test` installs it)")
    document = httpx.get(f"{portal_server.url}/openapi.json", timeout=30).json()
    operations = sum(1 for item in document["paths"].values() for method in item if method in METHODS)
    assert document["paths"]["/correct"]["post"] and operations > 10
    errors: list[str] = []
    failed: list[str] = []
    refused: list[str] = []

    def offline(route):
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort("internetdisconnected")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            context = browser.new_context(base_url=portal_server.url)
            context.set_default_timeout(20_000)
            context.route("**/*", offline)
            page = context.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("requestfailed", lambda r: failed.append(f"{r.url}: {r.failure}"))
            response = page.goto("/docs")
            assert response.status == 200 and "script-src 'self'" in response.headers["content-security-policy"]
            correct = page.locator(".opblock.opblock-post", has=page.locator('[data-path="/correct"]'))
            expect(correct).to_be_visible(timeout=20_000)  # a loaded machine: Swagger UI takes a while
            expect(correct.locator(".opblock-summary-method")).to_have_text("POST")
            expect(page.locator(".opblock")).to_have_count(operations)
            correct.locator(".opblock-summary-control").click()  # open it: its request body and responses
            expect(correct.locator(".responses-table")).to_be_visible()
            page.screenshot(path=str(artifacts / "docs-offline.png"), full_page=False)
            page.wait_for_load_state("networkidle")
        finally:
            browser.close()
    assert errors == [], errors
    assert failed == [], failed
    assert refused == [], refused
