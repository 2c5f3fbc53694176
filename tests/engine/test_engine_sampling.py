import numpy as np
import pytest

from corrige.engine.errors import InvalidRequest
from corrige.engine.request import Request, SamplingParams
from corrige.engine.sampling import sample_one, sample_tokens


def request(params: SamplingParams) -> Request:
    return Request("r", [1], params, arrival_time=0.0)


def test_greedy_rows_take_the_argmax_and_sampled_rows_their_own_draws():
    logits = np.random.default_rng(0).standard_normal((3, 50)).astype(np.float32)
    rows = [request(SamplingParams()), request(SamplingParams(temperature=1.0, seed=1)), request(SamplingParams())]
    tokens, errors = sample_tokens([logits[:2], logits[2:]], rows)  # prefill rows, then decode rows
    assert tokens[0] == int(np.argmax(logits[0])) and tokens[2] == int(np.argmax(logits[2]))
    assert tokens[1] == sample_one(logits[1], rows[1].params, np.random.default_rng(1))
    assert errors == {}


def test_a_row_whose_draw_raises_is_reported_and_the_other_rows_are_still_sampled():
    logits = np.random.default_rng(0).standard_normal((3, 50)).astype(np.float32)
    bad = SamplingParams(temperature=1.0)
    object.__setattr__(bad, "seed", -1)  # past the validation, as a bug elsewhere could let it
    rows = [
        request(SamplingParams(temperature=1.0, seed=1)),
        request(bad),
        request(SamplingParams(temperature=1.0, seed=2)),
    ]
    tokens, errors = sample_tokens([logits], rows)
    assert list(errors) == [1] and isinstance(errors[1], ValueError)
    assert tokens[0] == sample_one(logits[0], rows[0].params, np.random.default_rng(1))
    assert tokens[2] == sample_one(logits[2], rows[2].params, np.random.default_rng(2))


def test_top_k_of_one_and_a_tiny_top_p_are_greedy():
    rng = np.random.default_rng(1)
    for _ in range(20):
        logits = rng.standard_normal(40)
        best = int(np.argmax(logits))
        assert sample_one(logits, SamplingParams(temperature=2.0, top_k=1), rng) == best
        assert sample_one(logits, SamplingParams(temperature=2.0, top_p=1e-6), rng) == best


def test_top_k_and_top_p_never_pick_outside_their_set():
    logits = np.log(np.array([0.5, 0.3, 0.1, 0.05, 0.05]))
    rng = np.random.default_rng(2)
    top_k = {sample_one(logits, SamplingParams(temperature=1.0, top_k=2), rng) for _ in range(300)}
    top_p = {sample_one(logits, SamplingParams(temperature=1.0, top_p=0.85), rng) for _ in range(300)}
    assert top_k == {0, 1} and top_p == {0, 1, 2}


def test_sampling_follows_the_distribution():
    probs = np.array([0.6, 0.3, 0.1])
    rng = np.random.default_rng(3)
    draws = [sample_one(np.log(probs), SamplingParams(temperature=1.0), rng) for _ in range(4000)]
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / len(draws), probs, atol=0.03)


def test_a_seed_fixes_the_draws():
    logits = np.random.default_rng(4).standard_normal(60)
    params = SamplingParams(temperature=1.0, seed=9)
    first = [sample_one(logits, params, g) for g in [np.random.default_rng(9)] for _ in range(10)]
    again = [sample_one(logits, params, g) for g in [np.random.default_rng(9)] for _ in range(10)]
    assert first == again and len(set(first)) > 1


@pytest.mark.parametrize(
    "bad",
    [
        dict(max_tokens=0),
        dict(temperature=-1),
        dict(top_k=-1),
        dict(top_p=0.0),
        dict(top_p=1.5),
        dict(seed=-1),
        dict(seed=2**63),
    ],
)
def test_nonsense_parameters_are_invalid_requests(bad):
    with pytest.raises(InvalidRequest):
        SamplingParams(**bad)


@pytest.mark.parametrize("temperature", [1e-309, 5e-324, 1e-12, 9e-5])
def test_a_temperature_below_the_floor_is_greedy_and_never_nan(temperature, recwarn):
    from corrige.engine.request import MIN_TEMPERATURE

    params = SamplingParams(temperature=temperature, seed=3)
    assert params.greedy and params.temperature == 0.0 < MIN_TEMPERATURE
    logits = np.random.default_rng(4).standard_normal((2, 50)).astype(np.float32) * 30
    tokens, errors = sample_tokens([logits], [request(params), request(params)])
    assert tokens == np.argmax(logits, axis=-1).tolist() and errors == {}
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
    # at the floor it samples, and the probabilities stay finite
    cold = SamplingParams(temperature=MIN_TEMPERATURE, seed=3)
    assert not cold.greedy
    assert sample_one(logits[0], cold, np.random.default_rng(3)) == int(np.argmax(logits[0]))
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
