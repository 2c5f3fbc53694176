"""A real PostgreSQL server for the tests: Debian's `postgresql` package, one throwaway cluster per
test session (`corrige.bench.postgres.PostgresServer`: `initdb` + `pg_ctl` in a temporary
directory, listening on a Unix socket only), and a `backend` fixture that gives a test the portal
store's location on SQLite or PostgreSQL.

Each PostgreSQL test gets a schema of its own (`fresh_url`: `search_path` in its URL), so tests
share the server and never each other's tables. Where the package (or psycopg) is
missing, the PostgreSQL half of the tests is skipped with what to install; `make test` installs both.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from corrige.bench.postgres import INSTALL_HINT, PostgresServer, PostgresUnavailable, postgres_bin
from corrige.portal.store import PortalStore

__all__ = ["INSTALL_HINT", "Backend", "PostgresServer", "make_backend", "postgres_bin", "start_postgres"]


def start_postgres():
    """The session's server (a generator for a session-scoped fixture); skipped, saying what to
    install, where PostgreSQL or psycopg is missing."""
    server = PostgresServer()
    try:
        server.start()
    except PostgresUnavailable as exc:
        server.stop()
        pytest.skip(str(exc))
    try:
        yield server
    finally:
        server.stop()


@dataclass
class Backend:
    """Where a test's portal store lives, and how to reach it from outside the store."""

    name: str
    location: str
    integrity_error: type[Exception]
    server_env: dict[str, str] = field(default_factory=dict)  # what a `corrige serve` needs to use it

    def open(self) -> PortalStore:
        return PortalStore.open(self.location)

    def connect(self):
        """A second, plain connection (what another process would open)."""
        if self.name == "sqlite":
            return sqlite3.connect(self.location)
        import psycopg

        return psycopg.connect(self.location, autocommit=True)

    def request_ids(self) -> set[str]:
        conn = self.connect()
        try:
            return {row[0] for row in conn.execute("SELECT request_id FROM submissions").fetchall()}
        finally:
            conn.close()


def make_backend(name: str, state_dir: Path, postgres: PostgresServer | None) -> Backend:
    if name == "sqlite":
        path = state_dir / "portal.sqlite"
        return Backend(name, str(path), sqlite3.IntegrityError, {"CORRIGE_PORTAL_DB": str(path)})
    import psycopg

    assert postgres is not None
    url = postgres.fresh_url()
    return Backend(name, url, psycopg.IntegrityError, {"CORRIGE_DATABASE_URL": url})
