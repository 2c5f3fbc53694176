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
import math
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from corrige.bench.workload import Workload, build_workload

log = logging.getLogger(__name__)

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
CORRECT_PATH = "/v1/grammar/correct"
STATS_PATH = "/v1/engine/stats"
LITTLE_TOLERANCE = 0.10  # L and λ·W must agree within this share
RATE_LIMITED_STATUS = 429  # `rate_limited`: the server's per-client limit (`corrige serve --rate-limit 0` lifts it)


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


@dataclass(frozen=True)
class LoadSpec:
    """What to send, how, and for how long."""

    url: str
    mode: str = "closed"  # closed | open
    clients: int = 8  # closed loop: concurrent callers
    rate: float = 50.0  # open loop: arrivals per second
    arrival: str = "poisson"  # open loop: poisson | gamma
    burstiness: float = 2.0  # gamma arrivals: coefficient of variation of the gaps (1 = Poisson)
    requests: int = 400  # measured requests at most
    duration: float = 30.0  # seconds of sending at most
    warmup: int = 1  # closed: unmeasured requests per caller first; open: sequential requests before the arrivals
    stream: bool = False  # SSE: adds time to first token and inter-token gaps
    rules: bool | None = None  # ask for the rule cards behind the edits (None: the server's default)
    slo_ms: float = 500.0  # goodput: a request is good when it succeeds within this latency...
    slo_ttft_ms: float | None = None  # ...and (streaming) its first token came within this
    seed: int = 0  # workload and arrival times
    timeout_s: float = 60.0  # per request
    path: str = CORRECT_PATH
    model: Path | None = None  # the served model, so the sentence mix only holds prompts it accepts (None: bundled)
    stats_interval_s: float = 0.05  # open loop: how often to sample the server's in-flight count (0: never)

    def __post_init__(self) -> None:
        if self.mode not in ("closed", "open"):
            raise ValueError(f"mode must be 'closed' or 'open', not {self.mode!r}")
        if self.arrival not in ("poisson", "gamma"):
            raise ValueError(f"arrival must be 'poisson' or 'gamma', not {self.arrival!r}")
        if self.clients < 1 or self.requests < 1 or self.duration <= 0 or self.rate <= 0 or self.burstiness <= 0:
            raise ValueError("clients, requests, duration, rate and burstiness must be positive")
        if self.warmup < 0:
            raise ValueError("warmup must not be negative")


@dataclass(slots=True)
class RequestResult:
    """One request, times in seconds from the start of the run."""

    index: int
    start: float
    end: float = 0.0
    status: int = 0  # HTTP status; 0 when no answer came (connection error, timeout)
    error: str | None = None  # the server's error code, "timeout", or "transport:<exception>"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    ttft: float | None = None  # streaming: first token event
    itl: list[float] | None = None  # streaming: gaps between token events
    server_ms: dict[str, float] | None = None  # the server's timings_ms
    scheduled: float | None = None  # open loop: when the arrival process wanted it sent
    phase: str = "measured"  # warmup | measured | tail (sent to keep the load on, not measured)

    @property
    def latency(self) -> float:
        return self.end - self.start

    @property
    def ok(self) -> bool:
        return self.status == 200 and self.error is None


@dataclass
class LoadRun:
    spec: LoadSpec
    results: list[RequestResult]
    window: tuple[float, float]  # rates are counted over this span (seconds from the start)
    client_cpu_s: float
    wall_s: float
    stats_samples: list[tuple[float, int]] = field(default_factory=list)  # (time, server in_flight)
    workload: dict[str, Any] = field(default_factory=dict)

    @property
    def measured(self) -> list[RequestResult]:
        return [r for r in self.results if r.phase == "measured"]

    def summary(self) -> dict[str, Any]:
        return summarize(self)

    def to_json(self, include_requests: bool = True) -> dict[str, Any]:
        spec = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(self.spec).items()}
        out: dict[str, Any] = {"spec": spec, "workload": self.workload, "summary": self.summary()}
        if include_requests:
            out["requests"] = [asdict(r) for r in self.results]
        return out


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


# ------------------------------------------------------------------------------------------ summary


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (NumPy's default), `q` in 0..100; NaN when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _dist_ms(seconds: list[float]) -> dict[str, float] | None:
    if not seconds:
        return None
    ms = [1e3 * s for s in seconds]
    return {
        "p50": percentile(ms, 50),
        "p95": percentile(ms, 95),
        "p99": percentile(ms, 99),
        "mean": sum(ms) / len(ms),
        "max": max(ms),
    }


def latency_quantiles_ms(results: list[RequestResult]) -> list[float]:
    """Latency percentiles 1..99 of the successful requests (what `corrige capacity` rebuilds distributions from)."""
    ms = [1e3 * r.latency for r in results if r.ok]
    return [round(percentile(ms, q), 3) for q in range(1, 100)] if ms else []


def little_check(run: LoadRun) -> dict[str, Any] | None:
    """Little's law over the arrival window of an open-loop run: L (time-average in flight) against λ·W."""
    begin, end = run.window
    span = end - begin
    measured = [r for r in run.measured if begin <= r.start <= end]
    if span <= 0 or len(measured) < 2:
        return None
    lam = len(measured) / span
    w = sum(r.latency for r in measured) / len(measured)
    # time-average of requests in flight: each request contributes the part of its interval inside the window
    area = sum(max(0.0, min(r.end, end) - max(r.start, begin)) for r in run.results)
    L = area / span
    out: dict[str, Any] = {
        "window_s": span,
        "lambda_per_s": lam,
        "W_ms": 1e3 * w,
        "L": L,
        "lambda_W": lam * w,
        "relative_error": abs(L - lam * w) / (lam * w) if w > 0 else math.nan,
    }
    out["agree"] = out["relative_error"] <= LITTLE_TOLERANCE
    inside = [n for t, n in run.stats_samples if begin <= t <= end]
    served = [r.server_ms["total"] / 1e3 for r in measured if r.server_ms and "total" in r.server_ms]
    if len(inside) >= 10 and served:
        w_server = sum(served) / len(served)
        L_server = sum(inside) / len(inside)
        out["server"] = {
            "samples": len(inside),
            "L": L_server,
            "W_ms": 1e3 * w_server,
            "lambda_W": lam * w_server,
            "relative_error": abs(L_server - lam * w_server) / (lam * w_server) if w_server > 0 else math.nan,
        }
        out["server"]["agree"] = out["server"]["relative_error"] <= LITTLE_TOLERANCE
    return out


def summarize(run: LoadRun) -> dict[str, Any]:
    """Percentiles, rates, errors by code, goodput against the SLO, the server's stage medians."""
    spec = run.spec
    measured = run.measured
    ok = [r for r in measured if r.ok]
    begin, end = run.window
    span = max(end - begin, 1e-9)
    # rates: every completion inside the window (closed loop: the tail keeps the load on; open: arrivals only)
    done_in_window = [r for r in run.results if r.phase != "warmup" and begin <= r.end <= end and r.ok]
    if spec.mode == "open":  # arrivals stop at the window's end; count what those arrivals completed
        done_in_window, span = ok, max(max((r.end for r in ok), default=end) - begin, 1e-9)

    def good(r: RequestResult) -> bool:
        if not r.ok or 1e3 * r.latency > spec.slo_ms:
            return False
        return spec.slo_ttft_ms is None or (r.ttft is not None and 1e3 * r.ttft <= spec.slo_ttft_ms)

    n_good = sum(good(r) for r in measured)
    server_ms: dict[str, float] = {}
    stages = {stage for r in ok if r.server_ms for stage in r.server_ms}
    for stage in sorted(stages):
        server_ms[stage] = percentile([r.server_ms[stage] for r in ok if r.server_ms and stage in r.server_ms], 50)
    itl = [g for r in ok if r.itl for g in r.itl]
    summary: dict[str, Any] = {
        "mode": spec.mode,
        "clients": spec.clients if spec.mode == "closed" else None,
        "offered_rate": spec.rate if spec.mode == "open" else None,
        "requests": len(measured),
        "ok": len(ok),
        "errors": dict(Counter(r.error or f"http_{r.status}" for r in measured if not r.ok)),
        "rate_limited": sum(r.status == RATE_LIMITED_STATUS for r in measured),  # the server's limit, not its speed
        "window_s": span,
        "latency_ms": _dist_ms([r.latency for r in ok]),
        "ttft_ms": _dist_ms([r.ttft for r in ok if r.ttft is not None]),
        "itl_ms": _dist_ms(itl),
        "req_per_s": len(done_in_window) / span,
        "tokens_per_s": sum(r.completion_tokens for r in done_in_window) / span,
        "completion_tokens_mean": (sum(r.completion_tokens for r in ok) / len(ok)) if ok else 0.0,
        "goodput": {
            "slo_ms": spec.slo_ms,
            "slo_ttft_ms": spec.slo_ttft_ms,
            "good": n_good,
            "share": n_good / len(measured) if measured else 0.0,
            "req_per_s": (len(done_in_window) / span) * (n_good / len(measured)) if measured else 0.0,
        },
        "server_ms_p50": server_ms,
        "client_cpu_share": run.client_cpu_s / run.wall_s if run.wall_s > 0 else 0.0,
        "wall_s": run.wall_s,
    }
    if spec.mode == "open":
        lags = [r.start - r.scheduled for r in measured if r.scheduled is not None]
        summary["send_lag_ms_p99"] = 1e3 * percentile(lags, 99) if lags else None  # the generator kept up?
        summary["little"] = little_check(run)
    return summary
