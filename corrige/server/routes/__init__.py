"""One router per file: the grammar API, the OpenAI-compatible API, health and engine stats."""
