"""The span contract of one request: names, hierarchy and attribute keys.

    http.request                      root (or a child of the caller's span, via `traceparent`)
      ├─ validate.body                JSON parsing and schema validation
      ├─ security.check               guards: verdict + reason, even when the request is refused
      ├─ tokenize.bpe                 sentence → token ids
      ├─ retrieve.hybrid              rule cards for the edits (card ids and scores)
      ├─ model.prefill                admission → first token (batch size, prompt tokens)
      ├─ model.decode                 first → last token (steps, batch size, output tokens)
      ├─ format.json                  tokens → correction → response JSON
      └─ cost.emit                    cost.cpu_ms, cost.tokens, cost.usd
    tool.*                            spans of a subprocess tool, children of the span that ran it

Every span carries `request_id`, and `bytes.in` / `bytes.out`: what the stage took in and gave
out (the journey of the bytes). Every span a server records carries `service.instance.id`, the
server that served it, so that the traces of several replicas can share one store.
"""

from __future__ import annotations

ROOT = "http.request"
VALIDATE = "validate.body"
SECURITY = "security.check"
TOKENIZE = "tokenize.bpe"
RETRIEVE = "retrieve.hybrid"
PREFILL = "model.prefill"
DECODE = "model.decode"
FORMAT = "format.json"
COST = "cost.emit"

STAGES = (VALIDATE, SECURITY, TOKENIZE, RETRIEVE, PREFILL, DECODE, FORMAT, COST)
"""The children of `http.request`, in request order."""

ENTRY_SPANS = frozenset({ROOT})
"""Span names that may start a trace (or continue a caller's). Any other span without a parent in
its trace is an orphan: it lost its context on the way (e.g. a subprocess not given TRACEPARENT)."""

# attribute keys
REQUEST_ID = "request_id"
INSTANCE = "service.instance.id"  # OpenTelemetry's resource attribute, on each span in the store
BYTES_IN = "bytes.in"
BYTES_OUT = "bytes.out"
BATCH_SIZE = "batch.size"  # model spans: requests in the batch (mean over the phase's steps)
STEPS = "model.steps"
MODEL_CACHED = "model.cached"  # model spans of a sentence answered from the answer cache: no step ran
PROMPT_TOKENS = "tokens.prompt"
OUTPUT_TOKENS = "tokens.output"
KV_BYTES = "kv_cache.bytes"
LOGITS_BYTES = "logits.bytes"
VERDICT = "security.verdict"  # "pass" or "refuse"
REASON = "security.reason"  # the error code when refused
HTTP_STATUS = "http.status_code"
ERROR_CODE = "error.code"
COST_CPU_MS = "cost.cpu_ms"
COST_TOKENS = "cost.tokens"
COST_USD = "cost.usd"
CARD_IDS = "retrieve.card_ids"
CARD_SCORES = "retrieve.scores"
