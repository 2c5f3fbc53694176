"""Guessing the tutor's answer ahead of the model, for speculative decoding.

The answer to ``<bos> sentence <sep>`` is ``corrected / label: original → replacement; … <eos>``
(see `answer_text.py`). Plain prompt lookup (`corrige.model.lookup`) already copies the corrected
sentence from the learner's, and the labels from a corpus of them. This lookup also knows the
answer's shape:

* before the answer's first token (the prompt's own step), the learner's sentence is the guess;
* where a copied guess reaches the prompt's ``<sep>``, the answer writes `` /`` instead; and
  when the corrected sentence is then the learner's own, `` sin errores`` and ``<eos>``;
* once the corrected sentence is complete, its word-level edits against the learner's
  sentence (`diff_edits`, the same alignment the gloss was written with) give each gloss
  item's `` original → replacement``: as soon as a label ends (``:``), the rest of the item and
  the ``;`` or ``<eos>`` after it are guessed in one go.

The label itself is the model's call. A wrong guess costs only the extra columns of one
forward pass: the engine keeps just the tokens greedy decoding agrees with, so the answers
are the same with or without these guesses.
"""

from __future__ import annotations

from collections.abc import Sequence

from corrige.model.lookup import LookupDrafter, PromptLookup
from corrige.tokenizer import BPETokenizer
from corrige.tutor.answer_text import ARROW, ITEM_SEPARATOR, LABEL_SEPARATOR, NO_ERRORS_GLOSS, TARGET_SEPARATOR
from corrige.tutor.categories import CATEGORIES
from corrige.tutor.edits import diff_edits


class AnswerDrafter(LookupDrafter):
    """Token ids of the answer's fixed parts, shared by every request's `AnswerLookup`."""

    def __init__(self, tokenizer: BPETokenizer) -> None:
        gloss_token = tokenizer.special.gloss
        super().__init__(label_corpus(tokenizer))
        self.tokenizer = tokenizer
        self.prompt_end = tokenizer.special.sep
        self.eos = tokenizer.special.eos
        # the first token of each separator: the space after it belongs to the next word's token
        self.separator = tokenizer.encode(TARGET_SEPARATOR)[0] if gloss_token is None else gloss_token  # " /"
        self.label_end = tokenizer.encode(LABEL_SEPARATOR)[0]  # ":"
        self.item_end = tokenizer.encode(ITEM_SEPARATOR)[0]  # ";"
        # after a text separator the gloss's first word carries its space; after the token it does not
        lead = " " if gloss_token is None else ""
        self.no_errors = [*tokenizer.encode(lead + NO_ERRORS_GLOSS), self.eos]

    def start(self, prompt: Sequence[int]) -> AnswerLookup:
        return AnswerLookup(prompt, self)


def label_corpus(tokenizer: BPETokenizer) -> list[int]:
    """Every label as the model writes it, with what comes before it (so the pair of tokens at a
    label's start finds the rest): first in the gloss, after the `<|gloss|>` token with no space
    (after " / " for a model without the token), and after another item's "; ".

    The tokens of a word depend on the space before it ("artículo" and " artículo" are cut
    differently), so the corpus has both forms, as the answers have them."""
    gloss_token = tokenizer.special.gloss
    corpus: list[int] = []
    for category in CATEGORIES:
        label = category.label + LABEL_SEPARATOR.rstrip()
        corpus += tokenizer.encode(ITEM_SEPARATOR + label)
        if gloss_token is None:
            corpus += tokenizer.encode(TARGET_SEPARATOR + label)
        else:
            corpus += [gloss_token, *tokenizer.encode(label)]
    return corpus


class AnswerLookup(PromptLookup):
    """Prompt lookup over one request (prompt, then answer) that knows where the answer is."""

    __slots__ = ("shape", "n_prompt", "gloss_start", "_items")

    def __init__(self, prompt: Sequence[int], shape: AnswerDrafter) -> None:
        self.shape = shape
        self.n_prompt = len(prompt)
        self.gloss_start: int | None = None  # index of the gloss's first token, once " /" is written
        self._items: list[list[int]] | None = None
        super().__init__(prompt)  # the labels are no guess for the corrected sentence: no corpus until the gloss

    def append(self, token: int) -> None:
        super().append(token)
        if self.gloss_start is None and token == self.shape.separator and len(self.tokens) > self.n_prompt:
            self.gloss_start = len(self.tokens)
            self.corpus = self.shape.corpus

    def draft(self, k: int) -> list[int]:
        if k <= 0:
            return []
        if len(self.tokens) == self.n_prompt:  # nothing written yet (the prefill step): the sentence, copied
            guess = self.tokens[1 : self.n_prompt]
        else:
            guess = super().draft(k)
        if self.gloss_start is None:
            return self._close_sentence(guess)[:k]
        return self._gloss(guess)[:k]

    def _close_sentence(self, guess: list[int]) -> list[int]:
        shape = self.shape
        if shape.prompt_end not in guess:
            return guess
        i = guess.index(shape.prompt_end)
        corrected = self.tokens[self.n_prompt :] + guess[:i]
        unchanged = corrected == self.tokens[1 : self.n_prompt - 1]
        return [*guess[:i], shape.separator, *(shape.no_errors if unchanged else ())]

    def _gloss(self, guess: list[int]) -> list[int]:
        shape = self.shape
        gloss = self.tokens[self.gloss_start :]
        items = self.items()
        if not items:
            expected = shape.no_errors
            return expected[len(gloss) :] if expected[: len(gloss)] == gloss else guess
        label_ends = [i for i, t in enumerate(gloss) if t == shape.label_end]
        last_item_end = max((i for i, t in enumerate(gloss) if t == shape.item_end), default=-1)
        done = len(label_ends)  # items whose label is written
        if label_ends and label_ends[-1] > last_item_end:  # inside item `done - 1`, after its label
            if done > len(items):
                return guess
            body, expected = gloss[label_ends[-1] + 1 :], self._item(done - 1)
            return expected[len(body) :] if expected[: len(body)] == body else guess
        if shape.label_end in guess and done < len(items):  # the label ends inside the guess
            i = guess.index(shape.label_end)
            return [*guess[: i + 1], *self._item(done)]
        return guess

    def items(self) -> list[list[int]]:
        """Each gloss item's `` original → replacement`` tokens, from the corrected sentence's edits."""
        if self._items is None:
            decode = self.shape.tokenizer.decode
            source = decode(self.tokens[1 : self.n_prompt - 1])
            corrected = decode(self.tokens[self.n_prompt : self.gloss_start - 1])
            encode = self.shape.tokenizer.encode
            self._items = [encode(f" {e.original}{ARROW}{e.replacement}") for e in diff_edits(source, corrected)]
        return self._items

    def _item(self, index: int) -> list[int]:
        """Item `index` after its label, then what follows it: ";" before another item, else eos."""
        items = self.items()
        return [*items[index], self.shape.item_end if index + 1 < len(items) else self.shape.eos]
