"""Guards (layer 3 of the request path): what stops a request before it costs model time.

* `DrainMiddleware`: counts requests in flight and, once draining, refuses new ones (503).
* `RateLimitMiddleware`: token buckets per client address and per learner session, by route
  group (429 + Retry-After).
* `BodyGuardMiddleware`: refuses bodies over the limit while they arrive (413), bodies that
  take too long to arrive (408), bodies that are not JSON (415; form-encoded on the paths that
  take forms: LanguageTool's API), not UTF-8 or not parsable JSON within `MAX_JSON_DEPTH`
  levels (400), then replays the body to the app.
* `check_text`: the input filter for text bound for the model (control characters, lone
  surrogates, the model's special tokens written out: 400).

The middleware is pure ASGI and answers with the shared error model, before FastAPI parses
anything (`refuse`: or with the learner's page, for the portal's pages and form posts); the
input filter runs inside the correction pipeline (`service.py`).
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import unquote_plus

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from corrige.server.errors import ApiError, send_error
from corrige.tokenizer import GLOSS, SPECIAL_TOKENS

FORM_MEDIA_TYPE = "application/x-www-form-urlencoded"
MAX_JSON_DEPTH = 32  # no request of the API nests deeper than 3; json.loads recurses once a level


async def refuse(scope: Scope, receive: Receive, send: Send, error: ApiError) -> None:
    """Answer from middleware: the learner's page when the app's `error_page` hook renders one
    for this request (the portal's pages and form posts), else the error model as JSON."""
    app = scope.get("app")
    page_for = getattr(getattr(app, "state", None), "error_page", None)
    page = page_for(scope, error) if page_for is not None else None
    if page is not None:
        await page(scope, receive, send)
        return
    request_id = scope.get("state", {}).get("request_id")
    await send_error(send, error.status, error.code, error.message, request_id, error.headers)


# ---------------------------------------------------------------- drain


class DrainState:
    """In-flight request count and the draining flag; used on the event loop only."""

    def __init__(self) -> None:
        self.draining = False  # refusing new requests
        self.drained = False  # the drain ran to its end
        self.in_flight = 0

    def begin(self) -> None:
        self.draining = True


class DrainMiddleware:
    """Counts requests in flight (a streamed response counts until its last byte) and, while
    draining, answers every new request 503 `draining`. Paths in `always_open` (probes, stats)
    are neither counted nor refused: they answer at once, and report the drain themselves."""

    def __init__(self, app: ASGIApp, state: DrainState, retry_after_s: int, always_open: Iterable[str]) -> None:
        self.app = app
        self.state = state
        self.retry_after = str(retry_after_s)
        self.always_open = frozenset(always_open)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = self.state
        if scope["path"] in self.always_open:
            await self.app(scope, receive, send)
            return
        if state.draining:
            request_id = scope.get("state", {}).get("request_id")
            headers = {"Retry-After": self.retry_after, "Connection": "close"}
            await send_error(send, 503, "draining", "the server is shutting down; retry elsewhere", request_id, headers)
            return
        state.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            state.in_flight -= 1


# ---------------------------------------------------------------- rate limit


class RateLimiter(Protocol):
    """One limit's buckets, wherever they live: this process's memory (`TokenBucketLimiter`) or
    a database every replica shares (`corrige.server.shared_limits.SharedBucketLimiter`).

    A bucket may go below zero: a take is granted while the bucket holds a whole token and then
    costs what it costs (`cost`, 1 for a request; a text's sentences for the work budget,
    `corrige.server.admission`), and the debt is paid off at `rate` before the next take is granted."""

    rate: float  # tokens per second, for the refusal's message

    async def take(self, key: str, cost: float = 1.0) -> float:
        """Take `cost` tokens from `key`'s bucket if it holds a whole one: 0.0, or the seconds until it does."""
        ...

    async def charge(self, key: str, cost: float) -> float:
        """Take `cost` tokens from `key`'s bucket whatever it holds; what it held before (after refilling)."""
        ...


class TokenBucketLimiter:
    """One bucket of `burst` tokens per client, refilled at `rate` tokens per second.

    `acquire(key, cost)` takes `cost` tokens (1: a request) and returns 0.0 when the bucket held a
    whole token, or returns how many seconds until it does; `charge(key, cost)` takes them
    whatever the bucket holds (it may go below zero). The table is bounded: past `max_clients`,
    buckets that have refilled are dropped (a full bucket is the same as no bucket).
    """

    def __init__(
        self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic, max_clients: int = 10_000
    ) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError(f"a token bucket needs rate > 0 and burst >= 1, got {rate} and {burst}")
        self.rate = rate
        self.burst = float(burst)
        self.clock = clock
        self.max_clients = max_clients
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, as of time)

    def acquire(self, key: str, cost: float = 1.0) -> float:
        now = self.clock()
        tokens = self._refilled(key, now)
        if tokens >= 1.0:
            self._store(key, tokens - cost, now)
            return 0.0
        self._buckets[key] = (tokens, now)
        return (1.0 - tokens) / self.rate

    def spend(self, key: str, cost: float) -> float:
        now = self.clock()
        tokens = self._refilled(key, now)
        self._store(key, tokens - cost, now)
        return tokens

    async def take(self, key: str, cost: float = 1.0) -> float:
        return self.acquire(key, cost)

    async def charge(self, key: str, cost: float) -> float:
        return self.spend(key, cost)

    def _refilled(self, key: str, now: float) -> float:
        tokens, then = self._buckets.get(key, (self.burst, now))
        return min(self.burst, tokens + (now - then) * self.rate)

    def _store(self, key: str, tokens: float, now: float) -> None:
        if key not in self._buckets and len(self._buckets) >= self.max_clients:
            self._prune(now)
        self._buckets[key] = (tokens, now)

    def _prune(self, now: float) -> None:
        """Drop the buckets that are full again (one in debt takes longer to refill)."""
        rate, burst = self.rate, self.burst
        self._buckets = {k: (t, then) for k, (t, then) in self._buckets.items() if (now - then) * rate < burst - t}

    def __len__(self) -> int:
        return len(self._buckets)


def client_key(scope: Scope) -> str | None:
    client = scope.get("client")
    return client[0] if client else "unknown"


@dataclass(frozen=True)
class Bucket:
    """One limit: a limiter and what it counts per (`key` gives None when it does not apply,
    e.g. a request without a learner session has no session bucket)."""

    limiter: RateLimiter
    key: Callable[[Scope], str | None]
    per: str  # "client" or "session", for the message


@dataclass(frozen=True)
class RouteLimit:
    """The buckets of a group of routes; a request must get a token from each."""

    name: str
    applies: Callable[[Scope], bool]
    buckets: tuple[Bucket, ...]


class RateLimitMiddleware:
    """429 `rate_limited` with `Retry-After` (whole seconds, at least 1) from the first group of
    `limits` that applies to the request; requests no group covers pass untouched. A limiter
    shared by groups (the per-client one) is one budget for all of them."""

    def __init__(self, app: ASGIApp, limits: Sequence[RouteLimit]) -> None:
        self.app = app
        self.limits = tuple(limits)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            for group in self.limits:
                if group.applies(scope):
                    if (error := await self._check(scope, group)) is not None:
                        await refuse(scope, receive, send, error)
                        return
                    break
        await self.app(scope, receive, send)

    @staticmethod
    async def _check(scope: Scope, group: RouteLimit) -> ApiError | None:
        for bucket in group.buckets:
            key = bucket.key(scope)
            if key is None:
                continue
            wait_s = await bucket.limiter.take(key)
            if wait_s > 0:
                retry = str(max(1, math.ceil(wait_s)))
                rate = bucket.limiter.rate
                message = f"too many requests from this {bucket.per} (limit {rate:g}/s); retry in {retry} s"
                return ApiError(429, "rate_limited", message, {"Retry-After": retry})
        return None


def prefix_matcher(prefixes: Iterable[str], exempt: Iterable[str] = ()) -> Callable[[Scope], bool]:
    prefixes, exempt = tuple(prefixes), frozenset(exempt)
    return lambda scope: scope["path"].startswith(prefixes) and scope["path"] not in exempt


# ---------------------------------------------------------------- body


class BodyTooLarge(Exception):
    pass


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key == name:
            return value
    return None


def _is_json(content_type: bytes) -> bool:
    media = content_type.split(b";", 1)[0].strip().lower()
    return media == b"application/json" or (media.startswith(b"application/") and media.endswith(b"+json"))


def _is_form(content_type: bytes) -> bool:
    return content_type.split(b";", 1)[0].strip().lower() == FORM_MEDIA_TYPE.encode()


def body_time_left(scope: Scope, timeout_s: float) -> float:
    """Seconds left for the body to arrive, counted from the request's arrival (its headers)."""
    received_at = scope.get("state", {}).get("received_at")
    return timeout_s - (time.perf_counter() - received_at if received_at is not None else 0.0)


_JSON_TOKEN = re.compile(rb'\\.|["\[\]{}]', re.DOTALL)  # an escape pair, a quote or a bracket


def json_depth(body: bytes) -> int:
    """How deep the arrays and objects of a JSON text nest (brackets inside strings do not count)."""
    depth = deepest = 0
    in_string = False
    for match in _JSON_TOKEN.finditer(body):
        token = match.group()
        if token == b'"':
            in_string = not in_string
        elif in_string or len(token) == 2:
            continue
        elif token in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def json_problem(body: bytes) -> str | None:
    """Why the body is not JSON the app can parse, or None. The one place bodies are parsed for
    validity: deep nesting is refused before `json.loads` recurses into it (RecursionError)."""
    if body.count(b"[") + body.count(b"{") > MAX_JSON_DEPTH and json_depth(body) > MAX_JSON_DEPTH:
        return f"the body is not valid JSON: nested deeper than {MAX_JSON_DEPTH} levels"
    try:
        json.loads(body)
    except (ValueError, RecursionError) as exc:  # ValueError: syntax, or an integer of thousands of digits
        return f"the body is not valid JSON: {exc}"
    return None


def form_problem(body: str) -> str | None:
    """Why a form body's fields are not UTF-8 once percent-decoded (`%FF%FE`), or None: the form
    parser would read such bytes as U+FFFD, so a field the client sent is not the one checked."""
    for field in body.split("&"):
        try:
            unquote_plus(field, errors="strict")
        except UnicodeDecodeError as exc:
            name = unquote_plus(field.split("=", 1)[0], errors="replace")
            return f"the form field {name!r} is not valid UTF-8 once percent-decoded ({exc.reason})"
    return None


class BodyGuardMiddleware:
    """For requests with a body: 413 past `max_bytes` (by Content-Length at once, else counted
    chunk by chunk, reading no further), 408 when the whole body has not arrived within
    `timeout_s` of the request (uvicorn has no body-read timeout: a client sending half a body
    would hold the connection and this coroutine), 415 unless JSON (form-encoded on `form_paths`),
    400 `invalid_encoding` unless UTF-8 (a form's fields too, once percent-decoded), 400
    `invalid_json` unless JSON that parses within `MAX_JSON_DEPTH` levels.
    The app then reads the buffered body; later `receive` calls (disconnect) pass through."""

    def __init__(self, app: ASGIApp, max_bytes: int, timeout_s: float = 10.0, form_paths: Iterable[str] = ()) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s
        self.form_paths = frozenset(form_paths)  # these take form-encoded bodies instead of JSON

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        length = _header(scope, b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await refuse(scope, receive, send, self._too_large())
            return
        try:
            async with asyncio.timeout(max(0.0, body_time_left(scope, self.timeout_s))):
                body = await self._read(receive)
        except BodyTooLarge:
            await refuse(scope, receive, send, self._too_large())
            return
        except TimeoutError:
            message = f"the body did not arrive within {self.timeout_s:g} s"
            await refuse(scope, receive, send, ApiError(408, "body_timeout", message, {"Connection": "close"}))
            return
        if body is None:  # the client left before sending its body
            return
        if body:
            content_type = _header(scope, b"content-type") or b""
            form = scope["path"] in self.form_paths
            if not (_is_form(content_type) if form else _is_json(content_type)):
                media = FORM_MEDIA_TYPE if form else "application/json"
                message = f"send the body as {'form fields' if form else 'JSON'} with the header Content-Type: {media}"
                await refuse(scope, receive, send, ApiError(415, "unsupported_media_type", message))
                return
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError as exc:
                message = f"the body is not valid UTF-8 (byte {exc.start}); send text encoded as UTF-8"
                await refuse(scope, receive, send, ApiError(400, "invalid_encoding", message))
                return
            if form and (problem := form_problem(text)) is not None:
                await refuse(scope, receive, send, ApiError(400, "invalid_encoding", problem))
                return
            if not form and (problem := json_problem(body)) is not None:
                await refuse(scope, receive, send, ApiError(400, "invalid_json", problem))
                return
        meta = scope.get("state", {}).get("meta")
        if meta is not None:  # for the trace: the guards ended here, validation starts
            meta.guards_done_at = time.perf_counter()
            meta.bytes_in = len(body)
        await self.app(scope, replay_body(body, False, receive), send)

    async def _read(self, receive: Receive) -> bytes | None:
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                raise BodyTooLarge
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    def _too_large(self) -> ApiError:
        return ApiError(
            413, "body_too_large", f"the body is larger than {self.max_bytes} bytes", {"Connection": "close"}
        )


def replay_body(body: bytes, more: bool, receive: Receive) -> Receive:
    """A `receive` that hands the app a body already read, then defers to the real one."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": more}
        return await receive()

    return replay


# ---------------------------------------------------------------- input filter

# C0 and C1 controls but tab, newline and carriage return; bidirectional overrides and isolates
# (text that displays differently from what the model reads); BOM and noncharacters.
Ranges = tuple[tuple[int, int], ...]  # (first, last) code points
CONTROL_RANGES: Ranges = ((0x00, 0x08), (0x0B, 0x0C), (0x0E, 0x1F), (0x7F, 0x9F), (0x202A, 0x202E))
CONTROL_RANGES += ((0x2066, 0x2069), (0xFEFF, 0xFEFF), (0xFFFE, 0xFFFF))
# whitespace as Python's `str.isspace` and `re`'s \s read it, less the controls above (refused anyway)
SPACE_RANGES: Ranges = ((0x09, 0x0A), (0x0D, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A))
SPACE_RANGES += ((0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000))


def char_class(ranges: Iterable[tuple[int, int]]) -> str:
    """The inside of a regex character class, as \\uXXXX escapes that Python and ECMA-262 read alike."""
    return "".join(f"\\u{a:04x}" if a == b else f"\\u{a:04x}-\\u{b:04x}" for a, b in ranges)


_CONTROLS, _SPACES = char_class(CONTROL_RANGES), char_class(SPACE_RANGES)
_CONTROL = re.compile(f"[{_CONTROLS}]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# The model's special tokens as text. The tokenizer encodes typed text with these split into plain
# bytes, so they cannot reach the model as tokens; the guard still refuses them as a plain sign of
# an attempt to forge the prompt format. Nothing else is refused for looking like the format: the
# separators are tokens, and a learner's "tea / coffee" or "<|" is just text.
_SPECIAL_TOKENS = "|".join(re.escape(t) for t in (*SPECIAL_TOKENS, GLOSS))
_SPECIAL_TOKEN = re.compile(_SPECIAL_TOKENS)


def text_pattern(*, nonblank: bool = False) -> str:
    """`check_text`'s rules as one JSON Schema `pattern` (ECMA-262, and Python's `re` reads it the
    same): no control character, no special token, with `nonblank` at least one character that is
    not whitespace (`str.strip` leaves it). The OpenAPI document states them with it
    (corrige.server.openapi); a test holds the two to agree."""
    refused = _SPECIAL_TOKENS
    body = f"[^{_CONTROLS}]*[^{_CONTROLS}{_SPACES}][^{_CONTROLS}]*" if nonblank else f"[^{_CONTROLS}]*"
    return rf"^(?![\s\S]*(?:{refused})){body}$"


def check_text(text: str, field: str) -> None:
    """Raise a 400 `ApiError` for text the model must not see: not valid Unicode, a control
    character, or one of the model's special tokens written out."""
    if _SURROGATE.search(text):
        raise ApiError(400, "invalid_encoding", f"{field}: contains a lone surrogate (not valid Unicode text)")
    if match := _CONTROL.search(text):
        raise ApiError(
            400,
            "invalid_characters",
            f"{field}: contains the control character U+{ord(match.group()):04X} at position {match.start()}",
        )
    if match := _SPECIAL_TOKEN.search(text):
        raise ApiError(400, "prompt_injection", f"{field}: contains the model's special token {match.group()!r}")
