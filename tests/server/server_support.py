"""Shared pieces of the server tests: a small random model (the tutor abstains on its garbage,
which is all structural tests need), settings that ignore the environment, and a gate that
holds the engine's model steps so tests control queues without timing anything."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx

from corrige.model import preset
from corrige.model.weights import random_params, save_model
from corrige.tokenizer import BPETokenizer
from corrige.tutor.agent import BUNDLED_MODEL

SENTENCES = [
    "Yesterday I went to the store.",
    "She doesn't like coffee in the morning.",
    "We have lived here for three years.",
    "He is a teacher and she is a doctor.",
    "They were playing football when it started to rain.",
    "I am twenty years old.",
    "Ayer fui a la tienda; pasado irregular: goed → went.",
]


def build_fixture_model(directory: Path) -> Path:
    """Random `tiny`-shaped weights (64-token window) plus a BPE tokenizer trained on a few sentences."""
    tokenizer = BPETokenizer.train(SENTENCES * 3, vocab_size=320, min_frequency=1)
    cfg = preset("tiny").with_(vocab_size=tokenizer.vocab_size, n_ctx=64)
    directory.mkdir(parents=True, exist_ok=True)
    save_model(directory, random_params(cfg, seed=0), cfg, bos_id=tokenizer.special.bos, eos_id=tokenizer.special.eos)
    tokenizer.save(directory)
    return directory


def bundled_model_available() -> bool:
    return (BUNDLED_MODEL / "model.safetensors").is_file()


def run(coro, timeout: float = 30.0):
    """Run a coroutine with a safety timeout, so a bug hangs no test run."""

    async def bounded():
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


@asynccontextmanager
async def served(app) -> AsyncIterator[httpx.AsyncClient]:
    """The app with its lifespan running, and an httpx client talking to it in this event loop."""
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield client


async def wait_until(condition, what: str, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    give_up = loop.time() + timeout
    while not condition():
        if loop.time() > give_up:
            raise AssertionError(f"never happened: {what}")
        await asyncio.sleep(0.002)


def error_of(response: httpx.Response) -> dict:
    """The error object, after checking the shared error model and the request id header."""
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert set(error) == {"code", "message", "request_id"}, error
    assert error["request_id"] == response.headers["x-request-id"]
    return error
