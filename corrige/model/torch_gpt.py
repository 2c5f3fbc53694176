"""The same GPT-2 as an `nn.Module`, for training only (serving runs `numpy_gpt`).

Parameter names and shapes are GPT-2's (`transformer.h.0.attn.c_attn.weight`, linear
weights stored (in, out)), so `state_dict()` is exactly what `weights.save_model` writes.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from corrige.model.config import GPTConfig
from corrige.model.weights import Params


class Conv1D(nn.Module):
    """GPT-2's linear layer: y = x @ W + b with W stored (in_features, out_features)."""

    def __init__(self, n_in: int, n_out: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out))
        self.bias = nn.Parameter(torch.zeros(n_out))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).reshape(*x.shape[:-1], -1)


class Attention(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.n_head = cfg.n_head
        self.c_attn = Conv1D(cfg.n_embd, 3 * cfg.n_embd)
        self.c_proj = Conv1D(cfg.n_embd, cfg.n_embd)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)  # 3 x (B, T, C)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, nh, T, hs)
        return self.c_proj(y.transpose(1, 2).reshape(B, T, C))


class MLP(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.c_fc = Conv1D(cfg.n_embd, 4 * cfg.n_embd)
        self.c_proj = Conv1D(4 * cfg.n_embd, cfg.n_embd)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))  # GPT-2's gelu_new


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_eps)
        self.attn = Attention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Transformer(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.n_ctx, cfg.n_embd)
        self.h = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_eps)


class TorchGPT(nn.Module):
    """GPT-2 with the LM head tied to the token embedding."""

    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.transformer = Transformer(cfg)
        nn.init.normal_(self.transformer.wte.weight, std=0.02)
        nn.init.normal_(self.transformer.wpe.weight, std=0.01)
        # GPT-2: scale residual projections by 1/sqrt(2 * n_layer) so the stream's variance stays put
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * cfg.n_layer))

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        """Logits (B, T, V) for token ids (B, T)."""
        B, T = idx.shape
        if T > self.cfg.n_ctx:
            raise ValueError(f"sequence of {T} tokens exceeds the {self.cfg.n_ctx}-token window")
        t = self.transformer
        x = t.wte(idx) + t.wpe(torch.arange(T, device=idx.device))  # (B, T, C)
        for block in t.h:
            x = block(x)
        return t.ln_f(x) @ t.wte.weight.T  # (B, T, V)

    def export_params(self) -> Params:
        """The weights as NumPy arrays under GPT-2 names, ready for `save_model`."""
        return {k: v.detach().cpu().numpy().astype(np.float32) for k, v in self.state_dict().items()}

    def load_params(self, params: Params) -> None:
        self.load_state_dict({k: torch.from_numpy(np.asarray(v)) for k, v in params.items()})
