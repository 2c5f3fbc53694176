"""The fenced code blocks of README.md and docs/*.md, as the tests that run them read them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\S*)\s*$")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"

    def lines(self) -> list[str]:
        return self.text.splitlines()


def blocks(path: Path) -> list[Block]:
    """Every fenced block of a markdown file, in order."""
    found: list[Block] = []
    opened: tuple[int, str] | None = None
    body: list[str] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fence = FENCE.match(line)
        if opened is None and fence:
            opened, body = (number, fence[1]), []
        elif opened is not None and line.rstrip() == "```":
            found.append(Block(path, opened[0], opened[1], "\n".join(body) + "\n"))
            opened = None
        elif opened is not None:
            body.append(line)
    assert opened is None, f"{path}:{opened[0]}: a fence that is never closed"
    return found


def block_with(path: Path, needle: str) -> Block:
    """The one block of `path` that contains `needle`."""
    matches = [b for b in blocks(path) if needle in b.text]
    assert len(matches) == 1, f"{path.name}: {len(matches)} blocks contain {needle!r}, the test needs exactly one"
    return matches[0]
