"""Server settings: one pydantic-settings class, read from `CORRIGE_*` environment variables.

`corrige serve` builds it from its options (which win over the environment); tests build it
directly. Nothing here is instantiated at import time.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Literal, cast

from pydantic import Field, SecretStr, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from corrige.engine import EngineConfig, Policy

ENGINE = EngineConfig()  # the engine's defaults: the settings below only override them


def default_state_dir() -> Path:
    """Where the server keeps its files unless told otherwise: $XDG_STATE_HOME/corrige or ~/.local/state/corrige."""
    base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(base) / "corrige"


def trusted_proxies(addresses: str) -> list[str]:
    return [entry.strip() for entry in addresses.split(",") if entry.strip()]


class Settings(BaseSettings):
    """Everything the HTTP service can be told. Environment: `CORRIGE_<NAME>` (e.g. `CORRIGE_RATE_LIMIT=0`)."""

    model_config = SettingsConfigDict(env_prefix="CORRIGE_", extra="ignore", frozen=True)

    # ---- listening ----
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    access_log: bool = True  # uvicorn's one line per request

    # ---- model ----
    model_dir: Path | None = None  # None: the bundled model (corrige/models/reader)
    model_name: str = "corrige-tutor"  # the id `/v1/models` lists and the OpenAI routes accept
    warmup: bool = True  # run one correction before reporting ready
    blas_threads: int = Field(1, ge=0)  # 0: leave BLAS alone; 1 keeps its threads from fighting the engine's
    # how long a thread may hold the GIL while another waits for it (Python's default: 5 ms); see lifecycle.py
    gil_switch_ms: float = Field(0.5, gt=0, le=100)

    # ---- engine ----
    batching: Policy = ENGINE.policy
    max_batch: int = Field(ENGINE.max_batch, ge=0)  # requests in one model call; 0: as many as n_slots
    n_slots: int = Field(ENGINE.n_slots, ge=1)
    max_waiting: int = Field(ENGINE.max_waiting, ge=1)  # queued requests beyond this are refused with 503
    max_wait_ms: float = Field(ENGINE.max_wait_ms, ge=0)  # static batching: how long a batch waits to fill
    n_threads: int = Field(ENGINE.n_threads, ge=1)  # threads batching: worker threads
    # waiting longer than this for the model: 504 (the engine's default is never None)
    queue_timeout_s: float = Field(cast(float, ENGINE.queue_timeout_s), gt=0)
    # run the engine in a process of its own, so the model does not share the interpreter lock
    # with HTTP, validation and tracing (false: a thread of the server process)
    engine_process: bool = True
    # a dead engine process is restarted (at once, then after waits doubling from the backoff); one
    # more death than this within a minute gives it up and the server exits non-zero (0: never restart)
    engine_max_restarts: int = Field(5, ge=0)
    engine_restart_backoff_s: float = Field(0.5, ge=0)
    # keep a second engine process loaded and idle, which takes over at once when the serving one dies
    # (a new one takes a second or more of a core to start); it costs that process's memory
    engine_standby: bool = True
    # once the engine is given up, `/healthz` answers 503 engine_failed this long before the server exits,
    # so that a probe or a load balancer sees why (10 s: the liveness probe's period in deploy/k8s)
    engine_failed_drain_s: float = Field(10.0, ge=0)
    # prompt-lookup speculative decoding: guessed tokens checked per request per step (0: off); the
    # answers are the same either way, in fewer steps (see docs/BENCHMARKS.md)
    speculative_tokens: int = Field(ENGINE.speculative_tokens, ge=0)
    # guessed tokens per step, shared by the running requests
    speculative_token_budget: int = Field(ENGINE.speculative_token_budget, ge=0)
    # scoring requests (/v1/completions with echo and logprobs) start from an earlier scored prompt's
    # keys and values when they begin the same way; the scores are the same either way
    prefix_reuse: bool = ENGINE.prefix_reuse

    # answers to a text's sentences kept for the texts that come again (an editor re-checks the whole text after
    # each change; only changed sentences go to the model): how many, least recently used out; 0 turns it off
    answer_cache_size: int = Field(4096, ge=0)

    # ---- guards ----
    # larger bodies are refused with 413; 64 KiB holds the largest `text` a request may carry (5,000
    # characters, each up to 12 bytes once JSON-escaped: `\ud83d\ude00`), so that no valid request is refused
    max_body_bytes: int = Field(64 * 1024, ge=64)
    max_sentence_chars: int = Field(1000, ge=1)  # a cheap bound before tokenizing
    max_batch_sentences: int = Field(32, ge=1)  # `/v1/grammar/correct:batch` accepts at most this many
    max_completion_tokens: int = Field(256, ge=1)  # `/v1/completions`: the most tokens one call may ask for
    rate_limit: float = Field(20.0, ge=0)  # requests per second per client (token bucket); 0 disables it
    rate_burst: int = Field(0, ge=0)  # bucket size; 0: twice the rate (at least 1)
    retry_after_s: int = Field(1, ge=1)  # the Retry-After sent with 503 overloaded / draining
    # the learner portal's routes per learner session (the client address counts against rate_limit too);
    # rate_limit = 0 turns off every limit, this one and the tools' included
    portal_rate_limit: float = Field(5.0, ge=0)  # requests per second per session; 0 disables it
    portal_rate_burst: int = Field(0, ge=0)  # 0: twice the rate (at least 1)
    # the model's work per client: sentences per second it may send to the engine (a sentence, each of a batch,
    # each piece of a text the answer cache does not answer, a raw completion); a text longer than the burst
    # goes at this rate, and the client's next request is refused (429 work_limited) until it is paid for.
    # 0 disables it, as rate_limit = 0 does (see corrige/server/admission.py)
    work_rate_limit: float = Field(20.0, ge=0)
    work_rate_burst: int = Field(0, ge=0)  # sentences at once; 0: five seconds' worth (at least 1)
    # where the buckets live: "memory" (this process's), "postgresql" (shared by every replica), or "auto":
    # PostgreSQL when rate_limit_url or database_url is set, else memory (see docs/scaling.md)
    rate_limit_store: Literal["auto", "memory", "postgresql"] = "auto"
    rate_limit_url: SecretStr | None = None  # postgresql://… for the buckets; None: database_url's
    # /v1/tools/*: each call starts a process, so it has a tighter limit of its own and a bound on processes
    tool_rate_limit: float = Field(1.0, ge=0)  # calls per second per client; 0 disables it
    # /healthz and /readyz: a bucket of their own per client, generous for probes and load balancers
    probe_rate_limit: float = Field(50.0, ge=0)  # requests per second per client; 0 disables it
    max_tool_processes: int = Field(2, ge=1)  # tool processes at once; past it 503 tools_busy
    body_timeout_s: float = Field(10.0, gt=0)  # the whole body must arrive within this of the headers (408)
    timeout_keep_alive_s: int = Field(5, ge=1)  # uvicorn closes an idle keep-alive connection after this
    # `corrige serve`: a request's line and headers must all arrive within this (else the connection is closed)
    header_timeout_s: float = Field(10.0, gt=0)
    # `corrige serve`: a request's line and headers must fit in this many bytes (else 431 headers_too_large)
    max_header_bytes: int = Field(32 * 1024, ge=1024)
    # X-Forwarded-For / -Proto are read only from these addresses (comma-separated IPs or networks, "*":
    # any); "" (the default): from none, so a client cannot pick the address its rate limit counts
    forwarded_allow_ips: str = ""

    # ---- rule cards ----
    rules: Literal["hybrid", "bm25", "off"] = "hybrid"  # how corrections find the cards behind their edits
    rules_k: int = Field(3, ge=1, le=10)  # cards per correction

    # ---- observability ----
    tracing: bool = True  # one OpenTelemetry trace per request
    trace_store: Path = Field(default_factory=lambda: default_state_dir() / "traces.sqlite")  # local span store
    trace_store_max_spans: int = Field(200_000, ge=100)  # the oldest spans go first
    # the trace store's writes in a child process, off the server's interpreter lock (false: a thread)
    trace_writer_process: bool = True
    # this server's name on its spans (`service.instance.id`), so replicas can share one trace store; "": host:pid
    instance: str = ""
    otlp_endpoint: str | None = None  # e.g. http://127.0.0.1:4318/v1/traces: also export spans over OTLP/HTTP
    metrics: bool = True  # Prometheus /metrics
    budget_file: Path | None = None  # latency budget TOML; None: the bundled one (corrige/obs/budget.toml)
    price_per_cpu_hour: float = Field(0.05, ge=0)  # USD, for the cost.usd estimate on every trace

    # ---- shutdown ----
    drain_grace_s: float = Field(10.0, ge=0)  # on SIGTERM, in-flight requests get this long to finish

    # ---- learner portal ----
    portal_db: Path = Field(default_factory=lambda: default_state_dir() / "portal.sqlite")  # audit log, learners, exams
    # postgresql://user:password@host/db: the portal's records in PostgreSQL instead of portal_db (SQLite), for
    # servers on several machines; needs `corrige[postgres]`. A generated session key still lives next to portal_db
    database_url: SecretStr | None = None
    session_secret: SecretStr | None = None  # signs session cookies; None: generated once, kept next to portal_db
    session_cookie: str = "corrige_session"
    session_cookie_secure: bool = False  # send the cookie over HTTPS only (turn on behind TLS)
    session_max_age_s: int = Field(30 * 24 * 3600, ge=60)  # a learner's session lasts this long

    # ---- operators ----
    # Bearer token for /metrics, /dashboard, /v1/obs/summary, /v1/engine/stats; None: they stay open
    admin_token: SecretStr | None = None

    # ---- testing ----
    debug_step_delay_ms: float = Field(0.0, ge=0)  # sleep after every model step (fault injection; keep 0)

    @field_validator("database_url", "rate_limit_url", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        return None if value == "" else value  # CORRIGE_DATABASE_URL= : SQLite, as when unset

    @field_validator("database_url", "rate_limit_url")
    @classmethod
    def _postgres_url(cls, value: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        if value is not None and value.get_secret_value().split("://", 1)[0] not in ("postgresql", "postgres"):
            raise ValueError(f"{info.field_name} must be a postgresql:// URL (SQLite is portal_db)")
        return value

    @field_validator("forwarded_allow_ips")
    @classmethod
    def _addresses(cls, value: str) -> str:
        for entry in trusted_proxies(value):
            if entry != "*":
                try:
                    ipaddress.ip_network(entry, strict=False)
                except ValueError:
                    raise ValueError(f"forwarded_allow_ips: {entry!r} is not an IP address or network") from None
        return value

    @model_validator(mode="after")
    def _shared_limits_have_a_database(self) -> Settings:
        if self.rate_limit_store == "postgresql" and self.rate_limit_url is None and self.database_url is None:
            raise ValueError(
                "rate_limit_store = postgresql needs a database: set rate_limit_url (CORRIGE_RATE_LIMIT_URL) "
                "or database_url (CORRIGE_DATABASE_URL) to a postgresql:// URL"
            )
        return self

    @property
    def portal_location(self) -> str | Path:
        """Where the portal's records live: the PostgreSQL URL when one is set, else the SQLite file."""
        return self.database_url.get_secret_value() if self.database_url is not None else self.portal_db

    @property
    def served_model(self) -> str:
        """The served model's directory name ("seed": the bundled one), as budget.toml's [models] names it."""
        from corrige.tutor.agent import BUNDLED_MODEL  # the model's modules load with it: only when asked

        return (self.model_dir or BUNDLED_MODEL).resolve().name

    def engine_config(self) -> EngineConfig:
        return EngineConfig(
            policy=self.batching,
            n_slots=max(self.n_slots, self.n_threads) if self.batching is Policy.THREADS else self.n_slots,
            max_batch=self.max_batch,
            max_wait_ms=self.max_wait_ms,
            max_waiting=self.max_waiting,
            queue_timeout_s=self.queue_timeout_s,
            n_threads=self.n_threads,
            speculative_tokens=self.speculative_tokens,
            speculative_token_budget=self.speculative_token_budget,
            prefix_reuse=self.prefix_reuse,
        )

    @property
    def batch_limit(self) -> int:
        """The most requests in one model call: `max_batch`, or every KV slot when it is 0."""
        return self.max_batch or self.n_slots

    @property
    def trusted_proxies(self) -> list[str]:
        """`forwarded_allow_ips` as a list; empty: proxy headers are never read."""
        return trusted_proxies(self.forwarded_allow_ips)

    @property
    def burst(self) -> int:
        return self.rate_burst or max(1, round(2 * self.rate_limit))

    @property
    def portal_burst(self) -> int:
        return self.portal_rate_burst or max(1, round(2 * self.portal_rate_limit))

    @property
    def work_burst(self) -> int:
        return self.work_rate_burst or max(1, round(5 * self.work_rate_limit))
