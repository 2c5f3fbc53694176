"""Byte-level BPE tokenizer (HF `tokenizers`) with the tutor's special tokens.

Byte-level means every UTF-8 string round-trips exactly: text is first mapped to bytes,
so accents, ñ, emoji and control characters never fall out of the vocabulary.

Learner text is encoded with special tokens *split* (`encode_special_tokens`): a learner
who types "<|sep|>" gets the bytes of that string, never the separator itself, so the
prompt format cannot be smuggled in.

Every tokenizer trained now also carries `<|gloss|>`, the separator between the corrected
sentence and its gloss: a token no typed text can produce, so a learner's " / " is just text.
Tokenizers from before it write " / " as text; `with_gloss_token` adds the token to one of them
(and `corrige.train.gloss_token` the embedding row a model needs for it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

BOS = "<|bos|>"
SEP = "<|sep|>"
EOS = "<|eos|>"
PAD = "<|pad|>"
GLOSS = "<|gloss|>"
SPECIAL_TOKENS = (PAD, BOS, SEP, EOS)  # ids 0..3 in a trained tokenizer; every tokenizer has them

TOKENIZER_FILE = "tokenizer.json"


@dataclass(frozen=True)
class SpecialIds:
    pad: int
    bos: int
    sep: int
    eos: int
    gloss: int | None = None  # the answer's separator token; None: the answer writes " / " as text


class BPETokenizer:
    """A thin wrapper over `tokenizers.Tokenizer` that knows the tutor's special tokens."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        ids = [tokenizer.token_to_id(t) for t in SPECIAL_TOKENS]
        if any(i is None for i in ids):
            missing = [t for t, i in zip(SPECIAL_TOKENS, ids, strict=True) if i is None]
            raise ValueError(f"tokenizer lacks the special tokens {missing}")
        self._tok = tokenizer
        self._tok.encode_special_tokens = True
        self.special = SpecialIds(*ids, gloss=tokenizer.token_to_id(GLOSS))

    @classmethod
    def train(
        cls, texts: Iterable[str], vocab_size: int, min_frequency: int = 2, gloss_token: bool = False
    ) -> BPETokenizer:
        """Learn merges from `texts` until the vocabulary (bytes + specials + merges) is full.

        `gloss_token` adds `<|gloss|>` (id 4) for the answer's separator."""
        specials = [*SPECIAL_TOKENS, GLOSS] if gloss_token else list(SPECIAL_TOKENS)
        if vocab_size < 256 + len(specials):
            raise ValueError(f"vocab_size must be at least {256 + len(specials)} (bytes + specials)")
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            min_frequency=min_frequency,
            special_tokens=specials,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        tok.train_from_iterator(texts, trainer=trainer)
        return cls(tok)

    @classmethod
    def load(cls, path: str | Path) -> BPETokenizer:
        """Load a `tokenizer.json` file, or the one inside a model directory."""
        p = Path(path)
        if p.is_dir():
            p = p / TOKENIZER_FILE
        if not p.is_file():
            raise FileNotFoundError(f"no tokenizer at {p}")
        return cls(Tokenizer.from_file(str(p)))

    def with_gloss_token(self) -> BPETokenizer:
        """This tokenizer with `<|gloss|>` added as the next id (itself if it has the token): its
        other ids, merges and encodings stay as they were."""
        if self.special.gloss is not None:
            return self
        tok = Tokenizer.from_str(self._tok.to_str())
        tok.add_special_tokens([AddedToken(GLOSS, special=True, normalized=False)])
        return BPETokenizer(tok)

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        if p.is_dir():
            p = p / TOKENIZER_FILE
        self._tok.save(str(p))
        return p

    @property
    def vocab_size(self) -> int:
        return self._tok.get_vocab_size()

    def encode(self, text: str) -> list[int]:
        """Token ids of `text`; special-token strings inside it are encoded as plain bytes."""
        return self._tok.encode(text, add_special_tokens=False).ids

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return [e.ids for e in self._tok.encode_batch(list(texts), add_special_tokens=False)]

    def decode(self, ids: Sequence[int]) -> str:
        """Text of `ids`, special tokens dropped."""
        return self._tok.decode(list(ids), skip_special_tokens=True)

    def id_to_token(self, i: int) -> str | None:
        return self._tok.id_to_token(i)
