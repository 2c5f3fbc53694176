"""`GET /docs`: Swagger UI over `/openapi.json`, served entirely by this server.

Swagger UI's script and stylesheet come from the `fastapi-offline` package (its `static/`
folder: Swagger UI 5, which reads OpenAPI 3.1), so the page works with no network. FastAPI's own
page holds an inline script, which the CSP of every HTML page refuses (`headers.py`); this one
starts Swagger UI from a static file (`/static/docs/swagger-init.js`) and is under that same CSP.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

router = APIRouter()

STATIC_URL = "/static/docs"
STATIC_DIR = Path(__file__).resolve().parent.parent / "web" / "static" / "docs"
SWAGGER_PACKAGE = ("fastapi_offline", "static")  # swagger-ui-bundle.js, swagger-ui.css, favicon.png
PAGE = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>corrige · API</title>
<link rel="icon" href="{STATIC_URL}/favicon.png">
<link rel="stylesheet" href="{STATIC_URL}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="{STATIC_URL}/swagger-ui-bundle.js"></script>
<script src="{STATIC_URL}/swagger-init.js"></script>
</body>
</html>
"""


def static_files() -> StaticFiles:
    """The project's own files first (`swagger-init.js`), then Swagger UI's from its package."""
    return StaticFiles(directory=STATIC_DIR, packages=[SWAGGER_PACKAGE])


@router.get("/docs", include_in_schema=False)
async def docs() -> HTMLResponse:
    return HTMLResponse(PAGE)
