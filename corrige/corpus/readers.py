"""The corpus's readers: each yields passages (a sentence, or running text to split) from one
downloaded file of its source's format."""

from __future__ import annotations

import io
import json
import logging
import re
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from corrige.corpus.cleaning import MIN_WORDS, SENTENCE_END, WORD

log = logging.getLogger(__name__)


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
    words = [w.lower() for w in WORD.findall(text)]
    clause = text[:1].isupper() or (bool(words) and words[0] in _SUBJECTS) or any(w in _VERB_CUES for w in words)
    if len(words) < MIN_WORDS or not clause:
        return Passage(text, reject="fragment")
    text = text[0].upper() + text[1:]
    if not SENTENCE_END.search(text):
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
