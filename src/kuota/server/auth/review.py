"""authorization.k8s.io/v1 SelfSubjectAccessReview and SelfSubjectRulesReview
(create only): what ``kubectl auth can-i`` and ``can-i --list`` ask. The
request comes as JSON or, from kubectl, as protobuf; the answer is JSON
(kubectl accepts it)."""

from __future__ import annotations

from typing import Any

import msgspec

from kuota.server.auth import protowire as pw
from kuota.server.auth.authn import Attributes, Authorizer, UserInfo
from kuota.server.auth.rbac import RBACAuthorizer

GROUP = "authorization.k8s.io"
ACCESS = "selfsubjectaccessreviews"
RULES = "selfsubjectrulesreviews"
SUBJECT = "subjectaccessreviews"  # about another user: delegated authorization
_KINDS = {
    ACCESS: "SelfSubjectAccessReview",
    RULES: "SelfSubjectRulesReview",
    SUBJECT: "SubjectAccessReview",
}
_RES_FIELDS = ("namespace", "verb", "group", "version", "resource", "subresource", "name")


class ReviewError(ValueError):
    """The request body is not a review (400, naming the field)."""


def _spec_from_proto(resource: str, body: bytes) -> dict[str, Any]:
    _, _, raw = pw.unwrap(body)
    spec = pw.message(pw.fields(raw), 2) or {}
    if resource == RULES:
        return {"namespace": pw.string(spec, 1)}
    out: dict[str, Any] = {}
    res = pw.message(spec, 1)
    if res is not None:
        out["resourceAttributes"] = {k: pw.string(res, i + 1) for i, k in enumerate(_RES_FIELDS)}
    nonres = pw.message(spec, 2)
    if nonres is not None:
        out["nonResourceAttributes"] = {"path": pw.string(nonres, 1), "verb": pw.string(nonres, 2)}
    if resource == SUBJECT:  # SubjectAccessReviewSpec: user 3, groups 4 (repeated), uid 6
        out["user"] = pw.string(spec, 3)
        out["groups"] = [g.decode() for g in spec.get(4, []) if isinstance(g, bytes)]
        out["uid"] = pw.string(spec, 6)
    return out


def decode_spec(resource: str, body: bytes, content_type: str) -> dict[str, Any]:
    """The review's spec; raises ReviewError."""
    try:
        if content_type == "application/vnd.kubernetes.protobuf":
            return _spec_from_proto(resource, body)
        doc = msgspec.json.decode(body)
    except (pw.ProtoError, msgspec.DecodeError, UnicodeDecodeError) as err:
        raise ReviewError(f"the body of the request could not be decoded: {err}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("spec", {}), dict):
        raise ReviewError(f"{_KINDS[resource]}.spec: must be an object")
    spec: dict[str, Any] = doc.get("spec") or {}
    return spec


def access_review(
    authz: Authorizer, user: UserInfo, spec: dict[str, Any], resource: str = ACCESS
) -> dict[str, Any]:
    kind = _KINDS[resource]
    res = spec.get("resourceAttributes")
    nonres = spec.get("nonResourceAttributes")
    if (res is None) == (nonres is None):
        raise ReviewError(
            f"{kind}.spec: exactly one of resourceAttributes or "
            "nonResourceAttributes must be specified"
        )
    if res is not None:
        if not isinstance(res, dict):
            raise ReviewError(f"{kind}.spec.resourceAttributes: must be an object")
        attrs = Attributes(
            user,
            str(res.get("verb", "")),
            True,
            api_group=str(res.get("group", "")),
            api_version=str(res.get("version", "")),
            resource=str(res.get("resource", "")),
            subresource=str(res.get("subresource", "")),
            namespace=str(res.get("namespace", "")),
            name=str(res.get("name", "")),
        )
    else:
        if not isinstance(nonres, dict):
            raise ReviewError(f"{kind}.spec.nonResourceAttributes: must be an object")
        attrs = Attributes(
            user, str(nonres.get("verb", "")), False, path=str(nonres.get("path", ""))
        )
    allowed, reason = authz.authorize(attrs)
    status: dict[str, Any] = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    return _answer(resource, spec, status)


def subject_access_review(authz: Authorizer, spec: dict[str, Any]) -> dict[str, Any]:
    """May the user the spec names (``user``, ``uid``, ``groups``) do it?"""
    user = spec.get("user", "")
    groups = spec.get("groups") or []
    if not isinstance(user, str) or not user:
        raise ReviewError("SubjectAccessReview.spec.user: Required value: a user name")
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise ReviewError("SubjectAccessReview.spec.groups: must be a list of strings")
    subject = UserInfo(user, str(spec.get("uid", "")), tuple(groups))
    return access_review(authz, subject, spec, SUBJECT)


def rules_review(authz: Authorizer, user: UserInfo, spec: dict[str, Any]) -> dict[str, Any]:
    namespace = str(spec.get("namespace", ""))
    resource_rules: list[dict[str, Any]] = []
    nonresource_rules: list[dict[str, Any]] = []
    if isinstance(authz, RBACAuthorizer):
        seen: list[Any] = []
        for _, rule in authz.rules_for(user, namespace):
            if rule in seen:
                continue
            seen.append(rule)
            if rule.non_resource_urls:
                nonresource_rules.append(
                    {"verbs": rule.verbs, "nonResourceURLs": rule.non_resource_urls}
                )
            else:
                r: dict[str, Any] = {
                    "verbs": rule.verbs,
                    "apiGroups": rule.api_groups or [],
                    "resources": rule.resources or [],
                }
                if rule.resource_names:
                    r["resourceNames"] = rule.resource_names
                resource_rules.append(r)
    status = {
        "resourceRules": resource_rules,
        "nonResourceRules": nonresource_rules,
        "incomplete": not isinstance(authz, RBACAuthorizer),
    }
    return _answer(RULES, spec, status)


def _answer(resource: str, spec: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": _KINDS[resource],
        "apiVersion": f"{GROUP}/v1",
        "metadata": {"creationTimestamp": None},
        "spec": spec,
        "status": status,
    }


def review(
    authz: Authorizer, user: UserInfo, resource: str, body: bytes, content_type: str
) -> dict[str, Any]:
    """Answer a review POSTed to ``resource``; raises ReviewError."""
    spec = decode_spec(resource, body, content_type)
    if resource == ACCESS:
        return access_review(authz, user, spec)
    if resource == SUBJECT:
        return subject_access_review(authz, spec)
    return rules_review(authz, user, spec)
