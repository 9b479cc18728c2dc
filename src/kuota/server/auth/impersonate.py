"""kube-apiserver's impersonation filter (endpoints/filters/impersonation.go):
``Impersonate-User`` / ``Impersonate-Group`` / ``Impersonate-Uid`` headers,
each allowed by the verb ``impersonate`` on users / groups / uids; what
``kubectl --as``/``--as-group`` send."""

from __future__ import annotations

from collections.abc import Sequence

from kuota.server.auth.authn import (
    ANONYMOUS,
    AUTHENTICATED,
    UNAUTHENTICATED,
    Attributes,
    Authorizer,
    UserInfo,
)


class ImpersonationDenied(Exception):
    """The requester may not impersonate: ``attrs`` is the denied check."""

    def __init__(self, attrs: Attributes) -> None:
        super().__init__(attrs.name)
        self.attrs = attrs


class ImpersonationInvalid(ValueError):
    """Impersonation headers that do not make a user (400)."""


def impersonate(
    authz: Authorizer, user: UserInfo, name: str, groups: Sequence[str], uid: str
) -> UserInfo:
    """The user the request acts as; ``user`` when nothing is impersonated.
    Raises ImpersonationDenied or ImpersonationInvalid."""
    if not name:
        if groups or uid:
            raise ImpersonationInvalid(
                "requested Impersonate-Group or Impersonate-Uid without Impersonate-User"
            )
        return user
    checks = [("users", name), *(("groups", g) for g in groups)]
    if uid:
        checks.append(("uids", uid))
    for resource, value in checks:
        attrs = Attributes(user, "impersonate", True, api_group="", resource=resource, name=value)
        allowed, _ = authz.authorize(attrs)
        if not allowed:
            raise ImpersonationDenied(attrs)
    out = list(groups)
    if name == ANONYMOUS:
        if UNAUTHENTICATED not in out:
            out.append(UNAUTHENTICATED)
    elif AUTHENTICATED not in out:
        out.append(AUTHENTICATED)
    return UserInfo(name, uid, tuple(out))
