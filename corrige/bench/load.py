"""A load generator for the grammar API: closed or open loop, one asyncio process, httpx.

* **Closed loop**: `clients` callers; each sends its next sentence when its last answer is
  back. Each caller's first `warmup` requests are not measured. Once `requests` measured
  requests have been sent (or `duration` seconds have passed) callers stop measuring but keep
  the load on until the last measured one returns, so every measured request saw the full
  concurrency. Rates count all completions between the first measured start and the last
  measured end.
* **Open loop**: requests arrive at `rate` per second whatever the server does, with Poisson
  (exponential gaps) or bursty gamma gaps (`burstiness` is the gaps' coefficient of
  variation: 1 is Poisson, 2 means clumps and lulls). `warmup` requests go first, one at a
  time, unmeasured. Arrivals stop after `requests` or `duration` seconds; those in flight finish.

Per request: latency (send to last byte), status, the error code of the server's JSON error
model, tokens (`usage`), the server's `timings_ms`, and when streaming (`stream=True`, SSE)
the time to the first token event and the gaps between token events.

Little's law for open-loop runs: over the arrival window, the time-average number of requests
in flight (from the requests' own intervals) must equal arrival rate x mean latency when the
run is stationary. A second, independent check samples the server's own in-flight count
(`GET /v1/engine/stats`) and compares it with arrival rate x the server's mean `timings_ms.total`.

The generator shares the machine with the server, so it is kept cheap: one event loop (uvloop
when installed), nothing heavier per request than reading its JSON, and one single-connection
`httpx.AsyncClient` per request in flight, reused, all sharing one TLS context. (One client
with 64 connections was measured first: httpcore's pool rescans all its connections, each a
socket poll, whenever a request starts or ends, and at 64 clients whose answers come back in
bursts, as static batching sends them, the generator spent about 11 ms of CPU per request
instead of about 2.) It only targets loopback addresses.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Callable
from typing import Any

from corrige.bench.load_records import LoadSpec, RequestResult
from corrige.bench.load_summary import LoadRun
from corrige.bench.workload import Workload, build_workload

log = logging.getLogger(__name__)

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
STATS_PATH = "/v1/engine/stats"


class NotLoopback(ValueError):
    """The target is not this machine; the load generator refuses to send traffic elsewhere."""


def check_loopback(url: str) -> str:
    """The URL without a trailing slash, if it names 127.0.0.1, localhost or ::1; raises `NotLoopback` otherwise."""
    import httpx

    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise NotLoopback(f"{url!r} is not a valid URL: {exc}") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise NotLoopback(f"{url!r} is not an http:// URL with a host (e.g. http://127.0.0.1:8000)")
    if parsed.host not in LOOPBACK_HOSTS:
        raise NotLoopback(
            f"refusing to send load to {parsed.host!r}: the load generator only targets this machine "
            "(127.0.0.1 or localhost); load-testing a server you do not run here is out of its scope"
        )
    return str(parsed).rstrip("/")


# ------------------------------------------------------------------------------------------ sending


class _Clients:
    """Single-connection `httpx.AsyncClient`s, one per request in flight, kept for reuse (see the module docstring)."""

    def __init__(self, base: str, timeout_s: float) -> None:
        import ssl

        import httpx

        tls = ssl.create_default_context()  # shared: building one per client costs about 45 ms of CPU each
        self._make = lambda: httpx.AsyncClient(
            base_url=base,
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
            timeout=httpx.Timeout(timeout_s, connect=10.0),
            verify=tls,
        )
        self._free: list[Any] = []
        self._all: list[Any] = []

    def take(self):
        if self._free:
            return self._free.pop()
        client = self._make()
        self._all.append(client)
        return client

    def give(self, client) -> None:
        self._free.append(client)

    async def aclose(self) -> None:
        await asyncio.gather(*(client.aclose() for client in self._all), return_exceptions=True)


class _Sender:
    """Sends one sentence and records what came back; never raises for a failed request."""

    def __init__(self, clients: _Clients, spec: LoadSpec, workload: Workload, t0: float) -> None:
        self.clients, self.spec, self.workload, self.t0 = clients, spec, workload, t0
        self.next_index = 0
        self.in_flight = 0

    async def send(self, phase: str, scheduled: float | None = None) -> RequestResult:
        index, self.next_index = self.next_index, self.next_index + 1
        body: dict[str, Any] = {"sentence": self.workload[index]}
        if self.spec.stream:
            body["stream"] = True
        if self.spec.rules is not None:
            body["rules"] = self.spec.rules
        result = RequestResult(index, time.perf_counter() - self.t0, scheduled=scheduled, phase=phase)
        self.in_flight += 1
        client = self.clients.take()
        try:
            if self.spec.stream:
                await self._stream(client, body, result)
            else:
                response = await client.post(self.spec.path, json=body)
                result.status = response.status_code
                _read_body(result, _json_or_none(response.content))
        except Exception as exc:  # noqa: BLE001  (any failure is a measured outcome, not a crash)
            import httpx

            result.error = "timeout" if isinstance(exc, httpx.TimeoutException) else f"transport:{type(exc).__name__}"
        finally:
            result.end = time.perf_counter() - self.t0
            self.in_flight -= 1
            self.clients.give(client)
        return result

    async def _stream(self, client, body: dict, result: RequestResult) -> None:
        async with client.stream("POST", self.spec.path, json=body) as response:
            result.status = response.status_code
            if response.status_code != 200:
                _read_body(result, _json_or_none(await response.aread()))
                return
            last: float | None = None
            gaps: list[float] = []
            name = data = None
            async for line in response.aiter_lines():
                if line.startswith("event:"):
                    name = line[6:].strip()
                elif line.startswith("data:"):
                    data = line[5:].strip()
                elif not line and data is not None:  # a blank line ends the event
                    now = time.perf_counter() - self.t0
                    if name == "token":
                        if last is None:
                            result.ttft = now - result.start
                        else:
                            gaps.append(now - last)
                        last = now
                    elif name in ("result", "error"):
                        _read_body(result, _json_or_none(data.encode()))
                    name = data = None
            result.itl = gaps
            if result.server_ms is None and result.error is None:
                result.error = "stream_ended_early"


def _json_or_none(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _read_body(result: RequestResult, body: Any) -> None:
    """Tokens and timings from a correction, or the code from the error model `{"error": {"code", ...}}`."""
    if not isinstance(body, dict):  # not JSON: a failure whatever the status
        result.error = result.error or f"http_{result.status}"
        return
    if "error" in body:
        error = body["error"]
        result.error = error.get("code", "unknown") if isinstance(error, dict) else str(error)
        return
    if result.status != 200:
        result.error = f"http_{result.status}"
        return
    usage = body.get("usage") or {}
    result.prompt_tokens = int(usage.get("prompt_tokens", 0))
    result.completion_tokens = int(usage.get("completion_tokens", 0))
    result.server_ms = body.get("timings_ms") or {}


# ------------------------------------------------------------------------------------------ loops


async def _closed_loop(sender: _Sender, spec: LoadSpec, on_result: Callable[[RequestResult], None] | None):
    results: list[RequestResult] = []
    issued = done = 0
    first_start: float | None = None
    last_end: float | None = None
    deadline: float | None = None  # set when the first measured request goes out

    def measuring() -> bool:
        now = time.perf_counter() - sender.t0
        return issued < spec.requests and (deadline is None or now < deadline)

    async def caller() -> None:
        nonlocal issued, done, first_start, last_end, deadline
        for _ in range(spec.warmup):
            results.append(await sender.send("warmup"))
        while last_end is None:
            phase = "measured" if measuring() else "tail"
            if phase == "measured":
                issued += 1
                if deadline is None:
                    first_start = time.perf_counter() - sender.t0
                    deadline = first_start + spec.duration
            result = await sender.send(phase)
            results.append(result)
            if phase == "measured":
                done += 1
                if on_result:
                    on_result(result)
                if done == issued and not measuring():  # nothing measured left in flight: stop everyone
                    last_end = result.end

    await asyncio.gather(*(caller() for _ in range(spec.clients)))
    assert first_start is not None and last_end is not None
    return results, (first_start, last_end)


def arrival_gaps(spec: LoadSpec, n: int) -> list[float]:
    """`n` gaps (seconds) between arrivals with mean 1/rate: exponential, or gamma with the given CV."""
    rng = random.Random(f"arrivals:{spec.seed}")
    if spec.arrival == "poisson":
        return [rng.expovariate(spec.rate) for _ in range(n)]
    shape = 1.0 / spec.burstiness**2  # gamma's CV is 1/sqrt(shape)
    return [rng.gammavariate(shape, 1.0 / (spec.rate * shape)) for _ in range(n)]


async def _open_loop(sender: _Sender, spec: LoadSpec, on_result: Callable[[RequestResult], None] | None):
    results: list[RequestResult] = []
    for _ in range(spec.warmup):
        results.append(await sender.send("warmup"))
    tasks: list[asyncio.Task] = []

    async def one(at: float) -> None:
        result = await sender.send("measured", scheduled=at)
        results.append(result)
        if on_result:
            on_result(result)

    begin = time.perf_counter() - sender.t0
    at = begin
    for gap in arrival_gaps(spec, spec.requests):
        at += gap
        if at - begin > spec.duration:
            break
        delay = at - (time.perf_counter() - sender.t0)
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(at)))
    last_arrival = at if tasks else begin
    if tasks:
        await asyncio.gather(*tasks)
    return results, (begin, min(last_arrival, begin + spec.duration))


async def _sample_in_flight(client, t0: float, interval: float, out: list[tuple[float, int]]) -> None:
    """Poll the server's in-flight count (the stats path is not counted in it) until cancelled."""
    while True:
        try:
            response = await client.get(STATS_PATH)
            if response.status_code != 200:
                log.info("no %s on this server (%d): in-flight sampling off", STATS_PATH, response.status_code)
                return
            out.append((time.perf_counter() - t0, int(response.json()["server"]["in_flight"])))
        except Exception as exc:  # noqa: BLE001  (sampling is best effort; the run goes on)
            log.debug("in-flight sample failed: %s", exc)
        await asyncio.sleep(interval)


async def run_load_async(
    spec: LoadSpec, workload: Workload | None = None, on_result: Callable[[RequestResult], None] | None = None
) -> LoadRun:
    """Run the load described by `spec` against a loopback server; see the module docstring."""
    import httpx

    base = check_loopback(spec.url)
    workload = workload or build_workload(
        max(spec.requests + spec.warmup * spec.clients, 64), seed=spec.seed, model=spec.model
    )
    samples: list[tuple[float, int]] = []
    cpu0, wall0 = time.process_time(), time.perf_counter()
    clients = _Clients(base, spec.timeout_s)
    try:
        t0 = time.perf_counter()
        sender = _Sender(clients, spec, workload, t0)
        if spec.mode == "closed":
            results, window = await _closed_loop(sender, spec, on_result)
        else:
            sampler = None
            if spec.stats_interval_s > 0:
                poller = httpx.AsyncClient(base_url=base, timeout=httpx.Timeout(5.0))
                sampler = asyncio.create_task(_sample_in_flight(poller, t0, spec.stats_interval_s, samples))
            try:
                results, window = await _open_loop(sender, spec, on_result)
            finally:
                if sampler is not None:
                    sampler.cancel()
                    await asyncio.gather(sampler, return_exceptions=True)
                    await poller.aclose()
    finally:
        await clients.aclose()
    results.sort(key=lambda r: r.index)
    return LoadRun(
        spec=spec,
        results=results,
        window=window,
        client_cpu_s=time.process_time() - cpu0,
        wall_s=time.perf_counter() - wall0,
        stats_samples=samples,
        workload=workload.describe(),
    )


def run_load(
    spec: LoadSpec, workload: Workload | None = None, on_result: Callable[[RequestResult], None] | None = None
) -> LoadRun:
    """`run_load_async` in a fresh event loop (uvloop when installed: a cheaper loop leaves more CPU to the server)."""
    try:
        import uvloop

        factory = uvloop.new_event_loop
    except ImportError:
        factory = None
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per request otherwise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(run_load_async(spec, workload, on_result))
