"""Token-level prompt format: `<bos> sentence <sep>` → `corrected / gloss <eos>`.

A tokenizer with the `<|gloss|>` token (real-text models) writes `corrected <|gloss|> gloss <eos>`
instead: the separator is then a token that typed text cannot produce. `encode_pair` and
`split_answer` handle both, so callers never look at the separator themselves; `AnswerStream`
is `split_answer` for tokens as they are generated (what a stream may show of the corrected part).

Text-level rendering and parsing live in `answer_text.py`; this module only turns those strings
into token ids and checks that they fit the model's window, so an input that cannot fit
is refused with a clear error upstream instead of being silently truncated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from corrige.tokenizer import BPETokenizer
from corrige.tutor.answer_text import TARGET_SEPARATOR, parse_target, render_target

_REPLACEMENT = "\ufffd"  # what decoding shows for an incomplete UTF-8 sequence


class PromptTooLong(ValueError):
    """The sentence plus room for its answer does not fit the model's context window."""

    code = "prompt_too_long"


@dataclass(frozen=True)
class EncodedExample:
    ids: list[int]  # prompt + target, ending with eos
    n_prompt: int  # tokens of `<bos> sentence <sep>`


def encode_prompt(tok: BPETokenizer, sentence: str) -> list[int]:
    return [tok.special.bos, *tok.encode(sentence), tok.special.sep]


def check_fits(n_prompt: int, max_new_tokens: int, n_ctx: int) -> None:
    if n_prompt + max_new_tokens > n_ctx:
        room = n_ctx - max_new_tokens - 2
        raise PromptTooLong(
            f"the sentence takes {n_prompt - 2} tokens but at most {max(room, 0)} fit "
            f"(the {n_ctx}-token window keeps {max_new_tokens} for the answer); please send a shorter sentence"
        )


def encode_example(tok: BPETokenizer, source: str, target: str) -> EncodedExample:
    prompt = encode_prompt(tok, source)
    return EncodedExample(ids=[*prompt, *tok.encode(target), tok.special.eos], n_prompt=len(prompt))


def encode_answer(tok: BPETokenizer, corrected: str, gloss: str) -> list[int]:
    """Token ids of the answer (without eos), in the format the tokenizer's model writes."""
    if tok.special.gloss is None:
        return tok.encode(render_target(corrected, gloss))
    return [*tok.encode(corrected), tok.special.gloss, *tok.encode(gloss)]


def encode_pair(tok: BPETokenizer, source: str, corrected: str, gloss: str) -> EncodedExample:
    """`<bos> source <sep> answer <eos>`, the answer in the tokenizer's own format."""
    prompt = encode_prompt(tok, source)
    return EncodedExample(ids=[*prompt, *encode_answer(tok, corrected, gloss), tok.special.eos], n_prompt=len(prompt))


def split_answer(tok: BPETokenizer, ids: Sequence[int]) -> tuple[str, str, int] | None:
    """(corrected, gloss, tokens of the corrected part) of generated ids; None when it does not parse.

    Specials other than the separator (eos) are ignored; a side that is empty does not parse.
    """
    if tok.special.gloss is None:
        parsed = parse_target(tok.decode(ids))
        if parsed is None:
            return None
        return parsed[0], parsed[1], len(tok.encode(parsed[0]))
    ids = list(ids)
    if tok.special.gloss not in ids:
        return None
    cut = ids.index(tok.special.gloss)
    corrected, gloss = tok.decode(ids[:cut]).strip(), tok.decode(ids[cut + 1 :]).strip()
    if not corrected or not gloss:
        return None
    return corrected, gloss, cut


class AnswerStream:
    """The corrected sentence of an answer, released as its tokens arrive (`push`), never more
    than `split_answer` would take for it once the answer is complete.

    Text is held back while it could still turn out not to be part of the corrected sentence:
    an incomplete UTF-8 character; leading and trailing whitespace (`split_answer` strips it);
    `drop_suffix` at the end (the full stop the tutor added to the learner's sentence and takes
    off again); and with the text separator, a tail that may be the start of `` / `` and everything
    after the last `` / `` seen (it may be the gloss, or the sentence may go on: the gloss never
    holds the separator, so the last one is the split). With the `<|gloss|>` token, the corrected
    sentence ends where that token arrives. `released` is the text released so far.
    """

    def __init__(self, tok: BPETokenizer, drop_suffix: str = "") -> None:
        self.tok = tok
        self.drop_suffix = drop_suffix
        self.ids: list[int] = []
        self.released = ""
        self.ended = False  # the separator token arrived: nothing more belongs to the sentence

    def push(self, token_id: int) -> str:
        """Feed one generated id; the text of the corrected sentence it makes certain (often "")."""
        if self.ended:
            return ""
        if token_id == self.tok.special.gloss:
            self.ended = True
            return ""
        self.ids.append(token_id)
        text = self.tok.decode(self.ids)
        if text.endswith(_REPLACEMENT):  # wait for the rest of the character
            return ""
        certain = self._certain(text.lstrip())
        if len(certain) <= len(self.released) or not certain.startswith(self.released):
            return ""
        piece = certain[len(self.released) :]
        self.released = certain
        return piece

    def _certain(self, text: str) -> str:
        if self.tok.special.gloss is None:
            cut = text.rfind(TARGET_SEPARATOR)
            if cut >= 0:
                text = text[:cut]
            else:  # a tail that may grow into the separator waits
                for k in range(len(TARGET_SEPARATOR) - 1, 0, -1):
                    if text.endswith(TARGET_SEPARATOR[:k]):
                        text = text[:-k]
                        break
        text = text.rstrip()
        if self.drop_suffix and text.endswith(self.drop_suffix):
            text = text[: -len(self.drop_suffix)]
        return text
