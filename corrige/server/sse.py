"""Server-sent events: framing, and turning a token stream into whole characters.

A byte-level BPE token can end in the middle of a UTF-8 character (an accent, an arrow),
so `IncrementalDecoder` only releases text once it decodes cleanly.
"""

from __future__ import annotations

import json
from typing import Any

from corrige.tokenizer import BPETokenizer

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
SSE_MEDIA_TYPE = "text/event-stream"
DONE = b"data: [DONE]\n\n"
_REPLACEMENT = "\ufffd"  # what decoding shows for an incomplete UTF-8 sequence


def stream_doc(description: str, example: str, events: tuple[str, ...] = ()) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI `responses` of a route that answers JSON, or server-sent events with `stream: true`:
    the schema of one event (its `data`, a JSON text or `[DONE]`, and its name when `events` has some)."""
    properties: dict[str, Any] = {"data": {"type": "string"}}
    if events:
        properties["event"] = {"enum": list(events)}
    event_schema = {"type": "object", "properties": properties, "required": ["data", *(["event"] if events else [])]}
    content = {"application/json": {}, SSE_MEDIA_TYPE: {"schema": event_schema, "example": example}}
    return {200: {"content": content, "description": description}}


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def event(data: Any, name: str | None = None) -> bytes:
    """One SSE event; `data` is JSON-encoded unless it already is a string."""
    payload = data if isinstance(data, str) else dumps(data)
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {payload}\n\n".encode()


class IncrementalDecoder:
    """Feed token ids one at a time; get back the text they complete (possibly empty).

    >>> # a token that ends inside "→" yields "" until the token that completes it arrives
    """

    def __init__(self, tokenizer: BPETokenizer) -> None:
        self.tokenizer = tokenizer
        self.ids: list[int] = []
        self.emitted = 0  # characters released so far

    def push(self, token_id: int) -> str:
        self.ids.append(token_id)
        text = self.tokenizer.decode(self.ids)
        if text.endswith(_REPLACEMENT):  # wait for the rest of the character
            return ""
        return self._release(text)

    def flush(self) -> str:
        """Whatever is left (an incomplete character shows as U+FFFD)."""
        return self._release(self.tokenizer.decode(self.ids))

    def _release(self, text: str) -> str:
        piece = text[self.emitted :]
        self.emitted = len(text)
        return piece
