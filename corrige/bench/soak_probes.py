"""What the soak samples of a running server: the resident set and the open descriptors of its
processes (from /proc), which process is which, and the trace store's rows and bytes."""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

from corrige.bench.servers import _children

log = logging.getLogger(__name__)

STORE_TABLE = "spans"


def rss_bytes(pid: int) -> int | None:
    """The process's resident set size (VmRSS), None when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


def open_fds(pid: int) -> int | None:
    """How many file descriptors the process has open, None when it is gone."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def find_processes(server_pid: int, engine_pid: int | None, standby_pid: int | None = None) -> dict[str, int]:
    """The server, its engine child (the pid `/v1/engine/stats` names) and its trace writer child
    (the other child started by multiprocessing's spawn, besides the engine's idle standby; neither
    the standby nor the resource tracker is watched)."""
    found = {"server": server_pid}
    if engine_pid is not None:
        found["engine"] = engine_pid
    engines = {engine_pid, standby_pid}
    writers = [pid for pid in _children(server_pid) if pid not in engines and "multiprocessing.spawn" in _cmdline(pid)]
    if len(writers) == 1:
        found["trace_writer"] = writers[0]
    elif writers:
        log.warning("%d spawned children besides the engine; not watching a trace writer", len(writers))
    return found


def store_size(path: Path) -> dict[str, int | None]:
    """Rows of the trace store's span table (None when it cannot be read yet) and its bytes (file + WAL)."""
    size = sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())
    rows = None
    if path.exists():
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5.0) as db:
                rows = db.execute(f"SELECT COUNT(*) FROM {STORE_TABLE}").fetchone()[0]
            db.close()
        except sqlite3.Error as exc:
            log.debug("trace store not readable yet: %s", exc)
    return {"spans": rows, "bytes": size}
