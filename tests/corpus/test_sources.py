"""The training corpus build: every file format on small files written here, each cleaning rule, deduplication,
the seeded order, the manifest's counts and the command line end to end. No network."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from corrige.corpus.cleaning import DROP_REASONS, clean_sentence, normalize
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
from corrige.corpus.sources import SOURCES, Splitter, build_corpus, discover, source_named

# ---------------------------------------------------------------------------------------------------------------
# Cleaning: one kept sentence and one sentence per drop reason.


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("Я люблю тебя, мой друг.", "characters"),
        ("The price is 5 * 3 dollars.", "characters"),
        ("Visit www.example.com for more news.", "url"),
        ("Write to me at https://example.org today.", "url"),
        ("He left the room (quietly) and went home.", "brackets"),
        ("She smiled at him.[12]", "brackets"),
        ("Go home.", "too_short"),
        (" ".join(["word"] * 61) + ".", "too_long"),
        ("THE END OF THE STORY IS NEAR.", "all_caps"),
        ("Chapter XII. The return.", "heading"),
        ("Part Two: the long road home.", "heading"),
        ("and then she left the house.", "lowercase_start"),
        ("I went to the market yesterday", "no_end_punctuation"),
        ('"I went to the market, she said.', "unbalanced_quotes"),
        ("Thou art a good friend to me.", "archaic"),
        ("'Tis a fine day for a walk.", "archaic"),
        ("He hath no money left at all.", "archaic"),
        ("This is a fucking disaster, he said.", "profanity"),
    ],
)
def test_each_drop_reason(raw: str, reason: str) -> None:
    assert reason in DROP_REASONS
    assert clean_sentence(raw)[1] == reason


@pytest.mark.parametrize(
    "raw",
    [
        "I have to go to sleep.",
        "Can you help me with my homework?",
        '"Where did you put the keys?" she asked.',
        "He said, \u201cI\u2019ll be back soon.\u201d",
        "Part of me wants to stay here.",
        "I had a caf\u00e9 au lait this morning with my sister.",
        "The meeting starts at 9:30 and ends at noon.",
    ],
)
def test_everyday_sentences_are_kept(raw: str) -> None:
    text, reason = clean_sentence(raw)
    assert reason is None, (raw, reason)
    assert text.isascii() or "\u00e9" in text


def test_normalize_quotes_dashes_and_spaces() -> None:
    assert normalize("\u201cWell\u2060\u2014I don\u2019t know\u2026\u201d  she\u00a0said .") == (
        '"Well - I don\'t know..." she said.'
    )


# ---------------------------------------------------------------------------------------------------------------
# Readers: one small file per format.


def test_read_tatoeba_keeps_english_rows(tmp_path: Path) -> None:
    path = tmp_path / "sentences.csv"
    path.write_text(
        "1\tcmn\t我們試試看！\n1276\teng\tLet's try something.\n1277\teng\tI have to go to sleep.\n2\tfra\tSalut.\n"
    )
    assert [p.text for p in read_tatoeba(path)] == ["Let's try something.", "I have to go to sleep."]


def test_read_anki_pairs_from_zip_and_text(tmp_path: Path) -> None:
    archive = tmp_path / "spa-eng.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("_about.txt", "Terms of use: CC BY 2.0\n")
        z.writestr("__MACOSX/._spa.txt", "junk")
        z.writestr("spa.txt", "Go.\tVe.\tCC-BY 2.0 (France)\nI am hungry.\tTengo hambre.\tCC-BY 2.0 (France)\n")
    assert [p.text for p in read_anki_pairs(archive)] == ["Go.", "I am hungry."]
    plain = tmp_path / "deu.txt"
    plain.write_text("Hi.\tHallo!\nWhere is the station?\tWo ist der Bahnhof?\n")
    assert [p.text for p in read_anki_pairs(plain)] == ["Hi.", "Where is the station?"]


def test_read_lines_skips_blank_and_comment_lines(tmp_path: Path) -> None:
    path = tmp_path / "sentences.txt"
    path.write_text("# a comment\nThe dog is sleeping.\n\nWe went to the beach.\n")
    assert [p.text for p in read_lines(path)] == ["The dog is sleeping.", "We went to the beach."]


WORDNET = (
    "  1 This software and database is being provided to you, the LICENSEE, by Princeton University.\n"
    '00001740 29 v 04 breathe 0 | draw air into, and expel out of, the lungs; "I can breathe better when the air is '
    'clean"; "The patient is breathing"\n'
    '00002325 29 v 01 respire 0 | undergo cellular respiration; "a strong wind"; "The shooting victim fell dead"\n'
)


def test_read_wordnet_examples_as_sentences(tmp_path: Path) -> None:
    path = tmp_path / "data.verb"
    path.write_text(WORDNET)
    passages = list(read_wordnet(path))
    assert [p.text for p in passages if p.reject is None] == [
        "I can breathe better when the air is clean.",
        "The patient is breathing.",
        "The shooting victim fell dead.",
    ]
    assert [p.text for p in passages if p.reject] == ["a strong wind"]
    assert [p.reject for p in passages if p.reject] == ["fragment"]


GUTENBERG = """The Project Gutenberg eBook of A Small Book

This eBook is for the use of anyone anywhere in the United States.

*** START OF THE PROJECT GUTENBERG EBOOK A SMALL BOOK ***

Produced by Some Volunteers

Chapter One: The Long Hill.

The children ran down the hill. They were
very happy that morning.

"Come back!" cried their mother.

*** END OF THE PROJECT GUTENBERG EBOOK A SMALL BOOK ***

Section 1. General Terms of Use and Redistributing Project Gutenberg-tm electronic works.
"""


def test_read_gutenberg_strips_header_and_footer(tmp_path: Path) -> None:
    path = tmp_path / "book.txt"
    path.write_text(GUTENBERG)
    texts = [p.text for p in read_gutenberg(path)]
    assert texts == [
        "Chapter One: The Long Hill.",
        "The children ran down the hill. They were very happy that morning.",
        '"Come back!" cried their mother.',
    ]
    assert all(p.split for p in read_gutenberg(path))


XHTML = """<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">
<head><title>I</title></head>
<body epub:type="bodymatter z3998:fiction">
<section id="chapter-1" epub:type="chapter">
<hgroup><h2 epub:type="ordinal z3998:roman">I</h2><p epub:type="title">The Cyclone</p></hgroup>
<p>Dorothy lived in the midst of the great Kansas prairies.<a href="endnotes.xhtml#note-1" id="noteref-1"
 epub:type="noteref">1</a> Her house was small.</p>
<blockquote epub:type="z3998:poem"><p><span>Twinkle, twinkle, little star,</span><br/><span>How I wonder.</span></p>
</blockquote>
<p>\u201cI\u2019m going home,\u201d said Dorothy.</p>
</section>
</body>
</html>
"""


def test_read_standard_ebooks_prose_only(tmp_path: Path) -> None:
    text_dir = tmp_path / "src" / "epub" / "text"
    text_dir.mkdir(parents=True)
    chapter = text_dir / "chapter-1.xhtml"
    chapter.write_text(XHTML, encoding="utf-8")
    texts = [" ".join(p.text.split()) for p in read_standard_ebooks(chapter)]
    assert texts == [
        "Dorothy lived in the midst of the great Kansas prairies. Her house was small.",
        "\u201cI\u2019m going home,\u201d said Dorothy.",
    ]
    colophon = text_dir / "colophon.xhtml"
    colophon.write_text(XHTML, encoding="utf-8")
    assert list(read_standard_ebooks(colophon)) == []


def test_read_taskmaster_dialogs_rewards_and_splits(tmp_path: Path) -> None:
    dialogs = tmp_path / "data_00.json"
    dialogs.write_text(
        json.dumps(
            [
                {
                    "conversation_id": "dlg-1",
                    "utterances": [
                        {"speaker": "user", "text": "I'd like a large latte, please."},
                        {"speaker": "assistant", "text": "Sure. Anything else?"},
                    ],
                }
            ]
        )
    )
    assert [p.text for p in read_taskmaster(dialogs)] == ["I'd like a large latte, please.", "Sure. Anything else?"]
    reward = tmp_path / "reward_00.json"
    context = json.dumps([{"role": "user", "text": "What movies are playing tonight?"}, {"role": "api"}])
    reward.write_text(json.dumps([{"context": context, "generation": json.dumps({"role": "agent", "text": "Hi."})}]))
    assert [p.text for p in read_taskmaster(reward)] == ["What movies are playing tonight?", "Hi."]
    split = tmp_path / "train-aa.tsv"
    split.write_text("<C><U>Do you have any movies today?<A>Yes, we have two.<PN>find_movies\t[A]Enjoy the film.\n")
    assert [p.text for p in read_taskmaster(split)] == [
        "Do you have any movies today?",
        "Yes, we have two.",
        "Enjoy the film.",
    ]


# ---------------------------------------------------------------------------------------------------------------
# Sentence splitting and dialogue mending.


def test_splitter_cuts_running_text_and_mends_dialogue() -> None:
    splitter = Splitter()
    passages = [
        Passage("I tapped the desk. \u201cI\u2019m not beaten. I\u2019ve won.\u201d", split=True),
        Passage("\u201cOh, dear!\u201d cried Dorothy. She sat down.", split=True),
        Passage("One sentence only, no split needed.", split=False),
    ]
    assert [p.text for p in splitter.sentences(passages)] == [
        "I tapped the desk.",
        "I'm not beaten.",
        "I've won.",
        '"Oh, dear!" cried Dorothy.',
        "She sat down.",
        "One sentence only, no split needed.",
    ]


# ---------------------------------------------------------------------------------------------------------------
# The registry and the build.


def _raw_tree(root: Path) -> Path:
    """One small file per source, laid out as the corpus's raw folder is."""
    (root / "tatoeba").mkdir(parents=True)
    (root / "tatoeba" / "eng_sentences.tsv").write_text(
        "1\teng\tI have to go to sleep.\n"
        "2\teng\ti have to go to sleep.\n"  # lowercase start: dropped before dedup
        "3\teng\tI HAVE TO GO TO SLEEP.\n"  # all caps
        "4\teng\tThe weather is nice today.\n"
        "5\teng\tthe weather is nice today.\n"
        "6\teng\tThe Weather Is Nice Today.\n"  # a case-insensitive duplicate
        "7\tdeu\tDas Wetter ist heute schön.\n"
    )
    (root / "common-voice").mkdir()
    (root / "common-voice" / "sentences.txt").write_text(
        "The weather is nice today.\n"  # read first (files go in path order): Tatoeba's copies are duplicates
        "My brother works in a hospital.\n"
        "Visit www.example.com now please.\n"
    )
    (root / "wordnet").mkdir()
    (root / "wordnet" / "data.verb").write_text(WORDNET)
    (root / "gutenberg").mkdir()
    (root / "gutenberg" / "book.txt").write_text(GUTENBERG)
    text_dir = root / "standard-ebooks" / "l-frank-baum_oz" / "src" / "epub" / "text"
    text_dir.mkdir(parents=True)
    (text_dir / "chapter-1.xhtml").write_text(XHTML, encoding="utf-8")
    (root / "standard-ebooks" / "l-frank-baum_oz" / "LICENSE.md").write_text("CC0")
    (root / "taskmaster").mkdir()
    (root / "taskmaster" / "data_00.json").write_text(
        json.dumps([{"utterances": [{"text": "Can I get two coffees to go, please? Thank you so much."}]}])
    )
    (root / "tatoeba-manythings").mkdir()
    with zipfile.ZipFile(root / "tatoeba-manythings" / "spa-eng.zip", "w") as z:
        z.writestr("_about.txt", "CC BY 2.0\n")
        z.writestr("spa.txt", "I am very hungry now.\tAhora tengo mucha hambre.\nThou art kind.\tEres amable.\n")
    return root


def test_discover_assigns_each_file_to_its_source(tmp_path: Path) -> None:
    root = _raw_tree(tmp_path / "raw")
    claimed, unclaimed = discover([root])
    owners = {path.relative_to(root).as_posix(): source.name for path, source in claimed}
    assert owners == {
        "common-voice/sentences.txt": "common-voice",
        "gutenberg/book.txt": "gutenberg",
        "standard-ebooks/l-frank-baum_oz/src/epub/text/chapter-1.xhtml": "standard-ebooks",
        "taskmaster/data_00.json": "taskmaster",
        "tatoeba-manythings/spa-eng.zip": "tatoeba-manythings",
        "tatoeba/eng_sentences.tsv": "tatoeba",
        "wordnet/data.verb": "wordnet",
    }
    assert [p.relative_to(root).as_posix() for p in unclaimed] == ["standard-ebooks/l-frank-baum_oz/LICENSE.md"]
    assert {s.name for s in SOURCES} >= set(owners.values())
    assert source_named("tatoeba").licence == "CC BY 2.0 FR"


class _Recorder:
    def __init__(self) -> None:
        self.total = self.files = 0
        self.advanced: list[str] = []

    def start(self, total_bytes: int, files: int) -> None:
        self.total, self.files = total_bytes, files

    def advance(self, path: Path, nbytes: int) -> None:
        self.advanced.append(path.name)


def test_build_counts_dedups_and_writes_manifest(tmp_path: Path) -> None:
    root = _raw_tree(tmp_path / "raw")
    recorder = _Recorder()
    manifest = build_corpus([root], tmp_path / "out", seed=7, progress=recorder)
    sentences = (tmp_path / "out" / "sentences.txt").read_text().splitlines()
    assert sorted(sentences) == sorted(
        [
            "I have to go to sleep.",
            "The weather is nice today.",
            "My brother works in a hospital.",
            "I can breathe better when the air is clean.",
            "The patient is breathing.",
            "The shooting victim fell dead.",
            "The children ran down the hill.",
            "They were very happy that morning.",
            '"Come back!" cried their mother.',
            "Dorothy lived in the midst of the great Kansas prairies.",
            "Her house was small.",
            '"I\'m going home," said Dorothy.',
            "Can I get two coffees to go, please?",
            "Thank you so much.",
            "I am very hungry now.",
        ]
    )
    assert len(set(s.casefold() for s in sentences)) == len(sentences)
    on_disk = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert on_disk == manifest
    by_name = {s["name"]: s for s in manifest["sources"]}
    assert by_name["tatoeba"]["candidates"] == 6
    assert by_name["tatoeba"]["kept"] == 1
    assert by_name["tatoeba"]["dropped"] == {"all_caps": 1, "lowercase_start": 2, "duplicate": 2}
    assert by_name["common-voice"]["kept"] == 2
    assert by_name["common-voice"]["dropped"] == {"url": 1}
    assert by_name["wordnet"]["dropped"] == {"fragment": 1}
    assert by_name["gutenberg"]["dropped"] == {"heading": 1}
    assert by_name["tatoeba-manythings"]["dropped"] == {"archaic": 1}
    assert by_name["standard-ebooks"]["licence"].startswith("Public domain in the USA")
    assert by_name["taskmaster"]["attribution"].startswith("Taskmaster dialogues")
    for source in manifest["sources"]:
        assert source["candidates"] == source["kept"] + source["dropped_total"]
        assert len(source["files"]) == 1
    totals = manifest["totals"]
    assert totals["kept"] == len(sentences) == sum(s["kept"] for s in manifest["sources"])
    assert totals["dropped"]["duplicate"] == 2
    assert totals["unclaimed_files"] == 1
    assert recorder.files == 7 and len(recorder.advanced) == 7
    assert recorder.total == sum(p.stat().st_size for p, _ in discover([root])[0])
    assert not (tmp_path / "out" / ".buckets").exists()


def test_build_order_depends_on_the_seed_only(tmp_path: Path) -> None:
    root = _raw_tree(tmp_path / "raw")
    first = build_corpus([root], tmp_path / "a", seed=1)
    # the same files given in another order, twice over: the same bytes
    again = build_corpus(sorted(root.iterdir(), reverse=True), tmp_path / "b", seed=1)
    other = build_corpus([root], tmp_path / "c", seed=2)
    a = (tmp_path / "a" / "sentences.txt").read_text()
    assert a == (tmp_path / "b" / "sentences.txt").read_text()
    assert first["sha256"] == again["sha256"]
    c = (tmp_path / "c" / "sentences.txt").read_text()
    assert a != c and sorted(a.splitlines()) == sorted(c.splitlines())
    assert first["sha256"] != other["sha256"]


def test_cli_build_end_to_end(tmp_path: Path) -> None:
    from corrige.cli import app

    root = _raw_tree(tmp_path / "raw")
    out = tmp_path / "corpus"
    result = CliRunner().invoke(app, ["corpus", "build", str(root), "--out", str(out), "--seed", "3"])
    assert result.exit_code == 0, result.output
    assert "tatoeba" in result.output and "total" in result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["seed"] == 3
    assert manifest["totals"]["kept"] == len((out / "sentences.txt").read_text().splitlines()) == 15
    missing = CliRunner().invoke(app, ["corpus", "build", str(tmp_path / "nowhere"), "--out", str(out)])
    assert missing.exit_code != 0
    listing = CliRunner().invoke(app, ["corpus", "sources"])
    assert listing.exit_code == 0 and "standard-ebooks" in listing.output
