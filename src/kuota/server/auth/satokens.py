"""Service account tokens: ``kubectl create token SA`` (a TokenRequest to the
``serviceaccounts/NAME/token`` subresource) and their use as bearer tokens.

kube-apiserver answers with a JWT signed by its service-account key whose
claims name the account (namespace, name, uid), the audiences and the
expiry; it accepts the token while it has not expired, carries one of the
server's audiences, and names an account that still exists with that uid (a
deleted or recreated account's tokens stop working). The user is
``system:serviceaccount:NS:NAME`` in the groups ``system:serviceaccounts``
and ``system:serviceaccounts:NS``. kuota signs the same claims with
HMAC-SHA256 under a key kept in the state directory (made on first start),
so a token outlives a restart of the server as a cluster's does. Expiry is
wall-clock time (``--speed`` does not age tokens).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kuota.server.auth.authn import UserInfo

# kube-apiserver's default --api-audiences (its --service-account-issuer).
AUDIENCE = "https://kubernetes.default.svc.cluster.local"
DEFAULT_SECONDS = 3600  # TokenRequestSpec.expirationSeconds' default
MIN_SECONDS = 600  # "may not specify a duration less than 10 minutes"
SA_PREFIX = "system:serviceaccount:"
KEY_FILE = "sa-token.key"

UidOf = Callable[[str, str], str | None]  # (namespace, name) -> the account's uid, if it exists


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


_HEADER = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())


class ServiceAccountTokens:
    def __init__(self, key: bytes, uid_of: UidOf) -> None:
        self._key = key
        self._uid_of = uid_of

    @classmethod
    def in_dir(cls, directory: Path, uid_of: UidOf) -> ServiceAccountTokens:
        """With the key kept in ``directory`` (made there on first use)."""
        path = directory / KEY_FILE
        try:
            key = path.read_bytes()
        except FileNotFoundError:
            key = secrets.token_bytes(32)
            directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(key)
        return cls(key, uid_of)

    def _sign(self, signing_input: str) -> str:
        return _b64(hmac.new(self._key, signing_input.encode(), hashlib.sha256).digest())

    def issue(
        self,
        namespace: str,
        name: str,
        uid: str,
        audiences: list[str],
        seconds: int,
        now: datetime,
    ) -> tuple[str, datetime]:
        """A token for the account and its expiry (``now`` + ``seconds``)."""
        iat = int(now.timestamp())
        exp = iat + seconds
        claims = {
            "aud": audiences,
            "exp": exp,
            "iat": iat,
            "iss": AUDIENCE,
            "kubernetes.io": {
                "namespace": namespace,
                "serviceaccount": {"name": name, "uid": uid},
            },
            "nbf": iat,
            "sub": f"{SA_PREFIX}{namespace}:{name}",
        }
        payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
        signing_input = f"{_HEADER}.{payload}"
        token = f"{signing_input}.{self._sign(signing_input)}"
        return token, datetime.fromtimestamp(exp, UTC)

    def verify(self, token: str, now: datetime | None = None) -> UserInfo | None:
        """The account a token names, if it is one of ours, unexpired, for
        this server's audience, and the account is still there."""
        parts = token.split(".")
        if len(parts) != 3 or parts[0] != _HEADER:
            return None
        if not hmac.compare_digest(self._sign(f"{parts[0]}.{parts[1]}"), parts[2]):
            return None
        try:
            claims: Any = json.loads(_unb64(parts[1]))
            k8s = claims["kubernetes.io"]
            ns, sa = k8s["namespace"], k8s["serviceaccount"]
            name, uid, exp = sa["name"], sa["uid"], int(claims["exp"])
            audiences = claims["aud"]
        except (ValueError, KeyError, TypeError):
            return None
        now = now or datetime.now(UTC)
        if exp <= now.timestamp() or AUDIENCE not in audiences:
            return None
        if self._uid_of(ns, name) != uid:
            return None  # the account is gone, or was made again
        return UserInfo(
            f"{SA_PREFIX}{ns}:{name}",
            uid,
            ("system:serviceaccounts", f"system:serviceaccounts:{ns}"),
        )


def token_request(
    tokens: ServiceAccountTokens,
    namespace: str,
    name: str,
    uid: str,
    body: Any,
    now: datetime,
) -> tuple[dict[str, Any] | None, list[tuple[str, Any, str]]]:
    """The TokenRequest answered (spec defaulted, status with the token), or
    the field errors of its spec: (path, value, reason)."""
    if not isinstance(body, dict):
        body = {}
    spec = body.get("spec")
    spec = dict(spec) if isinstance(spec, dict) else {}
    audiences = spec.get("audiences") or [AUDIENCE]
    seconds = spec.get("expirationSeconds")
    seconds = DEFAULT_SECONDS if seconds is None else seconds
    errors: list[tuple[str, Any, str]] = []
    if not isinstance(audiences, list) or not all(isinstance(a, str) for a in audiences):
        errors.append(("spec.audiences", audiences, "must be a list of strings"))
    if not isinstance(seconds, int) or isinstance(seconds, bool):
        errors.append(("spec.expirationSeconds", seconds, "must be an integer"))
    elif seconds < MIN_SECONDS:
        errors.append(
            ("spec.expirationSeconds", seconds, "may not specify a duration less than 10 minutes")
        )
    elif seconds > 1 << 32:
        errors.append(
            (
                "spec.expirationSeconds",
                seconds,
                "may not specify a duration larger than 2^32 seconds",
            )
        )
    if errors:
        return None, errors
    token, exp = tokens.issue(namespace, name, uid, audiences, seconds, now)
    spec["audiences"] = audiences
    spec["expirationSeconds"] = seconds
    spec.setdefault("boundObjectRef", None)
    out = {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "creationTimestamp": now.replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
        "spec": spec,
        "status": {
            "token": token,
            "expirationTimestamp": exp.strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
    }
    return out, []
