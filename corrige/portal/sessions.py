"""Learner sessions in a signed cookie, and the CSRF token that goes with them.

A session is a learner id and a CSRF token, both random, in one cookie signed with
itsdangerous (HMAC; the server keeps nothing per session). The cookie is HttpOnly and
SameSite=Lax. Every page embeds the token (a hidden form field, and a `<meta>` for scripts);
a state-changing request must send it back (the form field, or the `X-CSRF-Token` header),
and it must equal the one in the cookie. Another site can make a browser send the cookie,
but it cannot read the page, so it cannot know the token.

The signing key is `session_secret` when set; otherwise one is generated on first start and
kept next to the portal database (mode 0600), so sessions survive restarts. Servers behind one
address must sign with the same key (`corrige serve --replicas N` hands its own to every
replica): a cookie signed by another key is refused (`SessionCodec.refusal` says why, and the
server logs it).
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer

logger = logging.getLogger(__name__)

_SALT = "corrige.portal.session"
WARN_EVERY_S = 60.0  # a cookie of another key is logged at most this often (a client may send many)


@dataclass(frozen=True, slots=True)
class Session:
    learner: str
    csrf: str


class SessionCodec:
    """Signs sessions into cookie values and checks them back (expired or forged: None)."""

    def __init__(self, secret: str, max_age_s: int) -> None:
        self.serializer = URLSafeTimedSerializer(secret, salt=_SALT)
        self.max_age_s = max_age_s
        self._warned_at = -WARN_EVERY_S

    @staticmethod
    def new() -> Session:
        return Session(learner=secrets.token_hex(8), csrf=secrets.token_urlsafe(24))

    def dumps(self, session: Session) -> str:
        return self.serializer.dumps([session.learner, session.csrf])

    def loads(self, cookie: str | None) -> Session | None:
        if not cookie:
            return None
        try:
            learner, csrf = self.serializer.loads(cookie, max_age=self.max_age_s)
        except (BadSignature, ValueError, TypeError):  # forged, expired, or not a pair
            return None
        if not isinstance(learner, str) or not isinstance(csrf, str):
            return None
        return Session(learner, csrf)

    def refusal(self, cookie: str) -> str:
        """Why a cookie that `loads` refused is no session here, for the client's error (and the
        log, when its signature is another key's: servers that do not share `session_secret`)."""
        try:
            self.serializer.loads(cookie, max_age=self.max_age_s)
        except SignatureExpired:
            return "the session cookie has expired: get a new session (GET /portal/api/session)"
        except BadSignature:
            now = time.monotonic()
            if now - self._warned_at >= WARN_EVERY_S:
                self._warned_at = now
                logger.warning("a session cookie signed with another key: do all servers share session_secret?")
            return (
                "the session cookie was not signed with this server's key (servers behind one address must share "
                "session_secret): get a new session (GET /portal/api/session)"
            )
        except (ValueError, TypeError):
            pass
        return "the session cookie is not a session: get a new one (GET /portal/api/session)"


def csrf_ok(session: Session | None, token: str | None) -> bool:
    """The token sent with a request matches the session's (compared in constant time)."""
    if session is None or not token:
        return False
    return hmac.compare_digest(session.csrf.encode(), token.encode())


def load_or_create_secret(path: Path) -> str:
    """The signing key kept at `path`, created atomically the first time (two servers starting
    together agree on one key: the second one's `link` fails and it reads the first one's)."""
    try:
        return _read_secret(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump({"session_secret": secrets.token_urlsafe(48)}, fh)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)
            logger.info("generated the portal's session key in %s", path)
        except FileExistsError:
            pass
    finally:
        tmp.unlink(missing_ok=True)
    return _read_secret(path)


def _read_secret(path: Path) -> str:
    secret = json.loads(path.read_text(encoding="utf-8"))["session_secret"]
    if not isinstance(secret, str) or len(secret) < 32:
        raise ValueError(f"{path}: the session key is missing or too short; delete the file to make a new one")
    return secret
