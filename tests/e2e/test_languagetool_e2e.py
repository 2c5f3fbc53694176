"""LanguageTool's API with the real `language_tool_python` client against a real uvicorn server:
for learner texts (paragraphs of learner sentences and hand-written emails), `check()` gives the
same edits (offset, length, replacement) as `POST /v1/grammar/correct` with `text`, and every
match points at its text. The client is given `remote_server`, so it never starts or downloads
LanguageTool; it reads `/v2/languages` first."""

from __future__ import annotations

import csv
from pathlib import Path

import httpx
import language_tool_python
import pytest

import corrige.tutor

TUTOR = Path(corrige.tutor.__file__).parent

EMAILS = [
    "Dear Mrs. Brown,\n\nYesterday I goed to the beach with my family.  My father work in a factory.\n"
    "I have 25 years and I am teacher.\n\nBest regards,\nAna",
    "Hi Tom,\nThanks for your email! Last week I buyed a new phone, e.g. a cheap one. "
    "It costed 3.50 euros... no, 350. People is very friendly here.\n\nSee you soon,\nLuis",
    "Hello,\n\n1. The hotel was in the centre of the city.\n2. Is raining every day since we arrived.\n"
    "3. My sister don't like the food.\n\nCheers 😀, Marta",
    'Dear Sir or Madam,\nI am writing to ask about the course. "Is it expensive?" I asked my friend. '
    "She said me that is not expensive. I want to improve my english.\nYours faithfully,\nJavier Gómez",
    "Hi!\nMr. Smith teached us a lot at 19.30 yesterday. I am agree with you: the life is hard. "
    "We was very tired after the trip.\nBye",
]


def column(path: Path, name: str, where=lambda row: True) -> list[str]:
    with path.open(encoding="utf-8", newline="") as f:
        return [row[name] for row in csv.DictReader(f, delimiter="\t") if where(row)]


def learner_texts() -> list[str]:
    """Paragraphs of four learner sentences (joined by a space, a line break or two spaces), and the emails."""
    sentences = column(TUTOR / "realistic.tsv", "source")
    sentences += column(TUTOR / "learner_dev.tsv", "source", lambda row: row["half"] == "test")[:100]
    joints = [" ", "\n", "  "]
    texts = [joints[i % 3].join(sentences[i * 4 : i * 4 + 4]) for i in range(len(sentences) // 4)]
    return texts + EMAILS


TEXTS = learner_texts()


@pytest.fixture(scope="module")
def tool(server):
    lt = language_tool_python.LanguageTool("en-US", remote_server=server.url)
    try:
        yield lt
    finally:
        lt.close()


def v1_edits(url: str, text: str) -> list[tuple[int, int, str]]:
    response = httpx.post(f"{url}/v1/grammar/correct", json={"text": text, "rules": False}, timeout=60)
    assert response.status_code == 200, response.text
    return [(e["offset"], e["length"], e["replacement"]) for e in response.json()["edits"]]


def test_there_are_enough_texts_and_they_are_texts():
    assert len(TEXTS) >= 50
    assert all(len(t) > 80 for t in TEXTS)


def test_check_returns_the_grammar_apis_edits_for_every_text(server, tool):
    found = 0
    for text in TEXTS:
        matches = tool.check(text)
        got = [(m.offset, m.error_length, m.replacements[0]) for m in matches]
        assert got == v1_edits(server.url, text), text
        for m in matches:
            assert len(m.replacements) == 1
            assert m.rule_id.startswith("CORRIGE_") and m.category and m.rule_issue_type
            assert text[m.offset : m.offset + m.error_length] == m.matched_text, text
            assert m.sentence and m.sentence in text
        found += len(matches)
    assert found >= 30, f"only {found} matches over {len(TEXTS)} texts: the comparison would say little"


def test_applying_the_matches_gives_the_grammar_apis_correction(server, tool):
    text = EMAILS[0]
    corrected = httpx.post(f"{server.url}/v1/grammar/correct", json={"text": text, "rules": False}, timeout=60)
    assert tool.correct(text) == corrected.json()["corrected"]
    assert tool.correct(text) != text


def test_the_client_reads_the_servers_languages(server, tool):
    assert str(tool.language) == "en-US"
    with pytest.raises(ValueError):
        language_tool_python.LanguageTool("de-DE", remote_server=server.url)
