"""docs/ARCHITECTURE.md names only what exists.

Every `corrige/....py` path it mentions is a file; every `corrige/x.py: name` (or
`: Class.attr`) is defined in that file (read with `ast`, never imported); every dotted module
`corrige.x.y` (or `corrige.x.y:attr`) is a module of the package, or a name defined or imported
at the top of one; every bare `Class.attr` is a class of the package with that member (its own,
or one of its bases'), and every bare `Class` a class of the package; in a diagram (a fenced
block), every `Class.attr` likewise and every snake_case name a name defined in the package.
Renaming a module, function, class or method the page names fails here
until the page follows. The import layers it states are those of pyproject.toml's layers
contract, in the same order.
"""

from __future__ import annotations

import ast
import functools
import re
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "ARCHITECTURE.md"
PACKAGE = REPO / "corrige"

PATH = re.compile(r"corrige/[\w/]+\.py")
NAMED = re.compile(r"`(corrige/[\w/]+\.py):\s*([\w.]+)`")
DOTTED = re.compile(r"(?<![\w/.])corrige(?:\.\w+)+(?::\w+)?")
MEMBER = re.compile(r"`([A-Z]\w*)\.(\w+)`")
CLASS = re.compile(r"`([A-Z][a-z]\w*)`")  # `Engine`, `RequestMeta` (not `MAX_WAITING`, a setting)
FENCED = re.compile(r"^```\w*\n(.*?)^```", re.S | re.M)
DRAWN_MEMBER = re.compile(r"\b([A-Z]\w*)\.(\w+)")  # in a diagram: EngineCore.step
DRAWN_NAME = re.compile(r"(?<![\w./-])(_*[a-z]\w*_\w*)")  # in a diagram: child_main, _read_requests


def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


@functools.cache
def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def assigned(node: ast.stmt) -> list[str]:
    """Names bound by an assignment statement (plain names only)."""
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def defined(body: list[ast.stmt]) -> dict[str, ast.stmt]:
    """The functions, classes and variables a module or class body defines (imports not included)."""
    names: dict[str, ast.stmt] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = node
        for name in assigned(node):
            names[name] = node
    return names


def imported(body: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
    return names


def missing_in_file(path: Path, name: str) -> str | None:
    """None when `name` (`func`, `Class`, `Class.attr`, `VAR`) is defined in `path`, else why not."""
    scope = defined(parsed(path).body)
    head, *rest = name.split(".")
    if head not in scope:
        return f"no {head!r} defined at the top of {path.relative_to(REPO)}"
    node = scope[head]
    for part in rest:
        if not isinstance(node, ast.ClassDef) or part not in (members := defined(node.body)):
            return f"no {part!r} in {head} of {path.relative_to(REPO)}"
        node = members[part]
    return None


def module_file(dotted: str) -> Path | None:
    base = REPO.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def missing_module(reference: str) -> str | None:
    """None when `corrige.a.b` is a module, or `corrige.a.b.name` / `corrige.a.b:name` a name of one."""
    dotted, _, attr = reference.partition(":")
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        path = module_file(".".join(parts[:cut]))
        if path is None:
            continue
        rest = parts[cut:] + ([attr] if attr else [])
        if not rest:
            return None
        body = parsed(path).body
        if len(rest) == 1 and rest[0] in imported(body):
            return None
        return missing_in_file(path, ".".join(rest))
    return f"no module {dotted}"


@functools.cache
def name_index() -> frozenset[str]:
    """Every function, class, method and variable name defined anywhere in the package."""
    names: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(parsed(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.stmt):
                names.update(assigned(node))
    return frozenset(names)


@functools.cache
def class_index() -> dict[str, list[ast.ClassDef]]:
    index: dict[str, list[ast.ClassDef]] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.ClassDef):
                index.setdefault(node.name, []).append(node)
    return index


def class_has(name: str, attr: str, seen: frozenset[str] = frozenset()) -> bool:
    """A class of the package called `name` defines `attr`, itself or through a base of the package."""
    for node in class_index().get(name, []):
        if attr in defined(node.body):
            return True
        for base in node.bases:
            base_name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", None)
            if base_name and base_name not in seen and class_has(base_name, attr, seen | {name}):
                return True
    return False


def problems(text: str) -> list[str]:
    """Everything `text` names that does not exist."""
    found = []
    for path in sorted(set(PATH.findall(text))):
        if not (REPO / path).is_file():
            found.append(f"{path}: no such file")
    for path, name in sorted(set(NAMED.findall(text))):
        if (REPO / path).is_file() and (why := missing_in_file(REPO / path, name)):
            found.append(f"{path}: {name}: {why}")
    for reference in sorted(set(DOTTED.findall(text))):
        if why := missing_module(reference):
            found.append(f"{reference}: {why}")
    diagrams = "\n".join(FENCED.findall(text))
    members = set(MEMBER.findall(text)) | set(DRAWN_MEMBER.findall(diagrams))
    for cls, attr in sorted(members):
        if cls not in class_index():
            found.append(f"{cls}.{attr}: no class {cls} in corrige/")
        elif not class_has(cls, attr):
            found.append(f"{cls}.{attr}: {cls} has no {attr!r}")
    for cls in sorted(set(CLASS.findall(text)) - set(class_index())):
        found.append(f"{cls}: no class {cls} in corrige/")
    for name in sorted(set(DRAWN_NAME.findall(diagrams)) - name_index()):
        found.append(f"{name} (in a diagram): defined nowhere in corrige/")
    return found


def test_every_module_and_name_the_page_names_exists():
    found = problems(doc_text())
    assert not found, "docs/ARCHITECTURE.md names what does not exist:\n" + "\n".join(found)


def test_the_page_names_files_functions_and_modules():
    """The patterns still find what the page names (a page reworded past them would check nothing)."""
    text = doc_text()
    assert len(set(PATH.findall(text))) >= 40
    assert len(set(NAMED.findall(text))) >= 60
    assert len(set(DOTTED.findall(text))) >= 10
    assert len(set(MEMBER.findall(text))) >= 20


@pytest.mark.parametrize(
    "reference",
    [
        "`corrige/server/service.py: CorrectionService.no_such_stage`",
        "`corrige/server/service.py: no_such_function`",
        "`corrige/engine/no_such_module.py: Engine`",
        "`corrige.engine.no_such_module`",
        "`corrige.server.app:no_such_factory`",
        "`EngineProcess.no_such_method`",
        "`NoSuchClass.run`",
        "`NoSuchClass`",
        "```text\nclient → EngineCore.no_such_step\n```\n",
        "```text\nclient → no_such_function\n```\n",
    ],
)
def test_a_renamed_module_or_function_is_caught(reference):
    assert problems(f"The request goes through\n{reference}")


@pytest.mark.parametrize(
    "reference",
    [
        "`corrige/server/pipeline.py: CorrectionPipeline.prepare`",
        "`corrige/engine/child.py: PipeOutput`",
        "`corrige.server.app:app_from_env`",
        "`corrige.engine.Engine`",  # imported into the package
        "`EngineProcess.generate`",  # inherited from FrontEnd
        "`RequestMeta`",
        "```text\nclient → EngineCore.step → _read_requests\n```\n",
    ],
)
def test_what_exists_passes(reference):
    assert problems(f"The request goes through\n{reference}") == []


def test_the_import_layers_are_the_contracts():
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    [layers] = [c for c in contracts if c["type"] == "layers"]
    text = doc_text()
    section = text[text.index("## Import layers") :]
    positions = []
    for layer in layers["layers"]:
        assert f"`{layer}`" in section, f"the layer {layer!r} of pyproject.toml is not stated in docs/ARCHITECTURE.md"
        positions.append(section.index(f"`{layer}`"))
    assert positions == sorted(positions), "docs/ARCHITECTURE.md states the layers in another order than pyproject.toml"
    for ignored in layers.get("ignore_imports", []):
        importer, _, target = (part.strip() for part in ignored.partition("->"))
        assert f"`{importer}`" in section and f"`{target}`" in section, f"the exception {ignored!r} is not stated"
    forbidden = {m for c in contracts if c["type"] == "forbidden" for m in c["forbidden_modules"]}
    unstated = sorted(m for m in forbidden if m not in section)
    assert not unstated, f"forbidden imports not stated in docs/ARCHITECTURE.md: {unstated}"
