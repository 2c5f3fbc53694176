"""The word trigram model: Kneser-Ney probabilities that sum to one, the backoff form's lookups,
scores of changes that equal whole-sentence differences, and a save/load round trip."""

from __future__ import annotations

import numpy as np
import pytest

from corrige.model.ngram import BOS, NgramLM, words_of
from corrige.train.ngram import NgramBuildConfig, build

CORPUS = [
    "I go to school on Monday.",
    "She went to the park on Friday.",
    "We met on Friday at the station.",
    "They arrived at the station on Sunday.",
    "I am interested in music.",
    "He is interested in art and music.",
    "My brother doesn't like the cold.",
    "The children are playing in the park.",
    "I have two children and a dog.",
    "We have lived here since 2015.",
    "It is raining in London today.",
    "She listens to music on the bus.",
] * 3 + ["A rare sentence about zebras."]


@pytest.fixture(scope="module")
def full_lm() -> NgramLM:
    """Nothing pruned: the interpolated distribution is exactly a distribution."""
    return build(CORPUS, NgramBuildConfig(min_word_count=1, min_trigram_count=1, min_bigram_count=1))


@pytest.fixture(scope="module")
def lm() -> NgramLM:
    return build(CORPUS)


def test_words_are_lowercased_tokens():
    assert words_of("I don’t like it, Maria!") == ["i", "don't", "like", "it", ",", "maria", "!"]


@pytest.mark.parametrize("context", [(BOS, BOS), ("on", "friday"), ("to", "the"), ("zebras", ".")])
def test_each_context_is_a_distribution(full_lm, context):
    u, v = full_lm.index[context[0]], full_lm.index[context[1]]
    vocab = len(full_lm.vocab)
    tri = np.stack([np.full(vocab, u), np.full(vocab, v), np.arange(vocab)], axis=1)
    p = np.exp(full_lm._trigram_logprobs(tri))
    p[full_lm.index[BOS]] = 0.0  # never predicted
    assert p.sum() == pytest.approx(1.0, abs=1e-4)


def test_seen_text_is_likelier_than_its_learner_version(lm):
    assert lm.score("She went to the park on Friday.") > lm.score("She went to the park in Friday.")
    assert lm.score("I am interested in music.") > lm.score("I am interested on music.")


def test_pruning_keeps_fewer_ngrams_and_backs_off(full_lm, lm):
    assert lm.info["trigrams"] < full_lm.info["trigrams"]
    # the rare sentence's trigrams are pruned, but it still has a finite score
    assert np.isfinite(lm.score("A rare sentence about zebras."))


def test_change_gains_equal_whole_sentence_differences(lm):
    words = words_of("I go to school in Monday and I like it.")
    changes = [(4, 5, ["on"]), (4, 5, []), (0, 0, ["the"]), (9, 10, ["them"]), (10, 11, []), (3, 3, ["a"])]
    gains = lm.change_gains(words, changes)
    base = lm.score_many([words])[0]
    for (i, j, new), gain in zip(changes, gains, strict=True):
        assert gain == pytest.approx(lm.score_many([words[:i] + new + words[j:]])[0] - base, abs=1e-4)
    assert gains[0] > 0  # on Monday


def test_unknown_words_score_as_unk(lm):
    assert lm.score("I go to xyzzy.") == pytest.approx(lm.score("I go to qwerty."))


def test_save_and_load_round_trip(lm, tmp_path):
    lm.save(tmp_path / "lm")
    again = NgramLM.load(tmp_path / "lm")
    assert again.vocab == lm.vocab and again.info["trigrams"] == lm.info["trigrams"]
    for s in CORPUS[:5] + ["Something never seen before."]:
        assert again.score(s) == pytest.approx(lm.score(s), abs=0.02)  # float16 on disk


def test_perplexity_is_lower_on_training_text(lm):
    assert lm.perplexity(CORPUS[:6]) < lm.perplexity(["Zebras music the on go Friday school."])
