"""A throwaway PostgreSQL server: Debian's `postgresql` package, one cluster in a temporary
directory (`initdb` + `pg_ctl`), listening on a Unix socket only, removed when stopped.

What the benchmarks measure against when no `--database-url` is given, and what the tests run
(tests/web/postgres_support.py turns `PostgresUnavailable` into a skip saying what to install).

PostgreSQL refuses to run as root: as root the cluster runs as the `postgres` system user the
package creates (`runuser`). `fresh_url` gives each user of the server a schema of its own
(`search_path` in the URL), so several share one server and never each other's tables.

    with PostgresServer() as server:
        measure(server.fresh_url("bench"))
"""

from __future__ import annotations

import glob
import itertools
import logging
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from corrige.portal.store import with_search_path

log = logging.getLogger(__name__)

INSTALL_HINT = "apt-get install postgresql (make test installs it)"
_CHECKED: dict[str, Any] = {"check": True, "capture_output": True, "text": True, "timeout": 120}


class PostgresUnavailable(RuntimeError):
    """PostgreSQL (or psycopg) is not installed here, or cannot run as this user; the message says what to install."""


def postgres_bin() -> Path | None:
    """The newest installed PostgreSQL's bin directory (Debian's layout), or None."""
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

    def _owner(self) -> tuple[int, int] | None:
        """The uid and gid the cluster's files belong to when running as root (None otherwise)."""
        if os.geteuid() != 0:
            return None
        import pwd

        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            raise PostgresUnavailable(
                f"running as root and there is no postgres user to run PostgreSQL: {INSTALL_HINT}"
            ) from None
        return owner.pw_uid, owner.pw_gid

    def start(self) -> PostgresServer:
        if self.bin is None:
            raise PostgresUnavailable(f"PostgreSQL is not installed: {INSTALL_HINT}")
        try:
            import psycopg  # noqa: F401
        except ImportError:
            raise PostgresUnavailable("psycopg is not installed: pip install -e '.[postgres]'") from None
        owner = self._owner()
        self.base = Path(tempfile.mkdtemp(prefix="corrige-pg-"))
        if owner is not None:
            os.chown(self.base, *owner)
        data = self.base / "data"
        initdb = self._as_owner(str(self.bin / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust")
        subprocess.run([*initdb, "-E", "UTF8", "--no-sync", "--no-instructions"], **_CHECKED)
        # a Unix socket in the cluster's own directory, no TCP: nothing else on the machine can clash with it
        options = f"-k {self.base} -c listen_addresses='' -p 5432 -c max_connections=50"
        pg_ctl = self._as_owner(str(self.bin / "pg_ctl"), "-D", str(data), "-l", str(self.base / "server.log"))
        subprocess.run([*pg_ctl, "-o", options, "-w", "-t", "60", "start"], **_CHECKED)
        self.url = f"postgresql://postgres@/postgres?host={self.base}&port=5432"
        log.info("PostgreSQL started in %s", self.base)
        return self

    def stop(self) -> None:
        if self.base is None or self.bin is None:
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

    def __enter__(self) -> PostgresServer:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
