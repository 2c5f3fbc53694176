"""The GPT-2 model: configuration, weights on disk, and the NumPy runtime."""

from corrige.model.config import PRESETS, GPTConfig, preset

__all__ = ["PRESETS", "GPTConfig", "preset"]
