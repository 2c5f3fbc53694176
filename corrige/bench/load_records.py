"""What the load generator is asked to send (`LoadSpec`) and what each request gave (`RequestResult`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

CORRECT_PATH = "/v1/grammar/correct"


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
