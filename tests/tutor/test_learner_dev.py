"""Shape of the hand-written learner dev set (corrige/tutor/learner_dev.tsv) and of the counts
that learner_dev.md reports for it."""

import re
from collections import Counter
from pathlib import Path

import pytest

import corrige.tutor

TUTOR_DIR = Path(corrige.tutor.__file__).parent
TSV_PATH = TUTOR_DIR / "learner_dev.tsv"
MD_PATH = TUTOR_DIR / "learner_dev.md"

HEADER = ["source", "reference", "genre", "half"]
GENRES = {"email", "letter", "story", "essay", "review", "message", "report"}
HALVES = {"tune", "test"}


@pytest.fixture(scope="module")
def lines():
    text = TSV_PATH.read_text(encoding="utf-8")
    assert "\r" not in text, "line endings must be \\n"
    assert text.endswith("\n")
    return text[:-1].split("\n")


@pytest.fixture(scope="module")
def rows(lines):
    out = []
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        assert len(fields) == len(HEADER), f"line {number}: {len(fields)} fields"
        out.append(dict(zip(HEADER, fields, strict=True)))
    return out


def is_correct(row):
    return row["source"] == row["reference"]


def test_header(lines):
    assert lines[0].split("\t") == HEADER


def test_size(rows):
    assert len(rows) >= 440


def test_fields_are_clean(rows):
    for row in rows:
        for name, value in row.items():
            assert value == value.strip(), (name, value)
            assert value, (name, row)
            assert "\t" not in value and "\n" not in value and "\r" not in value


def test_genres_and_halves(rows):
    assert {row["genre"] for row in rows} == GENRES
    assert {row["half"] for row in rows} == HALVES


def test_source_length(rows):
    for row in rows:
        assert 5 <= len(row["source"].split()) <= 40, row["source"]


def test_share_of_correct_rows(rows):
    share = sum(map(is_correct, rows)) / len(rows)
    assert 0.30 <= share <= 0.40, share


def test_halves_are_balanced(rows):
    by_half = {half: [row for row in rows if row["half"] == half] for half in HALVES}
    assert abs(len(by_half["tune"]) - len(by_half["test"])) <= 5
    shares = {half: sum(map(is_correct, part)) / len(part) for half, part in by_half.items()}
    assert abs(shares["tune"] - shares["test"]) <= 0.05, shares


def test_no_duplicate_sources(rows):
    duplicates = [source for source, n in Counter(row["source"] for row in rows).items() if n > 1]
    assert not duplicates


def test_markdown_counts_match_the_file(rows):
    md = MD_PATH.read_text(encoding="utf-8")

    def count(label):
        match = re.search(rf"^- {re.escape(label)}: (\d+)", md, flags=re.MULTILINE)
        assert match, f"no '{label}' line in {MD_PATH.name}"
        return int(match.group(1))

    n_correct = sum(map(is_correct, rows))
    assert count("Rows") == len(rows)
    assert count("Correct rows (source == reference)") == n_correct
    assert count("Rows with errors") == len(rows) - n_correct
    share = re.search(r"^- Correct rows \(source == reference\): \d+ \((\d+\.\d)%\)", md, flags=re.MULTILINE)
    assert share and float(share.group(1)) == round(100 * n_correct / len(rows), 1)

    genre_table = {
        m.group(1): tuple(map(int, m.group(2, 3, 4, 5)))
        for m in re.finditer(r"^\| (\w+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", md, flags=re.MULTILINE)
    }
    assert set(genre_table) == GENRES
    for genre, (n, correct, tune, test) in genre_table.items():
        part = [row for row in rows if row["genre"] == genre]
        assert n == len(part), genre
        assert correct == sum(map(is_correct, part)), genre
        assert tune == sum(row["half"] == "tune" for row in part), genre
        assert test == sum(row["half"] == "test" for row in part), genre

    half_table = {
        m.group(1): (int(m.group(2)), int(m.group(3)))
        for m in re.finditer(r"^\| (tune|test) \| (\d+) \| (\d+) \(", md, flags=re.MULTILINE)
    }
    assert set(half_table) == HALVES
    for half, (n, correct) in half_table.items():
        part = [row for row in rows if row["half"] == half]
        assert n == len(part), half
        assert correct == sum(map(is_correct, part)), half
