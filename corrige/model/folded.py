"""GPT-2's weights folded for the NumPy runtime (`prepare`): the same model, fewer operations a call.

At this size each NumPy call costs about as much as a small matmul, so the runtime's speed
comes from doing less per call. Every fold below is an algebraic identity, so the runtime
stays the same model as transformers' GPT-2 (to float32 rounding):

* LayerNorm gains and offsets are folded into the next linear layer, the attention scale
  into the query projection and the final LayerNorm into the LM head.
* Every weight that writes into the residual stream (embeddings, attention and MLP output
  projections) is centred so its output has zero mean over features. The stream then stays
  centred, LayerNorm's mean subtraction disappears, and the model is unchanged, because
  LayerNorm is the only reader of the stream and ignores its mean.
* The stream carries one extra feature, the constant `sqrt(d * eps)`, that no layer writes
  (their output column for it is zero). A row's sum of squares is then `sum(x²) + d*eps`,
  so a LayerNorm is one `vecdot`, one `sqrt` and one divide:
  `x / sqrt(mean(x²) + eps) = sqrt(d) * x / sqrt(sum(x²) + d*eps)`, with the `sqrt(d)`
  folded into the next weights and a zero weight row for the extra feature.
* Biases ride inside the matmuls: the inputs of the linear layers carry a trailing column
  of ones and each weight matrix a trailing bias row.
* GELU's pre-activation is pre-scaled (in the MLP's input weights, undone in its output
  weights) so its sigmoid argument is the cheapest polynomial: see `GELU_SCALE`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from corrige.model.config import GPTConfig
from corrige.model.weights import Params, check_params

# gelu_tanh(u) = u * sigmoid(2c (u + 0.044715 u³)) = u / (1 + exp(-2c u - 2c·0.044715 u³)),
# c = sqrt(2/pi); exp is about twice as fast as tanh in NumPy's float32 loops. With
# z = GELU_SCALE * u (a negative scale, folded into the MLP's input weights) the exponent
# is exactly z (z² + GELU_SHIFT), and gelu(u) = z / (1 + exp(..)) / GELU_SCALE, the last
# division folded into the MLP's output weights.
_GELU_2C = 2.0 * math.sqrt(2.0 / math.pi)
GELU_SCALE = -((_GELU_2C * 0.044715) ** (1.0 / 3.0))
GELU_SHIFT = np.float32(-_GELU_2C / GELU_SCALE)  # NumPy scalars: a Python float costs a dtype lookup


@dataclass(frozen=True)
class LayerWeights:
    """One block's weights, folded; every matrix has a trailing bias row.

    The inputs of `qkv` and `fc` are normalised stream rows `[x / r, eps_col / r, 1]`
    (d + 2 columns); `proj` and `out` write d + 1 columns, the last always zero.
    """

    qkv: np.ndarray  # (d+2, 3d)    ln_1 and sqrt(d) folded in, queries pre-scaled by 1/sqrt(hs)
    proj: np.ndarray  # (d+1, d+1)   centred, zero last column
    fc: np.ndarray  # (d+2, 4d)     ln_2 and sqrt(d) folded in, times GELU_SCALE
    out: np.ndarray  # (4d+1, d+1)  weight rows divided by GELU_SCALE, centred, zero last column


@dataclass(frozen=True)
class RuntimeWeights:
    """Weights prepared for the NumPy runtime (see `prepare`); read-only, shared by threads."""

    cfg: GPTConfig
    wte: np.ndarray  # (V, d+1)      rows centred, last column sqrt(d * eps)
    wpe: np.ndarray  # (n_ctx, d+1)  rows centred, last column 0
    layers: tuple[LayerWeights, ...]
    head: np.ndarray  # (d+2, V)      ln_f and sqrt(d) folded in, tied to wte
    causal: np.ndarray  # (n_ctx, n_ctx) row p: 0 at keys 0..p, -inf after


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.float32)
    a.setflags(write=False)
    return a


def _fold_layernorm(gain: np.ndarray, offset: np.ndarray, weight: np.ndarray, bias: np.ndarray):
    """(xhat * g + b) @ W + c  ==  xhat @ (g[:, None] * W) + (b @ W + c)."""
    g, b, W, c = (a.astype(np.float64) for a in (gain, offset, weight, bias))
    return g[:, None] * W, b @ W + c


def _reads_normalised(weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """(d, n), (n,) -> (d+2, n) for inputs `[x / r, eps_col / r, 1]`, r = sqrt(sum(x²) + d*eps).

    x / r is the LayerNorm output divided by sqrt(d), so the weight rows take the sqrt(d);
    the extra feature's row is zero and the bias rides on the ones column.
    """
    d = weight.shape[0]
    return np.vstack([math.sqrt(d) * weight, np.zeros((1, weight.shape[1])), bias[None, :]])


def _writes_stream(weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """(k, d), (d,) -> (k+1, d+1): bias row appended, rows centred, a zero column for the extra feature."""
    aug = np.vstack([weight, bias[None, :]]).astype(np.float64)
    aug -= aug.mean(axis=1, keepdims=True)
    return np.hstack([aug, np.zeros((aug.shape[0], 1))])


def prepare(params: Params, cfg: GPTConfig) -> RuntimeWeights:
    """Fold the GPT-2 parameters into the runtime's layout (exact up to float rounding)."""
    check_params(params, cfg)
    d, hs = cfg.n_embd, cfg.head_size
    layers = []
    for i in range(cfg.n_layer):
        prefix = f"transformer.h.{i}."

        def p(name: str, prefix: str = prefix) -> np.ndarray:
            return params[prefix + name].astype(np.float64)

        qkv_w, qkv_b = _fold_layernorm(p("ln_1.weight"), p("ln_1.bias"), p("attn.c_attn.weight"), p("attn.c_attn.bias"))
        scale = 1.0 / math.sqrt(hs)
        qkv_w[:, :d] *= scale
        qkv_b[:d] *= scale
        fc_w, fc_b = _fold_layernorm(p("ln_2.weight"), p("ln_2.bias"), p("mlp.c_fc.weight"), p("mlp.c_fc.bias"))
        layers.append(
            LayerWeights(
                qkv=_frozen(_reads_normalised(qkv_w, qkv_b)),
                proj=_frozen(_writes_stream(p("attn.c_proj.weight"), p("attn.c_proj.bias"))),
                fc=_frozen(_reads_normalised(GELU_SCALE * fc_w, GELU_SCALE * fc_b)),
                out=_frozen(_writes_stream(p("mlp.c_proj.weight") / GELU_SCALE, p("mlp.c_proj.bias"))),
            )
        )
    wte = params["transformer.wte.weight"].astype(np.float64)
    wpe = params["transformer.wpe.weight"].astype(np.float64)
    head_w, head_b = _fold_layernorm(
        params["transformer.ln_f.weight"], params["transformer.ln_f.bias"], wte.T, np.zeros(cfg.vocab_size)
    )
    eps_col = math.sqrt(d * cfg.layer_norm_eps)
    T = cfg.n_ctx
    return RuntimeWeights(
        cfg=cfg,
        wte=_frozen(np.hstack([wte - wte.mean(axis=1, keepdims=True), np.full((cfg.vocab_size, 1), eps_col)])),
        wpe=_frozen(np.hstack([wpe - wpe.mean(axis=1, keepdims=True), np.zeros((T, 1))])),
        layers=tuple(layers),
        head=_frozen(_reads_normalised(head_w, head_b)),
        causal=_frozen(np.triu(np.full((T, T), -np.inf), k=1)),
    )
