"""The NumPy MiniLM encoder against sentence-transformers, and its own invariants."""

import math

import numpy as np
import pytest

from corrige.tutor.encoder import MiniLMEncoder, default_model_dir, gelu

TEXTS = [
    "I am married with Laura.",
    "Yesterday I goed to the store",
    "preposition: is married with → to Laura.",
    "He don't like vegetables, but his sister drinks a lot of tea every morning at nine o'clock.",
    "¿Cómo digo mi edad en inglés?",
    "a",
]


def test_gelu_is_the_erf_form():
    x = np.linspace(-6, 6, 241, dtype=np.float32)
    exact = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.astype(np.float64)])
    assert np.max(np.abs(gelu(x) - exact)) < 1e-6


def test_unit_vectors_and_batch_invariance(encoder):
    together = encoder.encode(TEXTS)
    assert together.shape == (len(TEXTS), 384) and together.dtype == np.float32
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    alone = np.stack([encoder.encode(t)[0] for t in TEXTS])  # no padding at all
    assert np.max(np.abs(together - alone)) < 1e-5  # so the padding mask is right


def test_matches_sentence_transformers(encoder):
    st = pytest.importorskip("sentence_transformers")
    reference = st.SentenceTransformer(str(default_model_dir()), device="cpu")
    ref = reference.encode(TEXTS, convert_to_numpy=True, normalize_embeddings=True)
    ours = encoder.encode(TEXTS)
    cosine = np.sum(ours * ref, axis=1) / np.linalg.norm(ref, axis=1)
    assert np.all(1 - cosine < 1e-4), 1 - cosine


def test_missing_model_dir_is_reported(tmp_path):
    from corrige.tutor.encoder import EncoderUnavailable

    with pytest.raises(EncoderUnavailable, match="missing"):
        MiniLMEncoder.load(tmp_path / "nowhere")
