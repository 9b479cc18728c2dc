"""authentication.k8s.io/v1 SelfSubjectReview and TokenReview (create only).

``kubectl auth whoami`` POSTs a SelfSubjectReview (its spec is empty, the
body may be protobuf and is not read) and is told who it is. A TokenReview
asks whether a bearer token is valid and whose it is: what an extension API
server (Kueue's visibility server) or a proxy in front of the API server
sends for its delegated authentication; it needs ``create tokenreviews``
(``system:auth-delegator``)."""

from __future__ import annotations

from typing import Any

import msgspec

from kuota.server.auth.authn import Authenticator, Unauthorized, UserInfo

GROUP = "authentication.k8s.io"
SELF = "selfsubjectreviews"
TOKEN = "tokenreviews"


class IdentityReviewError(ValueError):
    """The body is not a TokenReview (400, naming the field)."""


def _user(user: UserInfo) -> dict[str, Any]:
    out: dict[str, Any] = {"username": user.name, "groups": list(user.groups)}
    if user.uid:
        out["uid"] = user.uid
    return out


def self_subject_review(user: UserInfo) -> dict[str, Any]:
    return {
        "kind": "SelfSubjectReview",
        "apiVersion": f"{GROUP}/v1",
        "metadata": {"creationTimestamp": None},
        "status": {"userInfo": _user(user)},
    }


def token_review(authn: Authenticator, body: bytes) -> dict[str, Any]:
    """Raises IdentityReviewError for a body that is not a JSON TokenReview."""
    try:
        doc = msgspec.json.decode(body)
    except (msgspec.DecodeError, UnicodeDecodeError) as err:
        raise IdentityReviewError(f"the body of the request could not be decoded: {err}") from None
    spec = doc.get("spec") if isinstance(doc, dict) else None
    if not isinstance(spec, dict) or not isinstance(spec.get("token", ""), str):
        raise IdentityReviewError("TokenReview.spec.token: Required value: a string")
    token = spec.get("token", "")
    status: dict[str, Any]
    try:
        if not token:
            raise Unauthorized("no token")
        user = authn.authenticate({"Authorization": f"Bearer {token}"}, None)
        status = {"authenticated": True, "user": _user(user)}
        if spec.get("audiences"):
            status["audiences"] = spec["audiences"]
    except Unauthorized as err:
        status = {"authenticated": False, "user": {}, "error": str(err)}
    return {
        "kind": "TokenReview",
        "apiVersion": f"{GROUP}/v1",
        "metadata": {"creationTimestamp": None},
        "spec": spec,  # (kube-apiserver returns the review as sent, its token too)
        "status": status,
    }
