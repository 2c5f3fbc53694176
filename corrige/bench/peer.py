"""The peer: the server a user would write without corrige's engine, for side-by-side runs.

A minimal FastAPI app around transformers' `generate` on the same weights: corrige's
safetensors use GPT-2 tensor names, so `GPT2LMHeadModel.from_pretrained(model_dir)` loads them
unchanged. The handler is a plain `def` (FastAPI runs it on its thread pool): tokenize the
tutor's prompt (`<bos> sentence <sep>`), `model.generate` greedy up to the tutor's answer
budget, split the answer into corrected and gloss (`codec.split_answer`). No batching, no KV slot pool, no streaming, no
abstention; the request and the main response fields (`corrected`, `explanation`, `usage`,
`timings_ms.total`) have the shape of `POST /v1/grammar/correct`.

Run it with `python -m corrige.bench.peer --port 8001` (needs torch and transformers: the
`bench` or `dev` extra). `corrige bench sweep --peer` starts it itself.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import time
from pathlib import Path

from pydantic import BaseModel

log = logging.getLogger(__name__)

MAX_NEW_TOKENS = 48  # the tutor's answer budget (TutorConfig.max_new_tokens)


class Body(BaseModel):
    """The request of `POST /v1/grammar/correct` (module level: FastAPI resolves the annotation by name)."""

    sentence: str
    stream: bool = False  # accepted for the same request shape; the peer always answers at once


class PeerUnavailable(RuntimeError):
    """torch or transformers is missing."""


def require_peer_deps() -> None:
    """Raise `PeerUnavailable` with the install command when torch or transformers is missing."""
    missing = [name for name in ("torch", "transformers") if importlib.util.find_spec(name) is None]
    if missing:
        raise PeerUnavailable(
            f"the peer server needs {' and '.join(missing)}, which is not installed; "
            "install the bench extra (pip install -e '.[bench]') or the dev extra, or run without --peer"
        )


def create_app(model_dir: Path | None = None):
    """The peer app, model loaded (so `/readyz` answers as soon as the server listens)."""
    require_peer_deps()
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch loads: idle workers sleep
    import torch
    from fastapi import FastAPI
    from transformers import GPT2LMHeadModel

    from corrige.tokenizer import BPETokenizer
    from corrige.tutor.agent import BUNDLED_MODEL, normalize_sentence
    from corrige.tutor.token_codec import encode_prompt, split_answer

    directory = Path(model_dir) if model_dir else BUNDLED_MODEL
    model = GPT2LMHeadModel.from_pretrained(directory).eval()
    tokenizer = BPETokenizer.load(directory)
    n_ctx = model.config.n_positions
    eos = tokenizer.special.eos
    log.info("peer: %s loaded, torch %s with %d threads", directory, torch.__version__, torch.get_num_threads())

    app = FastAPI(title="peer: transformers generate")

    @app.get("/readyz")
    def readyz() -> dict[str, str]:
        return {"status": "ready"}

    @app.post("/v1/grammar/correct")
    def correct(body: Body) -> dict:
        start = time.perf_counter()
        text, added_stop = normalize_sentence(body.sentence)
        prompt = encode_prompt(tokenizer, text)
        ids = torch.tensor([prompt])
        with torch.inference_mode():
            out = model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=max(1, min(MAX_NEW_TOKENS, n_ctx - len(prompt))),
                do_sample=False,
                eos_token_id=eos,
                pad_token_id=eos,
            )
        new = out[0, len(prompt) :].tolist()
        parsed = split_answer(tokenizer, [t for t in new if t != eos])
        corrected, gloss = parsed[:2] if parsed else (text, "")
        if added_stop and corrected.endswith("."):  # the learner did not write that full stop
            corrected, text = corrected[:-1], text[:-1]
        return {
            "sentence": body.sentence,
            "corrected": corrected,
            "changed": corrected != text,
            "explanation": gloss,
            "usage": {"prompt_tokens": len(prompt), "completion_tokens": len(new)},
            "timings_ms": {"total": round(1e3 * (time.perf_counter() - start), 3)},
        }

    return app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="The transformers peer server for `corrige bench sweep --peer`.")
    parser.add_argument("--model", type=Path, default=None, help="model directory (default: the bundled tutor)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    import uvicorn

    uvicorn.run(create_app(args.model), host=args.host, port=args.port, access_log=False, log_level="warning")


if __name__ == "__main__":
    main()
