"""The settings tables against the settings class: the server's configuration table
(docs/configuration.md) and the portal's own (docs/portal.md) name every `Settings` field once, and
nothing that is not one."""

from __future__ import annotations

import re

from doc_support import REPO

from corrige.server.settings import Settings

ROW = re.compile(r"^\| `([A-Z0-9_]+)` \|", re.M)


def table_rows(text: str, heading: str) -> list[str]:
    """The setting names of the first table after `heading`."""
    after = text[text.index(heading) :]
    table = after[after.index("\n|") :].split("\n\n", 1)[0]
    return ROW.findall(table)


def test_every_setting_is_in_a_settings_table_and_every_row_is_a_setting():
    server = table_rows((REPO / "docs" / "configuration.md").read_text(), "## Configuration")
    portal = table_rows((REPO / "docs" / "portal.md").read_text(), "## Settings")
    fields = {name.upper() for name in Settings.model_fields}
    assert len(server) == len(set(server)), "a setting listed twice in docs/configuration.md"
    assert set(server) <= fields, f"docs/configuration.md rows that are no setting: {sorted(set(server) - fields)}"
    assert set(portal) <= fields, f"docs/portal.md rows that are no setting: {sorted(set(portal) - fields)}"
    assert fields - set(server) - set(portal) == set(), "settings in neither table"
    # the shared-state settings are the server's, not the portal's: in docs/configuration.md's table
    assert {"RATE_LIMIT_STORE", "RATE_LIMIT_URL", "INSTANCE"} <= set(server)
