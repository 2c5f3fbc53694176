"""Model hyper-parameters: one frozen dataclass and a few named presets."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace


@dataclass(frozen=True)
class GPTConfig:
    """GPT-2 architecture hyper-parameters.

    Defaults are the `seed` preset: the ~0.5M-parameter tutor of the course chapters
    (vocabulary ~600 byte-level BPE tokens, a 64-token window, 4 layers).
    """

    vocab_size: int = 600  # byte-level BPE: 256 bytes + specials + merges
    n_ctx: int = 64  # longest prompt + completion, in tokens
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 96  # head size 24
    layer_norm_eps: float = 1e-5  # GPT-2's value; must match transformers to be exact

    def __post_init__(self) -> None:
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd={self.n_embd} is not a multiple of n_head={self.n_head}")
        for name in ("vocab_size", "n_ctx", "n_layer", "n_head", "n_embd"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")

    @property
    def head_size(self) -> int:
        return self.n_embd // self.n_head

    def num_params(self) -> int:
        """Parameter count with the LM head tied to the token embedding (counted once)."""
        d, L = self.n_embd, self.n_layer
        per_layer = 2 * 2 * d + (d * 3 * d + 3 * d) + (d * d + d) + (d * 4 * d + 4 * d) + (4 * d * d + d)
        return self.vocab_size * d + self.n_ctx * d + L * per_layer + 2 * d

    def to_dict(self) -> dict:
        return asdict(self)

    def with_(self, **changes: int | float) -> GPTConfig:
        return replace(self, **changes)


PRESETS: dict[str, GPTConfig] = {
    # The course chapters' tutor: ~0.5M parameters.
    "seed": GPTConfig(),
    # A wider, deeper tutor with room for longer sentences and multi-error glosses.
    "tutor": GPTConfig(vocab_size=1024, n_ctx=96, n_layer=4, n_head=4, n_embd=128),
    # Reads real learners' English: a byte-level BPE of 4k tokens and a window that holds a
    # 60-word sentence, its correction and a gloss. Trained on real sentences with injected errors.
    "reader": GPTConfig(vocab_size=4096, n_ctx=192, n_layer=4, n_head=6, n_embd=192),
    # The same window and vocabulary at two thirds the width: about half the compute per token.
    "reader-small": GPTConfig(vocab_size=4096, n_ctx=192, n_layer=4, n_head=4, n_embd=128),
    # For the training smoke test: one small layer, but the tutor's window and a trainable vocab.
    "smoke": GPTConfig(vocab_size=300, n_ctx=96, n_layer=1, n_head=2, n_embd=32),
    # For unit tests: fast, yet every path (several heads and layers) is exercised.
    "tiny": GPTConfig(vocab_size=97, n_ctx=32, n_layer=2, n_head=2, n_embd=16),
}


def preset(name: str) -> GPTConfig:
    """Look a preset up by name, with an error that lists the known ones."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; choose one of {sorted(PRESETS)}") from None
