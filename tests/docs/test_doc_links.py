"""Links between the pages: every relative link of README.md and docs/*.md reaches a file, and a
`#section` a heading of that page (GitHub's anchors); the README's "Where to read more" names
every page of docs/. Moving a section from one page to another fails here until the links follow.
"""

from __future__ import annotations

import re
from pathlib import Path

from doc_support import DOCS, REPO

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*```")


def prose(path: Path) -> list[tuple[int, str]]:
    """The page's lines outside fenced blocks, numbered from 1."""
    lines, fenced = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append((number, line))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: its text, lower case, without punctuation, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for _, line in prose(path):
        if heading := HEADING.match(line):
            base = slug(heading[2])
            name, n = base, 0
            while name in found:  # a repeated heading gets -1, -2, …
                n += 1
                name = f"{base}-{n}"
            found.add(name)
    return found


def links(path: Path) -> list[tuple[int, str]]:
    """(line, target) of every link to another file or a section, not to the web."""
    out = []
    for number, line in prose(path):
        for target in LINK.findall(re.sub(r"`[^`]*`", "``", line)):
            if not re.match(r"[a-z]+:", target):
                out.append((number, target))
    return out


def broken(path: Path, root: Path = REPO) -> list[str]:
    """The links of `path` (a page under `root`) that reach no file, or no section of it."""
    found = []
    for number, target in links(path):
        file, _, anchor = target.partition("#")
        goal = (path.parent / file).resolve() if file else path
        where = f"{path.relative_to(root)}:{number}: {target}"
        if not goal.exists():
            found.append(f"{where}: no such file")
        elif anchor and goal.suffix == ".md" and anchor not in anchors(goal):
            found.append(f"{where}: no such section in {goal.relative_to(root)}")
    return found


def test_every_link_reaches_its_file_and_section():
    found = [problem for page in DOCS for problem in broken(page)]
    assert not found, "links that lead nowhere:\n" + "\n".join(found)
    assert sum(len(links(page)) for page in DOCS) > 50  # the pattern still finds the pages' links


def test_a_moved_section_is_caught(tmp_path):
    root = tmp_path.resolve()
    (root / "other.md").write_text("# Other\n\n## Texts sent again\n\n```\n## Not a heading\n```\n")
    page = "[a](other.md#texts-sent-again) [b](other.md#not-a-heading) [c](gone.md) `[d](x.md)`\n"
    (root / "page.md").write_text(page)
    assert broken(root / "page.md", root) == [
        "page.md:1: other.md#not-a-heading: no such section in other.md",
        "page.md:1: gone.md: no such file",
    ]


def test_slugs_are_githubs():
    assert slug("LanguageTool's API") == "languagetools-api"
    assert slug("Real learners' writing: how the reader model was made") == (
        "real-learners-writing-how-the-reader-model-was-made"
    )
    assert slug("Import layers, as `make lint` checks them") == "import-layers-as-make-lint-checks-them"
    assert slug("Whole texts (`corrige bench text`)") == "whole-texts-corrige-bench-text"


def test_the_readme_points_to_every_docs_page():
    readme = REPO / "README.md"
    text = readme.read_text(encoding="utf-8")
    more = text[text.index("## Where to read more") :]
    named = {target.partition("#")[0] for target in LINK.findall(more)}
    pages = {f"docs/{page.name}" for page in sorted((REPO / "docs").glob("*.md"))}
    assert pages - named == set(), "docs pages the README's 'Where to read more' does not list"
