"""`GET /docs`: Swagger UI over `/openapi.json`. FastAPI's own page holds an inline script, which
the CSP of every HTML page refuses; this one loads the same Swagger UI from its CDN and starts it
from a static file (`/static/docs/swagger-init.js`), under a CSP that allows that CDN."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

router = APIRouter()

STATIC_URL = "/static/docs"
STATIC_DIR = Path(__file__).resolve().parent.parent / "web" / "static" / "docs"
CDN = "https://cdn.jsdelivr.net"
SWAGGER = f"{CDN}/npm/swagger-ui-dist@5"
CSP = (
    f"default-src 'self'; script-src 'self' {CDN}; style-src 'self' {CDN}; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
)
PAGE = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>corrige · API</title>
<link rel="stylesheet" href="{SWAGGER}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="{SWAGGER}/swagger-ui-bundle.js"></script>
<script src="{STATIC_URL}/swagger-init.js"></script>
</body>
</html>
"""


def static_files() -> StaticFiles:
    return StaticFiles(directory=STATIC_DIR)


@router.get("/docs", include_in_schema=False)
async def docs() -> HTMLResponse:
    return HTMLResponse(PAGE, headers={"Content-Security-Policy": CSP})
