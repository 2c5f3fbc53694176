"""The training model is the serving model: same names, same logits."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from corrige.model import preset  # noqa: E402
from corrige.model.numpy_gpt import KVCache, extend, prepare  # noqa: E402
from corrige.model.torch_gpt import TorchGPT  # noqa: E402
from corrige.model.weights import check_params, random_params  # noqa: E402


def test_state_dict_is_gpt2_shaped():
    cfg = preset("tiny")
    check_params(TorchGPT(cfg).export_params(), cfg)


def test_logits_match_the_numpy_runtime():
    cfg = preset("tiny")
    params = random_params(cfg, seed=11)
    model = TorchGPT(cfg).eval()
    model.load_params(params)
    tokens = [5, 9, 1, 40, 2, 7]
    with torch.no_grad():
        ref = model(torch.tensor([tokens]))[0].numpy()
    ours = extend(prepare(params, cfg), KVCache.allocate(cfg, 1), tokens, 0, 0)  # every position's logits
    np.testing.assert_allclose(ours, ref, atol=1e-4, rtol=0)


def test_too_long_input_is_refused():
    cfg = preset("tiny")
    with pytest.raises(ValueError, match="window"):
        TorchGPT(cfg)(torch.zeros(1, cfg.n_ctx + 1, dtype=torch.long))
