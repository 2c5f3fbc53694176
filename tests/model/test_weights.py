import json

import numpy as np
import pytest

from corrige.model import PRESETS, GPTConfig, preset
from corrige.model.weights import check_params, load_model, param_shapes, random_params, save_model


def test_seed_preset_is_the_course_scale():
    cfg = preset("seed")
    assert 400_000 <= cfg.num_params() <= 600_000
    assert (cfg.n_ctx, cfg.n_layer) == (64, 4)
    assert 550 <= cfg.vocab_size <= 650


def test_param_count_matches_the_stored_tensors():
    for cfg in PRESETS.values():
        stored = sum(int(np.prod(s)) for s in param_shapes(cfg).values())
        assert stored == cfg.num_params()


def test_save_load_round_trip(tmp_path):
    cfg = preset("tiny")
    params = random_params(cfg, seed=3)
    save_model(tmp_path, params, cfg, bos_id=1, eos_id=3)
    cfg2, params2 = load_model(tmp_path)
    assert cfg2 == cfg
    for name, value in params.items():
        np.testing.assert_array_equal(params2[name], value)
    hf = json.loads((tmp_path / "config.json").read_text())
    assert hf["model_type"] == "gpt2" and hf["activation_function"] == "gelu_new"


def test_transformers_loads_the_weights_unchanged(tmp_path):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    cfg = preset("tiny")
    params = random_params(cfg, seed=5)
    save_model(tmp_path, params, cfg)
    hf, info = transformers.GPT2LMHeadModel.from_pretrained(tmp_path, output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"]
    state = hf.state_dict()
    for name, value in params.items():
        np.testing.assert_array_equal(state[name].numpy(), value)
    assert torch.equal(state["lm_head.weight"], state["transformer.wte.weight"])


def test_bad_weights_are_named():
    cfg = preset("tiny")
    params = random_params(cfg)
    del params["transformer.h.1.mlp.c_fc.bias"]
    with pytest.raises(ValueError, match="missing"):
        check_params(params, cfg)
    params = random_params(cfg)
    params["transformer.wpe.weight"] = params["transformer.wpe.weight"][:3]
    with pytest.raises(ValueError, match="wpe"):
        check_params(params, cfg)


def test_config_validation():
    with pytest.raises(ValueError, match="multiple"):
        GPTConfig(n_embd=10, n_head=3)
    with pytest.raises(ValueError, match="unknown preset"):
        preset("huge")
