"""Token-level prompt format: `<bos> sentence <sep>` → `corrected / gloss <eos>`.

Text-level rendering and parsing live in `format.py`; this module only turns those strings
into token ids and checks that they fit the model's window, so an input that cannot fit
is refused with a clear error upstream instead of being silently truncated.
"""

from __future__ import annotations

from dataclasses import dataclass

from corrige.tokenizer import BPETokenizer


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
