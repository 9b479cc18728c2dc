"""Who is asking, and may they: the seam kube-apiserver has between its
authenticators and its authorizer.

``authenticate`` reads a request's credentials: a TLS client certificate
signed by the server's CA (user = subject CN, groups = subject O values) or
a bearer token from the static token file (``--token-auth-file``:
``token,user,uid,"group1,group2"``). ``authorize`` decides on the request's
attributes; the one built in lets ``system:masters`` do everything and
everyone authenticated read discovery and health, as the default
``system:discovery`` binding does (the RBAC one is in ``rbac``).
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
ANONYMOUS = "system:anonymous"


@dataclass(frozen=True)
class UserInfo:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()


@dataclass(frozen=True)
class Attributes:
    """What a request does (kube-apiserver's authorizer.Attributes)."""

    user: UserInfo
    verb: str  # get list watch create update patch delete deletecollection; or http verb
    resource_request: bool
    path: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""


class Unauthorized(Exception):
    """Credentials were presented and are not valid (401)."""


class TokenFileError(ValueError):
    pass


@dataclass
class Authenticator:
    tokens: Mapping[str, UserInfo] = field(default_factory=dict)
    # Bearer tokens not in the file: the service-account tokens the server
    # issued (satokens), checked on use. None: the file's only.
    issued: Callable[[str], UserInfo | None] | None = None

    def authenticate(self, headers: Mapping[str, str], peercert: Any) -> UserInfo:
        """The user of a request: token, then client certificate, else anonymous.
        Raises Unauthorized for a bearer token that is not in the file."""
        header = headers.get("Authorization", "")
        if header:
            scheme, _, token = header.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise Unauthorized("unsupported Authorization header")
            user = self.tokens.get(token.strip())
            if user is None and self.issued is not None:
                user = self.issued(token.strip())
            if user is None:
                raise Unauthorized("invalid bearer token")
            return _with_authenticated(user)
        if peercert:
            cn, orgs = "", []
            for rdn in peercert.get("subject", ()):
                for key, value in rdn:
                    if key == "commonName":
                        cn = value
                    elif key == "organizationName":
                        orgs.append(value)
            if cn:
                return _with_authenticated(UserInfo(cn, "", tuple(orgs)))
        return UserInfo(ANONYMOUS, "", (UNAUTHENTICATED,))


def _with_authenticated(user: UserInfo) -> UserInfo:
    if AUTHENTICATED in user.groups:
        return user
    return UserInfo(user.name, user.uid, (*user.groups, AUTHENTICATED))


def load_token_file(path: str | Path) -> dict[str, UserInfo]:
    """kube-apiserver's static token file: ``token,user,uid[,"g1,g2"]`` per line.
    Raises TokenFileError naming the file, line and reason."""
    out: dict[str, UserInfo] = {}
    try:
        text = Path(path).read_text()
    except OSError as err:
        raise TokenFileError(f"{path}: {err.strerror or err}") from None
    for lineno, row in enumerate(csv.reader(text.splitlines()), 1):
        if not row or (len(row) == 1 and not row[0].strip()) or row[0].startswith("#"):
            continue
        if len(row) < 3:
            raise TokenFileError(
                f'{path}: line {lineno}: expected token,user,uid[,"group1,group2"], '
                f"got {len(row)} column(s)"
            )
        token, user, uid = (c.strip() for c in row[:3])
        if not token or not user:
            raise TokenFileError(f"{path}: line {lineno}: token and user must not be empty")
        groups = tuple(g.strip() for g in row[3].split(",") if g.strip()) if len(row) > 3 else ()
        out[token] = UserInfo(user, uid, groups)
    return out


class Authorizer(Protocol):
    def authorize(self, attrs: Attributes) -> tuple[bool, str]: ...


# Non-resource paths every authenticated user may read (system:discovery,
# system:public-info-viewer).
_DISCOVERY = ("/api", "/apis", "/openapi", "/version", "/healthz", "/livez", "/readyz")
_PUBLIC = ("/version", "/healthz", "/livez", "/readyz")


class MastersAuthorizer:
    """``system:masters`` may do anything; others read discovery and health."""

    def authorize(self, attrs: Attributes) -> tuple[bool, str]:
        groups = attrs.user.groups
        if MASTERS in groups:
            return True, ""
        if not attrs.resource_request and attrs.verb == "get":
            allowed = _PUBLIC if UNAUTHENTICATED in groups else _DISCOVERY
            if any(attrs.path == p or attrs.path.startswith(p + "/") for p in allowed):
                return True, ""
        return False, ""


def forbidden_message(attrs: Attributes) -> str:
    """kube-apiserver's Forbidden text for a denied request."""
    user = attrs.user.name
    if not attrs.resource_request:
        return f'User "{user}" cannot {attrs.verb} path "{attrs.path}"'
    res = attrs.resource + (f"/{attrs.subresource}" if attrs.subresource else "")
    scope = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
    why = f'User "{user}" cannot {attrs.verb} resource "{res}" in API group "{attrs.api_group}" {scope}'
    gr = attrs.resource + (f".{attrs.api_group}" if attrs.api_group else "")
    return f'{gr} "{attrs.name}" is forbidden: {why}' if attrs.name else f"{gr} is forbidden: {why}"


def forbidden_details(attrs: Attributes) -> dict[str, str]:
    """Status details of a Forbidden (apierrors.NewForbidden): empty fields left out."""
    if not attrs.resource_request:
        return {}
    out = {"name": attrs.name, "group": attrs.api_group, "kind": attrs.resource}
    return {k: v for k, v in out.items() if v}
