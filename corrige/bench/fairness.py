"""Two clients on one server: a heavy one that sends long texts, a well-behaved one that sends
single sentences. Does the heavy one's work hold up the other's answers?

    python -m corrige.bench.fairness --url http://127.0.0.1:8000            # the server's settings as they are
    run_fairness("http://127.0.0.1:8000", heavy_rate=3.0, seconds=10.0)      # the same, as a dict

Each client has an address of its own on the loopback network (the heavy one connects from
127.0.0.2, the light one from 127.0.0.3), so the server counts them as two clients as it would
two machines, with no proxy header involved.

1. **Unloaded**: the light client sends `light_requests` sentences, one after another, `light_gap_s`
   apart: its latencies alone.
2. **Loaded**: the heavy client sends texts of `heavy_sentences` short sentences each ("She go so.": 395
   of them make 4,400 characters, and as many pieces for the engine) at `heavy_rate` per second, open
   loop (it does not wait for its answers), each with `Cache-Control: no-cache`, so that no
   answer comes from the answer cache. After `settle_s` the light client sends the
   same sentences again, the same way, while the heavy load goes on.

The report: per phase the light client's p50 and p95 latency and its failures (any status but
200), the loaded p50 over the unloaded one; and the heavy client's answers by status, with the
`Retry-After` values of its 429s and the codes of its errors.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from collections import Counter
from typing import Any

HEAVY_ADDRESS, LIGHT_ADDRESS = "127.0.0.2", "127.0.0.3"
LIGHT_SENTENCES = ("She go to school every day.", "I have a dog.", "He don't like apples.", "We was happy.")
# the heavy client's sentences: as short as a sentence gets, so that a text holds as many as it can
_SUBJECTS = ("He", "She", "Tom", "Ana", "It", "I")
_VERBS = ("go", "eat", "run", "see", "sit")


def heavy_text(sentences: int, seed: int) -> str:
    """`sentences` short sentences with an error each, 11 characters and a space (cut at the
    5,000 characters a text may have), in an order of their own for each `seed`."""
    rng = random.Random(seed)
    parts = [f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} so." for _ in range(sentences)]
    text = " ".join(parts)
    while len(text) > 5000:  # the longest text a request may carry
        parts.pop()
        text = " ".join(parts)
    return text


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


async def light_phase(url: str, requests: int, gap_s: float, timeout_s: float) -> dict[str, Any]:
    """`requests` single sentences from LIGHT_ADDRESS, each `gap_s` after the last answer."""
    import httpx

    transport = httpx.AsyncHTTPTransport(local_address=LIGHT_ADDRESS)
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    codes: Counter[str] = Counter()
    async with httpx.AsyncClient(base_url=url, transport=transport, timeout=timeout_s) as client:
        for i in range(requests):
            sentence = LIGHT_SENTENCES[i % len(LIGHT_SENTENCES)]
            start = time.perf_counter()
            try:
                response = await client.post("/v1/grammar/correct", json={"sentence": sentence})
                status = response.status_code
                if status != 200:
                    codes[_code(response)] += 1
            except httpx.HTTPError as exc:
                status = 0
                codes[type(exc).__name__] += 1
            latencies.append((time.perf_counter() - start) * 1000.0)
            statuses[status] += 1
            await asyncio.sleep(gap_s)
    return {
        "requests": requests,
        "failed": requests - statuses.get(200, 0),
        "statuses": dict(statuses),
        "codes": dict(codes),
        "p50_ms": _round(percentile(latencies, 0.5)),
        "p95_ms": _round(percentile(latencies, 0.95)),
    }


def _code(response: Any) -> str:
    try:
        return str(response.json()["error"]["code"])
    except (ValueError, KeyError, TypeError):
        return f"http_{response.status_code}"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


class HeavyClient:
    """Texts from HEAVY_ADDRESS at `rate` per second, open loop, until `stop()`."""

    def __init__(self, url: str, rate: float, sentences: int, timeout_s: float) -> None:
        self.url, self.rate, self.sentences, self.timeout_s = url, rate, sentences, timeout_s
        self.statuses: Counter[int] = Counter()
        self.codes: Counter[str] = Counter()
        self.retry_after: list[float] = []
        self.accepted_sentences = 0
        self._stopping = asyncio.Event()
        self._tasks: set[asyncio.Task] = set()

    async def run(self) -> None:
        import httpx

        transport = httpx.AsyncHTTPTransport(local_address=HEAVY_ADDRESS)
        limits = httpx.Limits(max_connections=256, max_keepalive_connections=256)
        headers = {"Cache-Control": "no-cache"}
        async with httpx.AsyncClient(
            base_url=self.url, transport=transport, timeout=self.timeout_s, limits=limits, headers=headers
        ) as client:
            seed = 0
            next_at = time.perf_counter()
            while not self._stopping.is_set():
                seed += 1
                task = asyncio.ensure_future(self._send(client, heavy_text(self.sentences, seed)))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
                next_at += 1.0 / self.rate
                try:
                    await asyncio.wait_for(self._stopping.wait(), max(0.0, next_at - time.perf_counter()))
                except TimeoutError:
                    pass
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _send(self, client: Any, text: str) -> None:
        import httpx

        try:
            response = await client.post("/v1/grammar/correct", json={"text": text, "rules": False})
        except httpx.HTTPError as exc:
            self.statuses[0] += 1
            self.codes[type(exc).__name__] += 1
            return
        self.statuses[response.status_code] += 1
        if response.status_code == 200:
            self.accepted_sentences += len(response.json()["sentences"])
            return
        self.codes[_code(response)] += 1
        if response.status_code == 429 and "retry-after" in response.headers:
            self.retry_after.append(float(response.headers["retry-after"]))

    def stop(self) -> None:
        self._stopping.set()

    def report(self) -> dict[str, Any]:
        return {
            "requests": sum(self.statuses.values()),
            "statuses": dict(sorted(self.statuses.items())),
            "codes": dict(self.codes),
            "retry_after_s": sorted(set(self.retry_after)),
            "sentences_corrected": self.accepted_sentences,
        }


async def fairness(
    url: str,
    heavy_rate: float = 3.0,
    heavy_sentences: int = 395,
    light_requests: int = 30,
    light_gap_s: float = 0.2,
    settle_s: float = 2.0,
    timeout_s: float = 60.0,
) -> dict[str, Any]:
    """The two phases (see the module's docstring)."""
    unloaded = await light_phase(url, light_requests, light_gap_s, timeout_s)
    heavy = HeavyClient(url, heavy_rate, heavy_sentences, timeout_s)
    heavy_task = asyncio.ensure_future(heavy.run())
    started = time.perf_counter()
    try:
        await asyncio.sleep(settle_s)
        loaded = await light_phase(url, light_requests, light_gap_s, timeout_s)
    finally:
        heavy.stop()
        await heavy_task
    ratio = None
    if unloaded["p50_ms"] and loaded["p50_ms"] is not None:
        ratio = round(loaded["p50_ms"] / unloaded["p50_ms"], 2)
    return {
        "heavy": {"rate_per_s": heavy_rate, "sentences_per_text": heavy_sentences, **heavy.report()},
        "light_unloaded": unloaded,
        "light_loaded": loaded,
        "loaded_over_unloaded_p50": ratio,
        "loaded_seconds": round(time.perf_counter() - started, 1),
    }


def run_fairness(url: str, **options: Any) -> dict[str, Any]:
    return asyncio.run(fairness(url, **options))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the server, on this machine (http://127.0.0.1:PORT)")
    parser.add_argument("--heavy-rate", type=float, default=3.0, help="texts per second from the heavy client")
    parser.add_argument("--heavy-sentences", type=int, default=395, help="sentences per text (395: 4,400 characters)")
    parser.add_argument("--light-requests", type=int, default=30, help="sentences per phase from the light client")
    parser.add_argument("--light-gap", type=float, default=0.2, help="seconds between the light client's requests")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds of heavy load before the light phase")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds a request may take before it fails")
    args = parser.parse_args(argv)
    from corrige.bench.load import check_loopback

    report = run_fairness(
        check_loopback(args.url),
        heavy_rate=args.heavy_rate,
        heavy_sentences=args.heavy_sentences,
        light_requests=args.light_requests,
        light_gap_s=args.light_gap,
        settle_s=args.settle,
        timeout_s=args.timeout,
    )
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
