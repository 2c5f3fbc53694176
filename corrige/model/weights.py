"""Weights on disk: safetensors with GPT-2 (transformers) tensor names.

A model directory holds `model.safetensors` and a GPT-2 `config.json`, so
`transformers.GPT2LMHeadModel.from_pretrained(dir)` loads it unchanged. The LM head is
tied to the token embedding and is not stored (as transformers does).

Tensor layout follows GPT-2's Conv1D: a linear weight is stored (in_features, out_features),
so `y = x @ W + b` with no transpose.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

from corrige.model.config import GPTConfig

Params = dict[str, np.ndarray]

WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "config.json"


def param_shapes(cfg: GPTConfig) -> dict[str, tuple[int, ...]]:
    """Every stored tensor's GPT-2 name and shape."""
    d = cfg.n_embd
    shapes: dict[str, tuple[int, ...]] = {
        "transformer.wte.weight": (cfg.vocab_size, d),
        "transformer.wpe.weight": (cfg.n_ctx, d),
        "transformer.ln_f.weight": (d,),
        "transformer.ln_f.bias": (d,),
    }
    for i in range(cfg.n_layer):
        p = f"transformer.h.{i}."
        shapes |= {
            p + "ln_1.weight": (d,),
            p + "ln_1.bias": (d,),
            p + "attn.c_attn.weight": (d, 3 * d),
            p + "attn.c_attn.bias": (3 * d,),
            p + "attn.c_proj.weight": (d, d),
            p + "attn.c_proj.bias": (d,),
            p + "ln_2.weight": (d,),
            p + "ln_2.bias": (d,),
            p + "mlp.c_fc.weight": (d, 4 * d),
            p + "mlp.c_fc.bias": (4 * d,),
            p + "mlp.c_proj.weight": (4 * d, d),
            p + "mlp.c_proj.bias": (d,),
        }
    return shapes


def random_params(cfg: GPTConfig, seed: int = 0, std: float = 0.1) -> Params:
    """Random weights where every parameter matters.

    Biases and LayerNorm gains/offsets are non-trivial (not 0 and 1) so tests that compare
    implementations exercise every path, not just the matmuls.
    """
    rng = np.random.default_rng(seed)
    params: Params = {}
    for name, shape in param_shapes(cfg).items():
        if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name.endswith("ln_f.weight"):
            x = 1.0 + 0.2 * rng.standard_normal(shape)
        elif name.endswith("wpe.weight"):
            x = 0.05 * rng.standard_normal(shape)
        else:
            x = std * rng.standard_normal(shape)
        params[name] = x.astype(np.float32)
    return params


def check_params(params: Params, cfg: GPTConfig) -> None:
    """Raise a ValueError naming the first missing, extra or mis-shaped tensor."""
    expected = param_shapes(cfg)
    missing = sorted(set(expected) - set(params))
    if missing:
        raise ValueError(f"weights are missing {len(missing)} tensors, e.g. {missing[0]!r}")
    extra = sorted(set(params) - set(expected) - {"lm_head.weight"})
    if extra:
        raise ValueError(f"weights have unexpected tensors, e.g. {extra[0]!r}")
    for name, shape in expected.items():
        if tuple(params[name].shape) != shape:
            raise ValueError(f"{name} has shape {tuple(params[name].shape)}, expected {shape}")


def hf_config(cfg: GPTConfig, bos_id: int | None = None, eos_id: int | None = None) -> dict:
    """A transformers GPT2Config as a dict: dropout off, tanh GELU, tied head."""
    return {
        "architectures": ["GPT2LMHeadModel"],
        "model_type": "gpt2",
        "vocab_size": cfg.vocab_size,
        "n_positions": cfg.n_ctx,
        "n_embd": cfg.n_embd,
        "n_layer": cfg.n_layer,
        "n_head": cfg.n_head,
        "n_inner": None,
        "activation_function": "gelu_new",
        "resid_pdrop": 0.0,
        "embd_pdrop": 0.0,
        "attn_pdrop": 0.0,
        "layer_norm_epsilon": cfg.layer_norm_eps,
        "tie_word_embeddings": True,
        "bos_token_id": bos_id,
        "eos_token_id": eos_id,
        "torch_dtype": "float32",
    }


def save_model(
    directory: str | Path,
    params: Params,
    cfg: GPTConfig,
    bos_id: int | None = None,
    eos_id: int | None = None,
) -> Path:
    """Write `model.safetensors` + `config.json`; returns the directory."""
    check_params(params, cfg)
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    tensors = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in params.items() if k != "lm_head.weight"}
    save_file(tensors, str(out / WEIGHTS_FILE), metadata={"format": "pt"})
    (out / CONFIG_FILE).write_text(json.dumps(hf_config(cfg, bos_id, eos_id), indent=2) + "\n")
    return out


def config_from_hf(hf: dict) -> GPTConfig:
    if hf.get("model_type") != "gpt2":
        raise ValueError(f"expected a gpt2 config, got model_type={hf.get('model_type')!r}")
    return GPTConfig(
        vocab_size=hf["vocab_size"],
        n_ctx=hf["n_positions"],
        n_layer=hf["n_layer"],
        n_head=hf["n_head"],
        n_embd=hf["n_embd"],
        layer_norm_eps=hf.get("layer_norm_epsilon", 1e-5),
    )


def load_model(directory: str | Path) -> tuple[GPTConfig, Params]:
    """Read a model directory written by `save_model` (or by transformers' save_pretrained)."""
    src = Path(directory)
    if not (src / WEIGHTS_FILE).is_file() or not (src / CONFIG_FILE).is_file():
        raise FileNotFoundError(f"{src} does not hold {WEIGHTS_FILE} and {CONFIG_FILE}")
    cfg = config_from_hf(json.loads((src / CONFIG_FILE).read_text()))
    params = {k: v.astype(np.float32, copy=False) for k, v in load_file(str(src / WEIGHTS_FILE)).items()}
    params.pop("lm_head.weight", None)  # tied to wte
    check_params(params, cfg)
    return cfg, params
