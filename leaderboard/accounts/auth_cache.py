"""Who is signed in, read from the shared cache (issue 21, item 10: a signed-in board read served from the
answer cache still cost a session query and a user query, or a token query, about 2 ms of CPU).

- **Sessions** (``SESSION_ENGINE``): Django's ``cached_db`` store (written to the database, read from the
  shared cache first), which here also survives the cache being down: a failed cache read, write or
  delete falls back to the database and is logged, and the cache is skipped for ``RETRY_SECONDS`` after a
  failure (so a hung Redis costs one socket timeout per ``RETRY_SECONDS``, not one per request). A cached
  session lives at most ``CACHE_SECONDS``.
- **Users** (``CachedModelBackend.get_user``): the signed-in user, cached by id for at most
  ``CACHE_SECONDS``. Every save or deletion of the user (a password change, ``is_active`` or
  ``is_staff`` changed, a log-in's ``last_login``) drops the cached copy at once and again when its
  transaction commits, so the next request reads the new row; Django then checks the session's password
  hash against it as before (a password change signs other sessions out).
- **API tokens** (``CachedTokenAuthentication``): a token's user id, cached under a hash of the key (the
  shared cache never holds a token) for at most ``CACHE_SECONDS``. Deleting a token (``DELETE
  /api/auth/token/``, ``lb logout``, a regenerated token) drops it at once and on commit.

Only with a shared cache (``LEADERBOARD_AUTH_CACHE``, on when ``REDIS_URL`` is set): with each process's
own memory (the embedded default) a logout in one process could not drop another's copy, so nothing is
cached there and sessions, users and tokens are read from the database as before.

What this keeps: a logout, a password change, a deactivation and a token revocation take effect on the
next request. Only if the shared cache is unreachable at the moment of that change (so the drop fails)
and reachable again later can a cached copy outlive it, for at most ``CACHE_SECONDS`` (60 s).
A change that bypasses ``save()`` (``QuerySet.update``) is likewise seen within ``CACHE_SECONDS``.
"""

from __future__ import annotations

import hashlib
import logging
import time
from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.sessions.backends.cached_db import SessionStore as CachedDBStore
from django.core.cache import caches
from django.db import transaction
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token

from leaderboard.accounts.models import User

logger = logging.getLogger(__name__)

CACHE_SECONDS = 60
RETRY_SECONDS = 10
_down_until = 0.0


def _shared_get(key: str) -> Any:
    """The shared cache's value of ``key``, or ``None`` (missing, or the cache unreachable)."""
    global _down_until
    if not settings.LEADERBOARD_AUTH_CACHE or time.monotonic() < _down_until:
        return None
    try:
        return caches["default"].get(key)
    except Exception:  # redis-py and kombu raise many types when Redis is down or hangs
        _down_until = time.monotonic() + RETRY_SECONDS
        logger.warning("shared cache unreachable: signed-in readers are read from the database")
        return None


def _shared_set(key: str, value: Any, timeout: int) -> None:
    global _down_until
    if not settings.LEADERBOARD_AUTH_CACHE or time.monotonic() < _down_until:
        return
    try:
        caches["default"].set(key, value, min(timeout, CACHE_SECONDS))
    except Exception:
        _down_until = time.monotonic() + RETRY_SECONDS
        logger.warning("shared cache unreachable: %s not cached", key.split(":", 1)[0])


def _shared_delete(key: str) -> None:
    """Drop ``key`` now and once the transaction commits (a read in between would cache the old row)."""

    def drop() -> None:
        try:
            caches["default"].delete(key)
        except Exception:  # the copy expires within CACHE_SECONDS
            logger.warning("shared cache unreachable: %s left to expire", key.split(":", 1)[0])

    drop()
    transaction.on_commit(drop)


# --- users --------------------------------------------------------------------------------------------
def _user_key(pk: Any) -> str:
    return f"auth-user:{pk}"


def cached_user(pk: Any) -> User | None:
    """The user with this id, from the shared cache or the database; ``None`` when there is none."""
    try:
        key = _user_key(int(pk))
    except (TypeError, ValueError):
        return None
    user = _shared_get(key)
    if isinstance(user, User):
        return user
    user = User._default_manager.filter(pk=int(pk)).first()
    if user is not None:
        _shared_set(key, user, CACHE_SECONDS)
    return user


def forget_user(pk: Any) -> None:
    _shared_delete(_user_key(pk))


class CachedModelBackend(ModelBackend):
    """Django's model backend, with the signed-in user read through :func:`cached_user`."""

    def get_user(self, user_id: Any) -> User | None:
        user = cached_user(user_id)
        return user if user is not None and self.user_can_authenticate(user) else None


# --- API tokens ---------------------------------------------------------------------------------------
def _token_key(key: str) -> str:
    return "auth-token:" + hashlib.blake2b(key.encode(), digest_size=16).hexdigest()


def forget_token(key: str) -> None:
    _shared_delete(_token_key(key))


class CachedTokenAuthentication(TokenAuthentication):
    """DRF's token authentication (``Authorization: Token <key>``), with the key's user id and the user
    cached (see the module's doc); the same answers: 401 for an unknown key or an inactive user."""

    def authenticate_credentials(self, key: str) -> tuple[User, Token]:
        user_pk = _shared_get(_token_key(key))
        if user_pk is None:
            token = Token.objects.filter(key=key).only("key", "user_id").first()
            if token is None:
                raise exceptions.AuthenticationFailed("Invalid token.")
            user_pk = token.user_id
            _shared_set(_token_key(key), user_pk, CACHE_SECONDS)
        user = cached_user(user_pk)
        if user is None or not user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        return user, Token(key=key, user=user)


# --- sessions -----------------------------------------------------------------------------------------
class SessionStore(CachedDBStore):
    """``cached_db`` whose cache may be down (see the module's doc)."""

    def load(self) -> dict[str, Any]:
        data = _shared_get(self.cache_key)
        if data is None:
            s = self._get_session_from_db()  # type: ignore[attr-defined]
            data = self.decode(s.session_data) if s else {}
            if s:
                _shared_set(self.cache_key, data, self.get_expiry_age(expiry=s.expire_date))
        return data

    def exists(self, session_key: str | None) -> bool:
        # the database decides
        return (
            session_key is not None and session_key != "" and super(CachedDBStore, self).exists(session_key)
        )

    def save(self, must_create: bool = False) -> None:
        super(CachedDBStore, self).save(must_create)
        _shared_set(self.cache_key, self._session, self.get_expiry_age())  # type: ignore[attr-defined]

    def delete(self, session_key: str | None = None) -> None:
        super(CachedDBStore, self).delete(session_key)
        if session_key is None:
            if self.session_key is None:
                return
            session_key = self.session_key
        _shared_delete(self.cache_key_prefix + session_key)
