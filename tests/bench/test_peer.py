"""The peer server (transformers `generate`) answers like the tutor on the same weights."""

import httpx
import pytest

from corrige.bench.peer import PeerUnavailable, require_peer_deps
from corrige.bench.servers import LabServer
from corrige.tutor.agent import BUNDLED_MODEL, Tutor

pytest.importorskip("torch")
pytest.importorskip("transformers")


def test_the_peer_answers_one_correction_with_the_same_shape_and_tokens(model_dir, with_torch):
    sentence = "Yesterday I goed to the store"
    with LabServer.peer(model_dir) as peer:
        response = httpx.post(f"{peer.url}/v1/grammar/correct", json={"sentence": sentence}, timeout=60)
    assert response.status_code == 200
    body = response.json()
    assert {"corrected", "explanation", "usage", "timings_ms"} <= set(body)
    ours = Tutor.load(model_dir).correct(sentence)
    # greedy on the same weights: the same tokens, so the same answer when the tutor does not abstain
    assert body["usage"]["completion_tokens"] == ours.completion_tokens
    if model_dir == BUNDLED_MODEL:
        assert not ours.abstained
        assert body["corrected"] == ours.corrected == "Yesterday I went to the store"


def test_missing_dependencies_are_named(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None if name == "torch" else real(name))
    with pytest.raises(PeerUnavailable, match="torch"):
        require_peer_deps()
