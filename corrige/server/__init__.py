"""The HTTP service: the grammar API, an OpenAI-compatible API, health, guards and draining.

`create_app(settings)` (in `corrige.server.app`) builds the FastAPI application;
`corrige.server.runner.serve(settings)` runs it under uvicorn with graceful draining.
"""
