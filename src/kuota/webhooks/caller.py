"""Calling admission webhooks as kube-apiserver does
(``k8s.io/apiserver/pkg/admission/plugin/webhook``): every webhook of the
Mutating/ValidatingWebhookConfigurations in the store whose rules,
namespaceSelector and objectSelector match the request is POSTed an
AdmissionReview v1 over HTTPS (``clientConfig.url`` or ``service``, trusting
``caBundle``) within ``timeoutSeconds``; a mutating webhook's JSONPatch is
applied to the object, the mutating ones first (configurations by name, their
webhooks in order), the validating ones after on the final object. A denial
is ``admission webhook "<name>" denied the request: <message>``; a webhook
that fails or times out is skipped under ``failurePolicy: Ignore`` and fails
the request under ``Fail``.

The calls block: ``kuota serve`` is a development server, and a webhook
served by the same process would wait for itself (until its timeout).
"""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.request
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kuota.api.meta import selector_matches
from kuota.store.kinds import resource_for
from kuota.store.protocol import NotFound, ObjectStore
from kuota.webhooks.jsonpatch import PatchError, apply

MUTATING = resource_for("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration")
VALIDATING = resource_for("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration")
NAMESPACES = resource_for("v1", "Namespace")


class Rejected(Exception):
    """The request is refused: ``code`` and ``reason`` as the API server
    answers (a denial's status, or 500 InternalError for a failing webhook
    under failurePolicy Fail)."""

    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message


@dataclass(frozen=True)
class Attributes:
    """What the webhooks match and are told about one write."""

    operation: str  # CREATE, UPDATE
    group: str
    version: str
    kind: str
    resource: str
    subresource: str
    namespace: str
    name: str
    user: Mapping[str, Any]
    dry_run: bool = False


def _rule_matches(rule: Any, a: Attributes) -> bool:
    def has(values: list[str] | None, value: str) -> bool:
        return values is not None and ("*" in values or value in values)

    if not has(rule.operations, a.operation) or not has(rule.api_groups, a.group):
        return False
    if not has(rule.api_versions, a.version):
        return False
    res = f"{a.resource}/{a.subresource}" if a.subresource else a.resource
    resources = rule.resources or []
    wildcard = "*/*" in resources or (not a.subresource and "*" in resources)
    sub_wild = bool(a.subresource) and f"*/{a.subresource}" in resources
    own_wild = f"{a.resource}/*" in resources
    if not (res in resources or wildcard or sub_wild or own_wild):
        return False
    scope = rule.scope
    return scope == "*" or (scope == "Namespaced") == bool(a.namespace)


class WebhookCaller:
    def __init__(self, store: ObjectStore) -> None:
        self.store = store
        # The revisions of the two webhook configuration resources when they
        # were last seen empty: unchanged, a write needs no matching at all.
        self._none_at: tuple[int, int] | None = None

    def none_registered(self) -> bool:
        """No webhook configuration is stored (known without listing them
        while neither resource has changed, on a store that counts its
        revisions)."""
        revision_of = getattr(self.store, "revision_of", None)
        if revision_of is None:
            return False
        revs = (revision_of(MUTATING), revision_of(VALIDATING))
        if revs == self._none_at:
            return True
        if self.store.list(MUTATING).items or self.store.list(VALIDATING).items:
            self._none_at = None
            return False
        self._none_at = revs
        return True

    def _namespace_matches(self, hook: Any, a: Attributes, obj: Mapping[str, Any]) -> bool:
        if a.kind == "Namespace" and not a.namespace:
            labels = (obj.get("metadata") or {}).get("labels")
            return selector_matches(hook.namespace_selector, labels)
        if not a.namespace:
            return True  # other cluster-scoped objects are never skipped
        try:
            ns = self.store.get(NAMESPACES, "", a.namespace)
        except NotFound:
            return selector_matches(hook.namespace_selector, {})
        return selector_matches(hook.namespace_selector, ns.metadata.labels)

    def _matching(self, rtype: Any, a: Attributes, obj: Mapping[str, Any], old: Any) -> list[Any]:
        out = []
        for conf in self.store.list(rtype).items:
            for hook in conf.webhooks or []:
                if not any(_rule_matches(r, a) for r in hook.rules or []):
                    continue
                if not self._namespace_matches(hook, a, obj):
                    continue
                labels = [(obj.get("metadata") or {}).get("labels")]
                if old is not None:
                    labels.append((old.get("metadata") or {}).get("labels"))
                if not any(selector_matches(hook.object_selector, lb) for lb in labels):
                    continue
                out.append(hook)
        return out

    def plan(
        self, a: Attributes, obj: dict[str, Any], old: dict[str, Any] | None
    ) -> tuple[Any, ...] | None:
        """The webhooks matching a write (read from the store), or None."""
        mutating = self._matching(MUTATING, a, obj, old)
        validating = self._matching(VALIDATING, a, obj, old)
        if not mutating and not validating:
            return None
        return (mutating, validating, a, obj, old)

    def run(
        self,
        mutating: list[Any],
        validating: list[Any],
        a: Attributes,
        obj: dict[str, Any],
        old: dict[str, Any] | None,
    ) -> dict[str, Any]:
        """The object after the mutating webhooks, validated by the
        validating ones (HTTP only: safe off the store's thread); raises
        Rejected."""
        for hook in mutating:
            patch = self._call(hook, a, obj, old)
            if patch is not None:
                try:
                    obj = apply(obj, patch)
                except PatchError as err:
                    raise Rejected(
                        500,
                        "InternalError",
                        f'Internal error occurred: admission webhook "{hook.name}" '
                        f"returned an invalid patch: {err}",
                    ) from None
        for hook in validating:
            self._call(hook, a, obj, old)
        return obj

    def admit(
        self, a: Attributes, obj: dict[str, Any], old: dict[str, Any] | None
    ) -> dict[str, Any]:
        """``plan`` and ``run`` in one call (a caller that may block)."""
        plan = self.plan(a, obj, old)
        return obj if plan is None else self.run(*plan)

    def _url(self, hook: Any) -> str:
        cc = hook.client_config
        if cc.url:
            return str(cc.url)
        svc = cc.service
        if svc is None:
            return ""
        return f"https://{svc.name}.{svc.namespace}.svc:{svc.port}{svc.path or ''}"

    def _call(
        self, hook: Any, a: Attributes, obj: dict[str, Any], old: dict[str, Any] | None
    ) -> list[Any] | None:
        url = self._url(hook)
        review = {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": str(uuid.uuid4()),
                "kind": {"group": a.group, "version": a.version, "kind": a.kind},
                "resource": {"group": a.group, "version": a.version, "resource": a.resource},
                "requestKind": {"group": a.group, "version": a.version, "kind": a.kind},
                "requestResource": {
                    "group": a.group,
                    "version": a.version,
                    "resource": a.resource,
                },
                **({"subResource": a.subresource} if a.subresource else {}),
                "name": a.name,
                "namespace": a.namespace,
                "operation": a.operation,
                "userInfo": dict(a.user),
                "object": obj,
                "oldObject": old,
                "dryRun": a.dry_run,
            },
        }
        try:
            answer = self._post(hook, url, review)
        except _CallFailed as err:
            if hook.failure_policy == "Ignore":
                return None
            raise Rejected(
                500,
                "InternalError",
                f'Internal error occurred: failed calling webhook "{hook.name}": '
                f'failed to call webhook: Post "{url}": {err}',
            ) from None
        if not answer.get("allowed"):
            status = answer.get("status") or {}
            message = status.get("message") or ""
            code = int(status.get("code") or 403)
            reason = status.get("reason") or "Forbidden"
            text = f'admission webhook "{hook.name}" denied the request'
            raise Rejected(
                code, reason, f"{text}: {message}" if message else f"{text} without explanation"
            )
        if answer.get("patch") and answer.get("patchType") == "JSONPatch":
            try:
                patch = json.loads(base64.b64decode(answer["patch"]))
            except ValueError as err:
                raise Rejected(
                    500,
                    "InternalError",
                    f'Internal error occurred: admission webhook "{hook.name}" '
                    f"returned an unreadable patch: {err}",
                ) from None
            return patch if isinstance(patch, list) else None
        return None

    def _post(self, hook: Any, url: str, review: dict[str, Any]) -> dict[str, Any]:
        if not url.startswith("https://"):
            raise _CallFailed(f"unsupported URL {url!r}: webhooks are called over HTTPS")
        ca = hook.client_config.ca_bundle
        try:
            ctx = (
                ssl.create_default_context(cadata=base64.b64decode(ca).decode())
                if ca
                else ssl.create_default_context()
            )
        except (ValueError, ssl.SSLError) as err:
            raise _CallFailed(f"clientConfig.caBundle: {err}") from None
        req = urllib.request.Request(
            url,
            data=json.dumps(review).encode(),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(req, context=ctx, timeout=hook.timeout_seconds) as r:
                body = json.loads(r.read())
        except TimeoutError:
            raise _CallFailed("context deadline exceeded") from None
        except urllib.error.URLError as err:
            if isinstance(err.reason, TimeoutError):
                raise _CallFailed("context deadline exceeded") from None
            raise _CallFailed(str(err.reason)) from None
        except (OSError, ValueError) as err:
            raise _CallFailed(str(err)) from None
        response = body.get("response") if isinstance(body, dict) else None
        if not isinstance(response, dict):
            raise _CallFailed("the webhook answered no AdmissionReview response")
        return response


class _CallFailed(Exception):
    pass
