"""Give a model that writes "corrected / gloss" the `<|gloss|>` separator token instead.

The separator as text collides with learners' own slashes ("tea / coffee"); as a special token
no typed text can produce it. Converting keeps everything a model has learned: the tokenizer
gains one id at the end, and the (tied) embedding one row, a copy of the row of the token that
begins " / ", so the converted model first scores the new token as it scored that one. A short
run on the same data in the new format then teaches it to write the token: `corrige train
--init-from DIR` converts DIR's model this way before it starts.
"""

from __future__ import annotations

import logging

import numpy as np

from corrige.model.weights import Params
from corrige.tokenizer import BPETokenizer
from corrige.tutor.answer_text import TARGET_SEPARATOR

log = logging.getLogger(__name__)

EMBEDDING = "transformer.wte.weight"


def add_gloss_token(tok: BPETokenizer, params: Params) -> tuple[BPETokenizer, Params]:
    """(tokenizer, weights) with `<|gloss|>`; unchanged when the tokenizer already has it."""
    if tok.special.gloss is not None:
        return tok, params
    new_tok = tok.with_gloss_token()
    wte = params[EMBEDDING]
    if wte.shape[0] != tok.vocab_size or new_tok.special.gloss != tok.vocab_size:
        raise ValueError(f"embedding rows ({wte.shape[0]}) do not match the tokenizer ({tok.vocab_size} ids)")
    like = tok.encode(TARGET_SEPARATOR)[0]  # " /": the token the model wrote to start the separator
    out = dict(params)
    out[EMBEDDING] = np.concatenate([wte, wte[like : like + 1]], axis=0)
    log.info("added <|gloss|> as id %d, its embedding copied from %r", new_tok.special.gloss, tok.id_to_token(like))
    return new_tok, out
