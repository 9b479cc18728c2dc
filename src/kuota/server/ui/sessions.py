"""Browser sessions for the dashboard, as Jupyter's token login: a bearer
token the API server accepts is exchanged once at ``/ui/login`` for a random
session id in an HttpOnly, SameSite=Strict cookie; the API then accepts
that cookie as the token's identity. Sessions live in memory only (a
restart signs everyone out, as the admin's login URL changes too)."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kuota.server.auth import Authenticator, UserInfo
from kuota.server.ui.pages import COOKIE, session_id

__all__ = ["ADMIN", "COOKIE", "SessionAuthenticator", "admin_token"]
ADMIN = UserInfo("kuota-admin", "", ("system:masters",))


def admin_token() -> str:
    """A fresh random token for the admin's login URL printed at start."""
    return secrets.token_urlsafe(24)


@dataclass
class SessionAuthenticator(Authenticator):
    """The API's authenticator, which also reads the dashboard's cookie when
    a request carries no Authorization header."""

    sessions: dict[str, UserInfo] = field(default_factory=dict)

    def login(self, token: str) -> str | None:
        """A new session id for a valid bearer token, else None."""
        user = self.tokens.get(token)
        if user is None:
            return None
        sid = secrets.token_urlsafe(32)
        self.sessions[sid] = user
        return sid

    def logout(self, sid: str) -> None:
        self.sessions.pop(sid, None)

    def session_of(self, headers: Mapping[str, str]) -> str:
        return session_id(headers)

    def authenticate(self, headers: Mapping[str, str], peercert: Any) -> UserInfo:
        if not headers.get("Authorization"):
            user = self.sessions.get(self.session_of(headers))
            if user is not None:
                return _authenticated(user)
        return super().authenticate(headers, peercert)


def _authenticated(user: UserInfo) -> UserInfo:
    if "system:authenticated" in user.groups:
        return user
    return UserInfo(user.name, user.uid, (*user.groups, "system:authenticated"))
