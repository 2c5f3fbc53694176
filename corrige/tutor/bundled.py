"""The bundled models' places, and what an engine process builds from a model directory.

Light on purpose: the engine child unpickles `engine_parts` and so imports this module, and
nothing here may pull in the tutor's word tables (`edit_labels` loads lemminflect, which loads
spaCy and torch: about 5 s of a child's start, for nothing the engine runs). The tutor
(`corrige.tutor.agent`) takes its model paths from here.
"""

from __future__ import annotations

from pathlib import Path

from corrige.model.numpy_gpt import RuntimeWeights, prepare
from corrige.model.weights import load_model
from corrige.tokenizer import BPETokenizer
from corrige.tutor.drafting import AnswerDrafter

MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
# The course's model (0.51M parameters, a 600-token vocabulary, a 64-token window, like the seeds'
# ~500k tutor): the course's tables and the portal's question bank are measured on it.
SEED_MODEL = MODELS_DIR / "seed"
# The default: a 4k byte-level vocabulary and a 192-token window read real learners' writing (every
# sentence of up to 60 words fits), with the tutor's patterns, speller and gloss from the edits on top.
# It wins on every quality target of real writing and keeps the serving targets; see both model cards.
READER_MODEL = MODELS_DIR / "reader"
BUNDLED_MODEL = READER_MODEL
# The word trigram model that scores candidate corrections (`rescoring.py`), with its tuned margins.
LM_MODEL = MODELS_DIR / "lm"


def engine_parts(model_dir: str | Path | None = None) -> tuple[RuntimeWeights, AnswerDrafter]:
    """What an engine process builds to serve the tutor: its weights and its answer drafter (not the
    speller, word lists or language model, which the server's `TutorFront` uses after the engine)."""
    directory = Path(model_dir) if model_dir else BUNDLED_MODEL
    cfg, params = load_model(directory)
    return prepare(params, cfg), AnswerDrafter(BPETokenizer.load(directory))
