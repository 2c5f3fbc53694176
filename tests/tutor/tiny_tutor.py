"""A tutor over random smoke-sized weights, for tests that hand `interpret` an answer themselves."""

from __future__ import annotations

import math

from corrige.model import preset
from corrige.model.numpy_gpt import prepare
from corrige.model.weights import random_params
from corrige.tokenizer import BPETokenizer
from corrige.tutor.agent import Correction, Tutor, TutorConfig, TutorFront
from corrige.tutor.spelling import Speller


def tiny_tutor(answers: list[str], config: TutorConfig, speller: Speller | None = None) -> Tutor:
    """A tutor whose tokenizer was trained on `answers` ("corrected / gloss" lines)."""
    cfg = preset("smoke")
    tok = BPETokenizer.train(answers * 30, vocab_size=cfg.vocab_size)
    cfg = cfg.with_(vocab_size=tok.vocab_size)
    return Tutor(prepare(random_params(cfg), cfg), TutorFront(cfg, tok, config, None, speller))


def read(tutor: Tutor, sentence: str, answer: str, prob: float = 0.99) -> Correction:
    """What the tutor makes of `answer` ("corrected / gloss") to `sentence`, every token at `prob`."""
    ids = tutor.tokenizer.encode(answer) + [tutor.tokenizer.special.eos]
    return tutor.interpret(sentence, ids, [math.log(prob)] * len(ids))
