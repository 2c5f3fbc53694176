"""The training corpus: everyday English sentences from permissively licensed sources.

`SOURCES` is the registry of known sources: each one's licence, attribution and address, which downloaded files
are its own (path patterns) and how to read them. `build_corpus` walks the given files and folders, gives each file
to the first source that claims it, splits running text into sentences (spaCy's rule-based `sentencizer`), cleans
every sentence (`clean_sentence`), drops exact and case-insensitive duplicates and writes, in the output folder:

- `sentences.txt`: one sentence a line, in an order fixed by the seed alone (a keyed hash of each sentence), so
  the same inputs and seed give the same bytes whatever order the files were read in;
- `manifest.json`: per source its licence, attribution, address, the files read, the sentences kept and the
  sentences dropped by reason; the totals.

The build streams: only the set of 64-bit digests used for deduplication is held in memory; kept sentences go to
bucket files on disk, each bucket is sorted by the seeded hash on its own and appended to `sentences.txt`.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Any, Protocol

from corrige.corpus.cleaning import (
    DROP_REASONS,
    MAX_WORDS,
    MIN_WORDS,
    SENTENCE_BREAK,
    SENTENCE_END,
    clean_sentence,
    normalize,
)
from corrige.corpus.readers import (
    Passage,
    read_anki_pairs,
    read_gutenberg,
    read_lines,
    read_standard_ebooks,
    read_taskmaster,
    read_tatoeba,
    read_wordnet,
)

log = logging.getLogger(__name__)

N_BUCKETS = 64


# ---------------------------------------------------------------------------------------------------------------
# The registry.


@dataclass(frozen=True)
class Source:
    """A known source of sentences: where it comes from, under which terms, and which files are its own."""

    name: str
    licence: str
    attribution: str
    url: str
    patterns: tuple[str, ...]  # fnmatch patterns on the file's POSIX path ("*" crosses folders)
    reader: Callable[[Path], Iterator[Passage]]
    excludes: tuple[str, ...] = ()

    def claims(self, path: Path) -> bool:
        posix = path.as_posix()
        return any(fnmatch(posix, p) for p in self.patterns) and not any(fnmatch(posix, p) for p in self.excludes)

    @classmethod
    def in_own_folder(cls, name: str, *extensions: str, **fields: Any) -> Source:
        """A source whose files are the ones with these extensions in a folder of its name (`…/gutenberg/*.txt`)."""
        return cls(name=name, patterns=tuple(f"*/{name}/*.{extension}" for extension in extensions), **fields)


SOURCES: tuple[Source, ...] = (
    Source(
        name="wordnet",
        licence="WordNet 3.0 License (permissive, BSD-like)",
        attribution="WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. "
        "(Debian package wordnet-base)",
        url="https://wordnet.princeton.edu/",
        patterns=("*/data.noun", "*/data.verb", "*/data.adj", "*/data.adv", "data.noun", "data.verb", "data.adj"),
        reader=read_wordnet,
    ),
    Source(
        name="tatoeba",
        licence="CC BY 2.0 FR",
        attribution="Sentences from Tatoeba (https://tatoeba.org), by the Tatoeba contributors, CC BY 2.0 FR",
        url="https://tatoeba.org/downloads",
        patterns=(
            "*/tatoeba/*.tsv",
            "*/tatoeba/*.csv",
            "*sentences.csv",
            "*sentences_detailed.csv",
            "*sentences_CC0.csv",
            "*eng_sentences*.tsv",
        ),
        reader=read_tatoeba,
    ),
    Source.in_own_folder(
        "tatoeba-manythings",
        "zip",
        "txt",
        licence="CC BY 2.0 FR",
        attribution="Sentence pairs from www.manythings.org/anki and tatoeba.org (Tatoeba contributors), CC BY 2.0 FR",
        url="https://www.manythings.org/anki/",
        reader=read_anki_pairs,
        excludes=("*/_about.txt",),
    ),
    Source(
        name="standard-ebooks",
        licence="Public domain in the USA; Standard Ebooks' own work under CC0 1.0",
        attribution="Ebooks from Standard Ebooks (https://standardebooks.org), dedicated to the public domain "
        "(CC0 1.0) over US public-domain texts",
        url="https://github.com/standardebooks",
        patterns=("*/src/epub/text/*.xhtml",),
        reader=read_standard_ebooks,
    ),
    Source.in_own_folder(
        "gutenberg",
        "txt",
        licence="Public domain in the USA (Project Gutenberg texts, licence and trademark text removed)",
        attribution="Texts from Project Gutenberg (https://www.gutenberg.org), public domain in the USA",
        url="https://www.gutenberg.org/",
        reader=read_gutenberg,
    ),
    Source.in_own_folder(
        "taskmaster",
        "json",
        "tsv",
        licence="CC BY 4.0",
        attribution="Taskmaster dialogues by Bill Byrne, Karthik Krishnamoorthi, Saravanan Ganesh and others, "
        "Google LLC, CC BY 4.0",
        url="https://github.com/google-research-datasets/Taskmaster",
        reader=read_taskmaster,
        excludes=("*/ontology/*", "*/sample.json"),
    ),
    Source.in_own_folder(
        "common-voice",
        "txt",
        licence="CC0 1.0",
        attribution="Sentences from Mozilla Common Voice (https://commonvoice.mozilla.org), CC0 1.0",
        url="https://github.com/common-voice/common-voice",
        reader=read_lines,
    ),
)


def source_named(name: str, sources: Iterable[Source] = SOURCES) -> Source:
    for source in sources:
        if source.name == name:
            return source
    raise KeyError(name)


def discover(
    paths: Iterable[Path], sources: Iterable[Source] = SOURCES
) -> tuple[list[tuple[Path, Source]], list[Path]]:
    """Every file under `paths` (sorted), each with the first source that claims it; and the files none claims."""
    sources = tuple(sources)
    files: set[Path] = set()
    for root in paths:
        root = Path(root)
        if root.is_dir():
            files.update(p for p in root.rglob("*") if p.is_file())
        elif root.is_file():
            files.add(root)
        else:
            raise FileNotFoundError(root)
    claimed: list[tuple[Path, Source]] = []
    unclaimed: list[Path] = []
    for path in sorted(files):
        owner = next((s for s in sources if s.claims(path.resolve())), None)
        if owner is None:
            unclaimed.append(path)
        else:
            claimed.append((path, owner))
    return claimed, unclaimed


# ---------------------------------------------------------------------------------------------------------------
# Sentence splitting.


class Splitter:
    """spaCy's rule-based sentencizer on a blank English pipeline, loaded on first use, with dialogue mended:

    - an opening quote that the sentencizer leaves at the end of a sentence moves to the next one;
    - a piece that starts with a small letter (a dialogue tag: 'cried Dorothy.') joins the one before;
    - a piece with one double quote is made whole: a quote opening a speech that goes on in later pieces, or
      closing one that began in earlier pieces, is dropped at the edge ('"I'm not licked.' → 'I'm not licked.'),
      a closing quote inside ('Oh, dear!" cried Dorothy.') gets its opening quote, an opening quote inside
      ('He said: "No way.') its closing one.
    """

    def __init__(self, batch_size: int = 256) -> None:
        self.batch_size = batch_size
        self._nlp = None

    def _pipeline(self):
        if self._nlp is None:
            import spacy

            nlp = spacy.blank("en")
            nlp.add_pipe("sentencizer")
            nlp.max_length = 5_000_000
            self._nlp = nlp
        return self._nlp

    @staticmethod
    def _mend_quotes(piece: str) -> str:
        count = piece.count('"')
        if count % 2 == 0:
            return piece
        if count > 1:  # '"Yeah," I said, "I remember.' or 'it," he said. "Go.': close or open the odd one
            last, first = piece.rindex('"'), piece.index('"')
            if last < len(piece) - 1 and piece[last - 1] == " " and SENTENCE_END.search(piece):
                return piece + '"'
            if first > 0 and piece[first - 1] != " ":
                return '"' + piece
            return piece
        i = piece.index('"')
        if i == 0:
            return piece[1:].lstrip()
        if i == len(piece) - 1:
            return piece[:-1].rstrip()
        if piece[i - 1] != " ":  # a closing quote: the speech began in an earlier piece
            return '"' + piece
        return piece + '"' if SENTENCE_END.search(piece) else piece

    @classmethod
    def _join(cls, pieces: list[str]) -> list[str]:
        joined: list[str] = []
        carry = ""
        for piece in pieces:
            piece = carry + piece
            carry = ""
            if len(piece) > 2 and piece.endswith(' "'):
                piece, carry = piece[:-2].rstrip(), '"'
            if joined and piece[:1].islower():
                joined[-1] = f"{joined[-1]} {piece}"
            else:
                joined.append(piece)
        return [cls._mend_quotes(piece) for piece in joined]

    def sentences(self, passages: Iterable[Passage]) -> Iterator[Passage]:
        """Each passage's sentences, in order; passages that need no split pass through."""
        batch: list[Passage] = []
        for passage in passages:
            batch.append(passage)
            if len(batch) >= self.batch_size:
                yield from self._flush(batch)
                batch = []
        yield from self._flush(batch)

    def _flush(self, batch: list[Passage]) -> Iterator[Passage]:
        # normalise first so that curly quotes and dashes split and join the same way everywhere
        texts = {i: normalize(p.text) for i, p in enumerate(batch) if p.split and p.reject is None}
        needs = [i for i, t in texts.items() if SENTENCE_BREAK.search(t)]
        docs = dict(zip(needs, self._pipeline().pipe(texts[i] for i in needs), strict=True)) if needs else {}
        for i, passage in enumerate(batch):
            if i in docs:
                pieces = [s.text.strip() for s in docs[i].sents if s.text.strip()]
                for piece in self._join(pieces):
                    yield Passage(piece)
            elif i in texts:
                yield Passage(texts[i])
            else:
                yield passage


# ---------------------------------------------------------------------------------------------------------------
# The build.


class BuildProgress(Protocol):
    def start(self, total_bytes: int, files: int) -> None: ...

    def advance(self, path: Path, nbytes: int) -> None: ...


@dataclass
class SourceReport:
    source: Source
    files: list[str] = field(default_factory=list)
    candidates: int = 0
    kept: int = 0
    dropped: Counter = field(default_factory=Counter)

    def as_dict(self) -> dict:
        return {
            "name": self.source.name,
            "licence": self.source.licence,
            "attribution": self.source.attribution,
            "url": self.source.url,
            "files": self.files,
            "candidates": self.candidates,
            "kept": self.kept,
            "dropped": {r: self.dropped[r] for r in DROP_REASONS if self.dropped[r]},
            "dropped_total": sum(self.dropped.values()),
        }


def _digest(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.casefold().encode("utf-8"), digest_size=8).digest(), "big")


def _order_key(text: str, seed: int) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8, key=seed.to_bytes(8, "big", signed=True)).digest()


def build_corpus(
    paths: Iterable[Path | str],
    out_dir: Path | str,
    *,
    seed: int = 0,
    sources: Iterable[Source] = SOURCES,
    progress: BuildProgress | None = None,
    splitter: Splitter | None = None,
) -> dict:
    """Read, clean, deduplicate and shuffle; write `sentences.txt` and `manifest.json` in `out_dir`; return the
    manifest."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    claimed, unclaimed = discover((Path(p) for p in paths), sources)
    for path in unclaimed:
        log.debug("no source claims %s; skipped", path)
    if unclaimed:
        log.info("%d files claimed by no source were skipped", len(unclaimed))
    reports: dict[str, SourceReport] = {}
    for _, source in claimed:
        reports.setdefault(source.name, SourceReport(source))
    if progress is not None:
        progress.start(sum(p.stat().st_size for p, _ in claimed), len(claimed))
    splitter = splitter or Splitter()
    seen: set[int] = set()
    bucket_dir = out_dir / ".buckets"
    bucket_dir.mkdir(exist_ok=True)
    buckets = [(bucket_dir / f"{i:02x}.txt").open("w", encoding="utf-8") for i in range(N_BUCKETS)]
    try:
        for path, source in claimed:
            report = reports[source.name]
            report.files.append(str(path))
            for passage in splitter.sentences(source.reader(path)):
                report.candidates += 1
                if passage.reject is not None:
                    report.dropped[passage.reject] += 1
                    continue
                text, reason = clean_sentence(passage.text)
                if reason is None:
                    key = _digest(text)
                    if key in seen:
                        reason = "duplicate"
                    else:
                        seen.add(key)
                if reason is not None:
                    report.dropped[reason] += 1
                    continue
                report.kept += 1
                order = _order_key(text, seed)
                buckets[order[0] % N_BUCKETS].write(f"{order.hex()}\t{text}\n")
            if progress is not None:
                progress.advance(path, path.stat().st_size)
    finally:
        for f in buckets:
            f.close()
    del seen
    sentences_path = out_dir / "sentences.txt"
    sha = hashlib.sha256()
    with sentences_path.open("w", encoding="utf-8") as out:
        for i in range(N_BUCKETS):
            bucket = bucket_dir / f"{i:02x}.txt"
            lines = bucket.read_text(encoding="utf-8").splitlines()
            lines.sort()
            for line in lines:
                text = line.split("\t", 1)[1] + "\n"
                out.write(text)
                sha.update(text.encode("utf-8"))
            bucket.unlink()
    bucket_dir.rmdir()
    manifest = _manifest(reports, unclaimed, seed, sha.hexdigest())
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    log.info("kept %d sentences from %d files", manifest["totals"]["kept"], manifest["totals"]["files"])
    return manifest


def _manifest(reports: dict[str, SourceReport], unclaimed: list[Path], seed: int, sha256: str) -> dict:
    dropped: Counter = Counter()
    for r in reports.values():
        dropped.update(r.dropped)
    totals = {
        "files": sum(len(r.files) for r in reports.values()),
        "candidates": sum(r.candidates for r in reports.values()),
        "kept": sum(r.kept for r in reports.values()),
        "dropped": {r: dropped[r] for r in DROP_REASONS if dropped[r]},
        "dropped_total": sum(dropped.values()),
        "unclaimed_files": len(unclaimed),
    }
    return {
        "output": "sentences.txt",
        "sha256": sha256,
        "seed": seed,
        "rules": {"min_words": MIN_WORDS, "max_words": MAX_WORDS, "drop_reasons": list(DROP_REASONS)},
        "sources": [r.as_dict() for r in reports.values()],
        "totals": totals,
        "unclaimed_files": [str(p) for p in unclaimed[:50]],
    }
