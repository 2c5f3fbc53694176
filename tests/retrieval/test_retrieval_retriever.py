"""The retriever the server calls: hybrid results, the BM25 fallback, the embedding cache."""

import logging

import numpy as np
import pytest

from corrige.tutor.edits import Edit
from corrige.tutor.retrieval import DenseIndex, RetrievalError, Retriever, RuleHit, span_attributes


def test_hybrid_search_returns_ranked_hits(hybrid_retriever):
    edit = Edit(9, 13, "with", "to", "preposition")
    hits = hybrid_retriever.search("He is married with Marta.", edits=[edit], k=5)
    assert hybrid_retriever.mode == "hybrid"
    assert len(hits) == 5 and all(isinstance(h, RuleHit) for h in hits)
    assert hits[0].card.id == "preposition_married_to"
    assert hits[0].bm25_rank is not None and hits[0].dense_rank is not None
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    summary = hits[0].summary()
    assert {"id", "title", "explanation", "example", "score"} <= set(summary)
    attrs = span_attributes(hits, hybrid_retriever.mode)
    assert attrs["retrieve.card_ids"][0] == "preposition_married_to"
    assert len(attrs["retrieve.scores"]) == 5


def test_free_text_and_spanish_queries(hybrid_retriever):
    assert hybrid_retriever.search("casado con", k=3)[0].card.id == "preposition_married_to"
    ids = [h.card.id for h in hybrid_retriever.search("I have 20 years", k=3)]
    assert "age_be" in ids


def test_missing_dense_model_falls_back_to_bm25_with_one_warning(cards, tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        retriever = Retriever.load(cards, model_dir=tmp_path / "no-model", cache_dir=None)
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "BM25 only" in warnings[0].getMessage()
    assert retriever.mode == "bm25" and retriever.dense is None
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        for text in ("married with", "I have 20 years", "zzzz", ""):
            hits = retriever.search(text, edits=[("with", "to")], categories=["preposition"])
            assert all(h.dense_rank is None for h in hits)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    with pytest.raises(RetrievalError):
        retriever.search("married with", mode="dense")


class CountingEncoder:
    """A stand-in encoder: deterministic vectors, counts calls."""

    dim = 8

    def __init__(self):
        self.calls = 0

    def fingerprint(self):
        return "fake"

    def encode(self, texts, batch_size=32):
        self.calls += 1
        texts = [texts] if isinstance(texts, str) else texts
        rng = [np.random.default_rng(abs(hash(t)) % 2**32).standard_normal(self.dim) for t in texts]
        v = np.asarray(rng, dtype=np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_card_embeddings_are_cached_on_disk(cards, tmp_path):
    enc = CountingEncoder()
    first = DenseIndex(cards[:5], enc, cache_dir=tmp_path)
    assert enc.calls == 1 and len(list(tmp_path.glob("card-embeddings-*.npy"))) == 1
    second = DenseIndex(cards[:5], enc, cache_dir=tmp_path)
    assert enc.calls == 1  # read back, not recomputed
    assert np.array_equal(first.vectors, second.vectors)
    DenseIndex(cards[:4], enc, cache_dir=tmp_path)  # other cards: other key
    assert enc.calls == 2 and len(list(tmp_path.glob("card-embeddings-*.npy"))) == 2
