"""Prompt lookup: guess a sequence's next tokens from its own earlier tokens.

A corrected sentence is mostly a copy of the learner's sentence, a gloss repeats words of
both, and the gloss labels are a small fixed set, so "what followed the last time these
tokens appeared" is usually right. Speculative decoding checks such a guess in one
multi-token forward pass and keeps only the part greedy decoding agrees with, so a guess
never changes the output; a wrong one only costs the extra columns of that pass.

`PromptLookup` keeps an index that grows by one entry per appended token, so a guess costs
a few dict look-ups whatever the sequence's length (the engine asks for one per running
request per step):

    >>> seq = PromptLookup([5, 6, 7, 8, 1, 5, 6])
    >>> seq.draft(2)          # (5, 6) was followed by 7, 8
    [7, 8]
    >>> seq.append(7); seq.draft(3)
    [8, 1, 5]
"""

from __future__ import annotations

from collections.abc import Sequence


class LookupTable:
    """Where each token and each pair of tokens last appeared, by the index of what followed.

    Only occurrences that something followed are indexed, so a hit always has a continuation.
    """

    __slots__ = ("tokens", "_pairs", "_singles", "_previous")

    def __init__(self, tokens: Sequence[int] = ()) -> None:
        self.tokens: list[int] = []
        self._pairs: dict[tuple[int, int], int] = {}
        self._singles: dict[int, int] = {}
        # _previous[i]: the earlier successor index of the token before i (-1: none), so the
        # latest occurrence *before* the newest one is one look-up away (see `PromptLookup.draft`)
        self._previous: list[int] = []
        for token in tokens:
            self.append(token)

    def append(self, token: int) -> None:
        tokens = self.tokens
        i = len(tokens)
        tokens.append(token)
        if i == 0:
            self._previous.append(-1)
            return
        before = tokens[i - 1]
        self._previous.append(self._singles.get(before, -1))
        self._singles[before] = i
        if i >= 2:
            self._pairs[(tokens[i - 2], before)] = i

    def after_pair(self, a: int, b: int) -> int:
        return self._pairs.get((a, b), -1)

    def after_single(self, a: int) -> int:
        return self._singles.get(a, -1)


class PromptLookup(LookupTable):
    """One growing sequence (prompt, then generated tokens) and a fixed `corpus` of likely text."""

    __slots__ = ("corpus",)

    def __init__(self, tokens: Sequence[int] = (), corpus: LookupTable | None = None) -> None:
        super().__init__(tokens)
        self.corpus = corpus

    def draft(self, k: int) -> list[int]:
        """Up to `k` guessed next tokens: what followed the latest earlier occurrence of the last
        two tokens (in the sequence, then in the corpus), else of the last token.

        Failing that, the last token probably replaced one (goed → went): copy what followed
        the token before it, one token on. [] when there is nothing to copy.
        """
        tokens, n = self.tokens, len(self.tokens)
        if k <= 0 or n == 0:
            return []
        last = tokens[-1]
        sources = (self, self.corpus) if self.corpus is not None else (self,)
        if n >= 2:
            for source in sources:
                i = source.after_pair(tokens[-2], last)
                if i >= 0:
                    return source.tokens[i : i + k]
        for source in sources:
            i = source.after_single(last)
            if i >= 0:
                return source.tokens[i : i + k]
        if n >= 3:
            earlier = self._previous[n - 1]  # successor of the occurrence of tokens[-2] before the newest
            if earlier >= 0:
                return tokens[earlier + 1 : earlier + 1 + k]
        return []


def accept(chosen: Sequence[int], draft: Sequence[int], offset: int = 0) -> list[int]:
    """The tokens a step keeps for a sequence that fed `draft` after its token: `chosen[offset + i]`
    is greedy's pick after the guess's first i tokens, so the guess holds while they agree, and
    the pick after the last agreeing token is the model's own next token.

    >>> accept([7, 8, 5, 9], [7, 8, 1])
    [7, 8, 5]
    """
    n = 0
    while n < len(draft) and chosen[offset + n] == draft[n]:
        n += 1
    return list(chosen[offset : offset + n + 1])


class LookupDrafter:
    """Starts one `PromptLookup` per request, all over one shared `corpus` of likely text.

    The engine's speculative decoding asks `start(prompt)` when a greedy request is admitted;
    a subclass can return a lookup that knows more about the answers' shape.
    """

    def __init__(self, corpus: Sequence[int] = ()) -> None:
        self.corpus = LookupTable(corpus) if corpus else None

    def start(self, prompt: Sequence[int]) -> PromptLookup:
        return PromptLookup(prompt, self.corpus)
