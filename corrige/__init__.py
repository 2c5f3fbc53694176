"""corrige: a grammar tutor for Spanish speakers learning English, served by a tiny GPT."""

__version__ = "0.1.0"
