"""The portal's long-lived objects for one server: the store, the session codec and the
question bank.

`Portal.open(settings)` runs in the lifespan and is quick (it opens the store, SQLite or
PostgreSQL, applies its migrations, and reads or makes the session key); the question bank
is read on a worker thread (from its JSON cache in
the cache directory, `$CORRIGE_CACHE_DIR` or `~/.cache/corrige`, or built and checked with the
bundled tutor in a few seconds the first time), so the server reports ready without waiting
for it, and the first quiz request waits. The store's connection lives on one worker
thread: every store call goes through `Portal.db`, so the event loop never waits for a disk
flush and the connection is never shared between threads.
"""

from __future__ import annotations

import asyncio
import logging
import random
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from corrige.portal.quiz import QuestionBank
from corrige.portal.rules import RuleCards
from corrige.portal.sessions import SessionCodec, load_or_create_secret
from corrige.portal.store import PortalStore, redact
from corrige.tutor.retrieval import default_cache_dir

if TYPE_CHECKING:
    from corrige.server.settings import Settings

logger = logging.getLogger(__name__)

T = TypeVar("T")


def secret_path(db_path: Path) -> Path:
    """Where a generated session key is kept: next to the database (`portal.sqlite` → `portal.key.json`)."""
    return db_path.with_name(f"{db_path.stem}.key.json")


class Portal:
    def __init__(
        self,
        store: PortalStore,
        codec: SessionCodec,
        *,
        cookie_name: str = "corrige_session",
        cookie_secure: bool = False,
        accepts: Callable[[str], bool] | None = None,
    ) -> None:
        self.store = store
        self.codec = codec
        self.cookie_name = cookie_name
        self.cookie_secure = cookie_secure
        self.rng = random.Random()
        self.cards = RuleCards()
        self._db = ThreadPoolExecutor(max_workers=1, thread_name_prefix="portal-db")
        self._bank: Future[QuestionBank] = Future()
        self._bank_dir = default_cache_dir()  # one checked bank per machine, whatever the database
        self._accepts = accepts  # the model takes the sentence (fits its window); others are left out
        threading.Thread(target=self._build_bank, name="portal-bank", daemon=True).start()

    @classmethod
    def open(cls, settings: Settings, accepts: Callable[[str], bool] | None = None) -> Portal:
        db_path = Path(settings.portal_db)
        store = PortalStore.open(settings.portal_location)
        if settings.session_secret is not None:
            secret = settings.session_secret.get_secret_value()
        else:
            secret = load_or_create_secret(secret_path(db_path))
        codec = SessionCodec(secret, settings.session_max_age_s)
        return cls(
            store,
            codec,
            cookie_name=settings.session_cookie,
            cookie_secure=settings.session_cookie_secure,
            accepts=accepts,
        )

    def _build_bank(self) -> None:
        try:
            bank = QuestionBank.cached(self._bank_dir)
            if self._accepts is not None:
                bank = QuestionBank([q for q in bank.questions if self._accepts(q.sentence)])
            logger.info("quiz bank ready: %d questions in %d categories", len(bank.questions), len(bank.by_category))
            self._bank.set_result(bank)
        except BaseException as exc:
            logger.exception("the quiz bank could not be built")
            self._bank.set_exception(exc)

    async def bank(self) -> QuestionBank:
        if self._bank.done():  # the common case: no hop through the loop's future machinery
            return self._bank.result()
        return await asyncio.wrap_future(self._bank)

    async def bank_settled(self) -> None:
        """Wait until the bank is built and checked, or has failed (logged; its pages then say so).
        The server waits for it before it says ready: the check is seconds of CPU in this process
        on a machine without its cache, which would otherwise compete with the first requests."""
        await asyncio.wait([asyncio.wrap_future(self._bank)])

    async def db(self, fn: Callable[..., T], *args: object) -> T:
        """Run a store call on the store's thread."""
        return await asyncio.get_running_loop().run_in_executor(self._db, fn, *args)

    def close(self) -> None:
        self._db.shutdown(wait=True)  # writes in flight finish (and are flushed) first
        self.store.close()
        logger.info("portal store closed")


def open_portal(settings: Settings, accepts: Callable[[str], bool] | None = None) -> Portal | None:
    """The portal, or None (logged) when its files cannot be opened: the APIs still serve, and the
    portal's pages answer 503 rather than taking the whole server down."""
    try:
        return Portal.open(settings, accepts)
    except (OSError, ValueError, RuntimeError, sqlite3.Error):  # StoreUnavailable is a RuntimeError
        logger.exception("learner portal disabled: cannot open %s", location_of(settings))
        return None


def location_of(settings: Settings) -> str:
    """The portal's database for a log line (a URL without its password)."""
    return redact(settings.database_url.get_secret_value()) if settings.database_url else str(settings.portal_db)


def close_portal(portal: Portal | None) -> None:
    if portal is not None:
        portal.close()
