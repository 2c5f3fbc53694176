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
import io
import json
import logging
import re
import unicodedata
import xml.etree.ElementTree as ET
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Protocol

log = logging.getLogger(__name__)

MIN_WORDS = 3
MAX_WORDS = 60
N_BUCKETS = 64

# Why a candidate sentence was dropped, in the order the checks run (a sentence counts under the first that fails).
DROP_REASONS = (
    "characters",  # a character outside everyday English text (other scripts, symbols)
    "url",  # a web or mail address
    "brackets",  # brackets or braces: footnotes, stage directions, annotations
    "too_short",  # fewer than MIN_WORDS words
    "too_long",  # more than MAX_WORDS words
    "all_caps",  # mostly capital letters: headings, shouting, titles
    "heading",  # a chapter, part or section heading
    "lowercase_start",  # a piece of a sentence: starts with a small letter
    "no_end_punctuation",  # does not end with . ! or ? (a closing quote may follow)
    "unbalanced_quotes",  # an odd number of double quotes: a piece cut out of dialogue
    "archaic",  # thou, thee, hath, doth, 'tis and the like
    "profanity",  # a word from PROFANITY
    "fragment",  # a reader's verdict: not a sentence (a WordNet example that is only a phrase)
    "duplicate",  # the same sentence, ignoring case, was already kept
)

ARCHAIC_WORDS = frozenset(
    """thou thee thy thine thyself ye hath doth dost hast shalt wilt canst couldst wouldst shouldst mayst mightst
    didst hadst wast wert 'tis 'twas 'twere 'twill 'twould o'er e'er ne'er e'en methinks prithee forsooth verily
    hither thither whither whence wherefore betwixt perchance nay yea unto oft ere""".split()
)

# A short list: slurs and the strongest swear words. Mild words ("damn", "hell") are everyday English and stay.
PROFANITY = re.compile(
    r"\b(?:(?:mother)?fuck\w*|shit\w*|bullshit\w*|bitch\w*|bastards?|cunts?|assholes?|arseholes?|whores?|sluts?"
    r"|nigg\w*|faggots?|fags|dickheads?|twats?|wank\w*|pussy|pussies|retards?)\b",
    re.IGNORECASE,
)

_TRANSLATE = str.maketrans(
    {
        "\u201c": '"',  # “
        "\u201d": '"',  # ”
        "\u201e": '"',  # „
        "\u201f": '"',
        "\u00ab": '"',  # «
        "\u00bb": '"',  # »
        "\u2018": "'",  # ‘
        "\u2019": "'",  # ’
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",  # prime, used as an apostrophe
        "`": "'",
        "\u00b4": "'",
        "\u2010": "-",  # hyphen
        "\u2011": "-",  # non-breaking hyphen
        "\u2013": "-",  # en dash
        "\u2014": " - ",  # em dash
        "\u2015": " - ",
        "\u2212": "-",
        "\u2060": "",  # word joiner (Standard Ebooks puts one before each em dash)
        "\u00ad": "",  # soft hyphen
        "\u200b": "",
        "\u200c": "",
        "\u200d": "",
        "\ufeff": "",
    }
)
_SPACES = re.compile(r"\s+")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,;:!?](?:\s|$)|\.(?:\s|$))")
_WORD = re.compile(r"[A-Za-z0-9]+(?:['-][A-Za-z0-9]+)*")
_ARCHAIC_TOKEN = re.compile(r"'?[a-z]+(?:'[a-z]+)?")
_ALLOWED_ASCII = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:!?'\"-&%$/()[]{}<>"
)  # brackets are allowed here so that they count under their own reason
_URL = re.compile(
    r"(?:https?://|ftp://|www\.|\b[\w-]+\.(?:com|org|net|edu|gov|io|co\.uk|html?)\b|[\w.+-]+@[\w-]+\.\w)", re.IGNORECASE
)
_BRACKETS = re.compile(r"[()\[\]{}<>]")
_NUMBER_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen"
    "|eighteen|nineteen|twenty|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|the last"
)
_HEADING = re.compile(
    r"^(?:(?:chapter|book|part|volume|vol\.|section|act|scene|canto|stave|letter|appendix)\s+"
    rf"(?:[ivxlcdm]+|\d+|{_NUMBER_WORDS})\b\s*(?:[.:-]|$)"
    r"|(?-i:[IVXLCDM]+\.\s)|\d+\.\s+[A-Z]"
    r"|(?:contents|preface|prologue|epilogue|introduction|foreword|afterword|the end)\s*[.:]?$)",
    re.IGNORECASE,
)
_END = re.compile(r"[.!?]['\"]*$")
_SENTENCE_BREAK = re.compile(r"[.!?]['\")]*\s+\S")  # running text that may hold more than one sentence


def normalize(text: str) -> str:
    """Unicode NFKC, straight quotes, dashes and ellipses in ASCII, one space between words."""
    text = unicodedata.normalize("NFKC", text).translate(_TRANSLATE)
    text = _SPACES.sub(" ", text).strip()
    return _SPACE_BEFORE_PUNCT.sub(r"\1", text)


def word_count(text: str) -> int:
    return len(_WORD.findall(text))


def _bad_characters(text: str) -> bool:
    letters = ascii_letters = 0
    for ch in text:
        if ch in _ALLOWED_ASCII:
            if ch.isalpha():
                letters += 1
                ascii_letters += 1
            continue
        # a Latin letter with a diacritic (café, naïve) is fine in small numbers; anything else is not
        if not (ch.isalpha() and unicodedata.name(ch, "").startswith("LATIN")):
            return True
        letters += 1
    return letters == 0 or ascii_letters < 0.9 * letters


def _all_caps(text: str) -> bool:
    letters = [ch for ch in text if ch.isalpha()]
    if len(letters) < 4:
        return False
    upper = sum(ch.isupper() for ch in letters)
    return upper / len(letters) > 0.5


def _lowercase_start(text: str) -> bool:
    for ch in text:
        if ch.isalnum():
            return not (ch.isupper() or ch.isdigit())
    return True


def clean_sentence(raw: str) -> tuple[str, str | None]:
    """The normalised sentence and why it is dropped (None when it is kept). Checks run in DROP_REASONS order."""
    text = normalize(raw)
    if _bad_characters(text):
        return text, "characters"
    if _URL.search(text):
        return text, "url"
    if _BRACKETS.search(text):
        return text, "brackets"
    words = word_count(text)
    if words < MIN_WORDS:
        return text, "too_short"
    if words > MAX_WORDS:
        return text, "too_long"
    if _all_caps(text):
        return text, "all_caps"
    if _HEADING.match(text):
        return text, "heading"
    if _lowercase_start(text):
        return text, "lowercase_start"
    if not _END.search(text):
        return text, "no_end_punctuation"
    if text.count('"') % 2:
        return text, "unbalanced_quotes"
    if any(t in ARCHAIC_WORDS or t.lstrip("'") in ARCHAIC_WORDS for t in _ARCHAIC_TOKEN.findall(text.lower())):
        return text, "archaic"
    if PROFANITY.search(text):
        return text, "profanity"
    return text, None


# ---------------------------------------------------------------------------------------------------------------
# Readers: each yields passages, a sentence or running text to split, from one file.


@dataclass(frozen=True, slots=True)
class Passage:
    text: str
    split: bool = False  # running text: cut into sentences before cleaning
    reject: str | None = None  # the reader already knows it is no sentence (a DROP_REASONS entry)


def _read_lines(path: Path) -> Iterator[str]:
    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            yield line.rstrip("\n\r")


def read_tatoeba(path: Path) -> Iterator[Passage]:
    """Tatoeba's export: `id<TAB>lang<TAB>text[<TAB>…]` (sentences.csv, sentences_detailed.csv, eng_sentences.tsv);
    English (`eng`) rows only."""
    for line in _read_lines(path):
        parts = line.split("\t")
        if len(parts) >= 3 and parts[1] == "eng":
            yield Passage(parts[2])


def _pairs_lines(lines: Iterable[str]) -> Iterator[Passage]:
    for line in lines:
        english = line.split("\t", 1)[0]
        if english.strip():
            yield Passage(english)


def read_anki_pairs(path: Path) -> Iterator[Passage]:
    """manythings.org's Tatoeba pairs (`English<TAB>translation[<TAB>attribution]`), as `xxx.txt` or the
    `xxx-eng.zip` they come in (every `.txt` member but `_about.txt`)."""
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            for member in sorted(archive.namelist()):
                name = member.rsplit("/", 1)[-1]
                if member.startswith("__MACOSX/") or not name.endswith(".txt") or name.startswith("_"):
                    continue
                with archive.open(member) as raw:
                    yield from _pairs_lines(line.rstrip("\n\r") for line in io.TextIOWrapper(raw, encoding="utf-8"))
    else:
        yield from _pairs_lines(_read_lines(path))


def read_lines(path: Path) -> Iterator[Passage]:
    """Plain text, one sentence a line (Common Voice's sentence lists)."""
    for line in _read_lines(path):
        if line.strip() and not line.startswith("#"):
            yield Passage(line)


_SUBJECTS = frozenset("i you he she it we they this that there these those".split())
_VERB_CUES = frozenset(
    """is are was were be been being am has have had do does did will would shall should can could may might must
    isn't aren't wasn't weren't don't doesn't didn't won't can't couldn't wouldn't shouldn't hasn't haven't""".split()
)
_WORDNET_EXAMPLE = re.compile(r'"([^"]+)"')


def _wordnet_sentence(example: str) -> Passage:
    """A WordNet example as a sentence, or a `fragment` when it is only a phrase ("a strong wind"). WordNet
    capitalises its whole-sentence examples; a lowercase one is a clause when it starts with a subject pronoun
    or holds an auxiliary verb ("he ran away", "the team is a unit")."""
    text = example.strip().strip(";").strip()
    words = [w.lower() for w in _WORD.findall(text)]
    clause = text[:1].isupper() or (bool(words) and words[0] in _SUBJECTS) or any(w in _VERB_CUES for w in words)
    if len(words) < MIN_WORDS or not clause:
        return Passage(text, reject="fragment")
    text = text[0].upper() + text[1:]
    if not _END.search(text):
        text += "."
    return Passage(text)


def read_wordnet(path: Path) -> Iterator[Passage]:
    """WordNet 3.0 `data.noun|verb|adj|adv`: the quoted usage examples in each synset's gloss."""
    for line in _read_lines(path):
        if not line or line.startswith(" "):  # the licence header
            continue
        _, _, gloss = line.partition(" | ")
        for example in _WORDNET_EXAMPLE.findall(gloss):
            yield _wordnet_sentence(example)


_GUTENBERG_START = re.compile(r"^\*{3}\s*START OF (?:THE|THIS) PROJECT GUTENBERG E-?BOOK.*$", re.I | re.M)
_GUTENBERG_END = re.compile(
    r"^(?:\*{3}\s*END OF (?:THE|THIS) PROJECT GUTENBERG E-?BOOK|End of (?:the )?Project Gutenberg'?s?\b)", re.I | re.M
)
_GUTENBERG_BOILERPLATE = re.compile(
    r"^(?:produced by|e-?text prepared by|transcribed (?:from|by)|transcriber'?s note|this e-?book (?:is|was))",
    re.IGNORECASE,
)


def read_gutenberg(path: Path) -> Iterator[Passage]:
    """A Project Gutenberg plain-text book: the text between the START and END markers (the licence and the
    header stay out), cut into paragraphs at blank lines."""
    text = path.read_text(encoding="utf-8", errors="replace")
    start = _GUTENBERG_START.search(text)
    if start:
        text = text[start.end() :]
    end = _GUTENBERG_END.search(text)
    if end:
        text = text[: end.start()]
    for paragraph in re.split(r"\n\s*\n", text):
        paragraph = " ".join(paragraph.split())
        if paragraph and not _GUTENBERG_BOILERPLATE.match(paragraph):
            yield Passage(paragraph, split=True)


_XHTML = "{http://www.w3.org/1999/xhtml}"
_EPUB_TYPE = "{http://www.idpf.org/2007/ops}type"
_SKIP_EPUB_TYPES = ("noteref", "z3998:poem", "z3998:verse", "z3998:song", "z3998:hymn", "z3998:lyrics", "title")
_SKIP_TAGS = frozenset(f"{_XHTML}{t}" for t in ("header", "hgroup", "h1", "h2", "h3", "h4", "h5", "h6", "table"))
_STANDARD_EBOOKS_MATTER = re.compile(
    r"^(?:colophon|imprint|uncopyright|titlepage|halftitlepage|toc|loi|endnotes|dedication|epigraph|glossary|index"
    r"|bibliography|acknowledgments|copyright)(?:-\d+)?\.xhtml$"
)


def _skipped(element: ET.Element) -> bool:
    kinds = element.get(_EPUB_TYPE, "")
    return element.tag in _SKIP_TAGS or any(kind in kinds.split() for kind in _SKIP_EPUB_TYPES)


def _text_of(element: ET.Element) -> str:
    parts = [element.text or ""]
    for child in element:
        if child.tag == f"{_XHTML}br":
            parts.append(" ")
        elif not _skipped(child):
            parts.append(_text_of(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _paragraphs(element: ET.Element) -> Iterator[str]:
    for child in element:
        if _skipped(child):
            continue
        if child.tag == f"{_XHTML}p":
            yield _text_of(child)
        else:
            yield from _paragraphs(child)


def read_standard_ebooks(path: Path) -> Iterator[Passage]:
    """A Standard Ebooks source file (`src/epub/text/*.xhtml`): the prose paragraphs, without headings, verse,
    tables and note references; front and back matter (colophon, imprint, licence, contents…) is skipped."""
    if _STANDARD_EBOOKS_MATTER.match(path.name):
        return
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        log.warning("%s: not well-formed XHTML (%s); skipped", path, exc)
        return
    body = root.find(f"{_XHTML}body")
    for paragraph in _paragraphs(body if body is not None else root):
        if paragraph.strip():
            yield Passage(paragraph, split=True)


_TASKMASTER_TURN = re.compile(r"<[UA]>([^<\t]+)|\[[UA]\]([^\[<\t]+)")


def _taskmaster_turns(items: object) -> Iterator[Passage]:
    if isinstance(items, str):
        try:
            items = json.loads(items)
        except ValueError:
            return
    if isinstance(items, dict):
        items = [items]
    if not isinstance(items, list):
        return
    for turn in items:
        if isinstance(turn, dict) and isinstance(turn.get("text"), str):
            yield Passage(turn["text"], split=True)


def read_taskmaster(path: Path) -> Iterator[Passage]:
    """Google's Taskmaster dialogues: the `text` of every turn, from the dialog files (`utterances`), the reward
    files (`context` and `generation`, JSON inside JSON) and the TM-3 split files (`<U>`/`<A>` turns)."""
    if path.suffix == ".tsv":
        for line in _read_lines(path):
            for user, agent in _TASKMASTER_TURN.findall(line):
                yield Passage(user or agent, split=True)
        return
    data = json.loads(path.read_text(encoding="utf-8"))
    for item in data if isinstance(data, list) else [data]:
        if not isinstance(item, dict):
            continue
        yield from _taskmaster_turns(item.get("utterances"))
        yield from _taskmaster_turns(item.get("context"))
        yield from _taskmaster_turns(item.get("generation"))


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
    Source(
        name="tatoeba-manythings",
        licence="CC BY 2.0 FR",
        attribution="Sentence pairs from www.manythings.org/anki and tatoeba.org (Tatoeba contributors), CC BY 2.0 FR",
        url="https://www.manythings.org/anki/",
        patterns=("*/tatoeba-manythings/*.zip", "*/tatoeba-manythings/*.txt"),
        excludes=("*/_about.txt",),
        reader=read_anki_pairs,
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
    Source(
        name="gutenberg",
        licence="Public domain in the USA (Project Gutenberg texts, licence and trademark text removed)",
        attribution="Texts from Project Gutenberg (https://www.gutenberg.org), public domain in the USA",
        url="https://www.gutenberg.org/",
        patterns=("*/gutenberg/*.txt",),
        reader=read_gutenberg,
    ),
    Source(
        name="taskmaster",
        licence="CC BY 4.0",
        attribution="Taskmaster dialogues by Bill Byrne, Karthik Krishnamoorthi, Saravanan Ganesh and others, "
        "Google LLC, CC BY 4.0",
        url="https://github.com/google-research-datasets/Taskmaster",
        patterns=("*/taskmaster/*.json", "*/taskmaster/*.tsv"),
        excludes=("*/ontology/*", "*/sample.json"),
        reader=read_taskmaster,
    ),
    Source(
        name="common-voice",
        licence="CC0 1.0",
        attribution="Sentences from Mozilla Common Voice (https://commonvoice.mozilla.org), CC0 1.0",
        url="https://github.com/common-voice/common-voice",
        patterns=("*/common-voice/*.txt",),
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
            if last < len(piece) - 1 and piece[last - 1] == " " and _END.search(piece):
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
        return piece + '"' if _END.search(piece) else piece

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
        needs = [i for i, t in texts.items() if _SENTENCE_BREAK.search(t)]
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
