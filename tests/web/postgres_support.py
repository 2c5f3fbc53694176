"""A real PostgreSQL server for the tests: Debian's `postgresql` package, one throwaway cluster per
test session (`initdb` + `pg_ctl` in a temporary directory, listening on a Unix socket only), and
a `backend` fixture that gives a test the portal store's location on SQLite or PostgreSQL.

PostgreSQL refuses to run as root: as root the cluster runs as the `postgres` system user the
package creates (`runuser`). Each PostgreSQL test gets a schema of its own (`search_path` in its
URL), so tests share the server and never each other's tables. Where the package (or psycopg) is
missing, the PostgreSQL half of the tests is skipped with what to install; `make test` installs both.
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import sqlite3
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from corrige.portal.store import PortalStore, with_search_path

INSTALL_HINT = "apt-get install postgresql (make test installs it)"


def postgres_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


class PostgresServer:
    """A cluster in a temporary directory, started with `pg_ctl`, stopped (and removed) at the end."""

    def __init__(self) -> None:
        self.bin = postgres_bin()
        self.base: Path | None = None
        self.url = ""
        self._schemas = itertools.count(1)

    def _as_owner(self, *argv: str) -> list[str]:
        if os.geteuid() == 0:
            return ["runuser", "-u", "postgres", "--", *argv]
        return list(argv)

    def start(self) -> PostgresServer:
        if self.bin is None:
            pytest.skip(f"PostgreSQL is not installed: {INSTALL_HINT}")
        if os.geteuid() == 0:
            try:
                import pwd

                owner = pwd.getpwnam("postgres")
            except KeyError:
                pytest.skip(f"running as root and there is no postgres user to run PostgreSQL: {INSTALL_HINT}")
        self.base = Path(tempfile.mkdtemp(prefix="corrige-pg-"))
        if os.geteuid() == 0:
            os.chown(self.base, owner.pw_uid, owner.pw_gid)
        data = self.base / "data"
        run = dict(check=True, capture_output=True, text=True, timeout=120)
        subprocess.run(
            self._as_owner(str(self.bin / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8")
            + ["--no-sync", "--no-instructions"],
            **run,
        )
        # a Unix socket in the cluster's own directory, no TCP: nothing else on the machine can clash with it
        options = f"-k {self.base} -c listen_addresses='' -p 5432 -c max_connections=50"
        subprocess.run(
            self._as_owner(str(self.bin / "pg_ctl"), "-D", str(data), "-l", str(self.base / "server.log"))
            + ["-o", options, "-w", "-t", "60", "start"],
            **run,
        )
        self.url = f"postgresql://postgres@/postgres?host={self.base}&port=5432"
        return self

    def stop(self) -> None:
        if self.base is None:
            return
        subprocess.run(
            self._as_owner(str(self.bin / "pg_ctl"), "-D", str(self.base / "data"), "-m", "fast", "-w", "stop"),
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(self.base, ignore_errors=True)
        self.base = None

    def fresh_url(self, prefix: str = "t") -> str:
        """A URL whose tables go to a new, empty schema."""
        import psycopg

        schema = f"{prefix}{next(self._schemas)}_{os.getpid()}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        return with_search_path(self.url, schema)


def start_postgres():
    """The session's server (a generator for a session-scoped fixture)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed: pip install -e '.[postgres]' (the dev extra has it)")
    server = PostgresServer()
    try:
        yield server.start()
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
