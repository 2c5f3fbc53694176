"""`corrige … --help`, rendered by the real app: flags read `--x / --no-x` with no `<bool>` tag,
defaults are shown, and `serve`'s defaults are the server's settings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from corrige.cli import app
from corrige.server.settings import Settings
from corrige.tutor.agent import BUNDLED_MODEL

ROOT = typer.main.get_command(app)
REPO = Path(__file__).resolve().parents[2]


def commands(group=ROOT, path: tuple[str, ...] = ()):
    """(path, command) for every command and group of the app (typer's own click: no isinstance on `click`)."""
    yield path, group
    if hasattr(group, "commands"):
        for name, command in group.commands.items():
            yield from commands(command, (*path, name))


ALL = list(commands())


def squash(text: str) -> str:
    """Without whitespace: click wraps help at spaces and after hyphens."""
    return "".join(text.split())


def help_text(path: tuple[str, ...]) -> str:
    """The rendered help, squashed."""
    result = CliRunner().invoke(app, [*path, "--help"], terminal_width=100)
    assert result.exit_code == 0, result.output
    return squash(result.output)


def options(command) -> list:
    return [p for p in command.params if p.param_type_name == "option" and p.name != "help"]


def default_shown(option) -> str:
    """What `[default: …]` should say: the value, or for a pair of flags the name of the one that is on."""
    if option.is_flag and option.secondary_opts:
        return (option.opts[0] if option.default else option.secondary_opts[0]).removeprefix("--")
    return str(option.default)


def test_every_command_is_checked():
    names = {" ".join(path) for path, _ in ALL}
    assert {"", "correct", "serve", "bench", "bench load", "rules search", "traces audit"} <= names


@pytest.mark.parametrize("path", [path for path, _ in ALL], ids=lambda p: " ".join(p) or "corrige")
def test_help_has_no_type_tag_on_flags_and_shows_defaults(path):
    command = dict(ALL)[path]
    text = help_text(path)
    assert "<bool>" not in text
    for option in options(command):
        if option.secondary_opts:  # a pair of flags reads as one: --x / --no-x
            assert squash(f"{option.opts[0]} / {option.secondary_opts[0]}") in text, option.name
        shown = option.default not in (None, "") and option.show_default
        if shown and not (option.is_flag and not option.secondary_opts):  # click shows no default of a lone flag
            shown = squash(f"[default: {default_shown(option)}")  # then `]`, or `;` and a range
            assert shown + "]" in text or shown + ";" in text, option.name


def _default(field: str):
    value = Settings.model_fields[field].default
    return getattr(value, "value", value)  # an enum: its value


# `--replicas` and its companions shape the Ray Serve deployment, not one server: no setting each
DEPLOYMENT_OPTIONS = {"replicas", "max_replicas", "metrics_port"}


def test_serve_help_states_each_settings_default_and_variable():
    serve = dict(ALL)[("serve",)]
    text = help_text(("serve",))
    seen = set()
    for option in options(serve):
        if option.name in DEPLOYMENT_OPTIONS:
            continue
        found = re.search(r"\[default: (.+); env: CORRIGE_(\w+)\]$", option.help)
        assert found, f"--{option.name}: no default and variable in {option.help!r}"
        shown, field = found[1], found[2].lower()
        assert field in Settings.model_fields, f"--{option.name}: no setting {field}"
        seen.add(field)
        assert squash(f"[default: {shown}; env: CORRIGE_{found[2]}]") in text
        default = _default(field)
        if isinstance(default, bool):
            assert shown == (option.opts[0] if default else option.secondary_opts[0]).removeprefix("--")
        elif default is None and field == "database_url":  # none: the learner records stay in SQLite
            assert shown == "SQLite at PORTAL_DB"
        elif default is None:  # the model: the bundled one
            assert field == "model_dir" and shown.endswith(str(BUNDLED_MODEL.relative_to(REPO)))
        elif isinstance(default, int | float):
            assert float(shown) == default, f"--{option.name}: help says {shown}, Settings {default}"
        else:
            assert shown == str(default)
    assert {"host", "port", "model_dir", "rate_limit", "engine_process", "access_log"} <= seen


def test_the_default_model_is_named_exactly():
    """Every --model that defaults to nothing says which model that is: the reader model, not corrige/models/tutor."""
    bundled = str(BUNDLED_MODEL.relative_to(REPO))
    assert bundled == "corrige/models/reader"
    with_model = [
        path for path, command in ALL if any(o.name == "model" and o.default is None for o in options(command))
    ]
    assert {("correct",), ("serve",), ("bench", "load"), ("bench", "http"), ("capacity",)} <= set(with_model)
    for path in with_model:
        if path == ("eval",):  # `corrige eval` is changed elsewhere
            continue
        (option,) = [o for o in options(dict(ALL)[path]) if o.name == "model"]
        assert "[default: " in option.help, path
        if "bundled" in option.help:
            assert f"[default: the bundled reader model, {bundled}" in option.help, path
        assert "bundled tutor" not in option.help, path  # reads like corrige/models/tutor, the other model


def test_the_configuration_table_agrees_with_serve_help():
    """Each row of docs/configuration.md's table with a `corrige serve` option: the same variable and default as
    `--help`."""
    serve = dict(ALL)[("serve",)]
    helps = {opt: option.help for option in options(serve) for opt in option.opts}
    rows = re.findall(
        r"^\| `(\w+)` \| `(--[\w-]+)[^|]*\| ([^|]+) \|", (REPO / "docs" / "configuration.md").read_text(), re.M
    )
    assert len(rows) >= 10, rows
    for name, opt, default in rows:
        found = re.search(r"\[default: (.+); env: CORRIGE_(\w+)\]$", helps[opt])
        assert found and found[2] == name, f"{opt}: the table says CORRIGE_{name}, --help {helps[opt]!r}"
        shown, default = found[1], default.strip().strip("`")
        if default in ("on", "off"):
            option = next(o for o in options(serve) if opt in o.opts)
            assert shown == (option.opts[0] if default == "on" else option.secondary_opts[0]).removeprefix("--")
        else:
            assert shown.endswith(default), f"{opt}: the table's default {default!r}, --help {shown!r}"
