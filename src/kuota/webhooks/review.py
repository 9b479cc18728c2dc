"""AdmissionReview v1 answered by the admission hooks the embedded plane runs.

A webhook path names a kind (controller-runtime's ``/mutate-<group>-<version>-
<kind>``); the request's object is decoded as the API server and Kueue decode
it (schema, CEL rules, Kueue's webhook rules), then the store admission hooks
of that kind run on it: the mutating ones answer with a JSONPatch from the
object received to the object they return, the validating ones with a denial
carrying their field errors (``allowed: false``, code 403, as
controller-runtime reports a validator's error). The hooks are the very
objects ``ControlPlane`` installs in its store: no second copy of a rule.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kuota.api.decode import decode_object, to_wire
from kuota.store.kinds import resource_for
from kuota.store.protocol import AdmissionHook, Invalid, StoreError
from kuota.webhooks.jsonpatch import diff


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One webhook path: the kind it admits and whether it mutates."""

    api_version: str
    kind: str
    mutating: bool

    @property
    def path(self) -> str:
        group, _, version = self.api_version.rpartition("/")
        prefix = "mutate" if self.mutating else "validate"
        return f"/{prefix}-{group.replace('.', '-')}-{version}-{self.kind.lower()}"


class ReviewError(ValueError):
    """The request is no AdmissionReview v1 (answered 400)."""


def _allowed(uid: str) -> dict[str, Any]:
    return {"uid": uid, "allowed": True}


def _denied(uid: str, message: str) -> dict[str, Any]:
    return {
        "uid": uid,
        "allowed": False,
        "status": {"code": 403, "reason": "Forbidden", "message": message, "status": "Failure"},
    }


def _envelope(response: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}


def parse(body: bytes) -> dict[str, Any]:
    try:
        review = json.loads(body)
    except ValueError as err:
        raise ReviewError(f"the body is not JSON: {err}") from None
    if not isinstance(review, dict) or review.get("kind") != "AdmissionReview":
        raise ReviewError("kind: expected AdmissionReview")
    if review.get("apiVersion") != "admission.k8s.io/v1":
        raise ReviewError(f"apiVersion: {review.get('apiVersion')!r} is not admission.k8s.io/v1")
    request = review.get("request")
    if not isinstance(request, dict) or not isinstance(request.get("uid"), str):
        raise ReviewError("request.uid: required")
    return request


class Reviewer:
    """Answers the reviews of one set of admission hooks."""

    def __init__(self, hooks: Sequence[AdmissionHook], gates: Mapping[str, bool]) -> None:
        self.hooks = tuple(hooks)
        self.gates = gates

    def _hooks(self, rtype: Any, op: str, validating: bool, status: bool) -> list[AdmissionHook]:
        return [
            h
            for h in self.hooks
            if rtype in getattr(h, "kinds", (rtype,))
            and op in getattr(h, "operations", (op,))
            and bool(getattr(h, "validating", False)) == validating
            and (not status or getattr(h, "status_writes", True))
        ]

    def _decode(self, raw: Any, what: str) -> Any:
        doc = decode_object(raw, source=what, gates=self.gates)
        if doc.errors:
            ref = f"{doc.kind}.{doc.api_version.split('/')[0]} {doc.name!r}"
            raise Invalid(ref, doc.errors)
        return doc.obj

    def review(self, endpoint: Endpoint, request: dict[str, Any]) -> dict[str, Any]:
        """The AdmissionReview answering ``request`` at ``endpoint``."""
        uid = request["uid"]
        op = request.get("operation")
        if op not in ("CREATE", "UPDATE", "DELETE", "CONNECT"):
            raise ReviewError(f"request.operation: {op!r} is not supported")
        if op in ("DELETE", "CONNECT"):
            return _envelope(_allowed(uid))  # Kueue's webhooks admit no deletes
        raw = request.get("object")
        if not isinstance(raw, dict):
            raise ReviewError("request.object: required for CREATE and UPDATE")
        status = request.get("subResource") == "status"
        try:
            rtype = resource_for(endpoint.api_version, endpoint.kind)
        except KeyError:
            return _envelope(_allowed(uid))  # a kind kuota does not know: no-op
        if endpoint.mutating and decode_object(raw, gates=self.gates).errors:
            # A defaulter does not validate (controller-runtime decodes and
            # defaults): the validating webhook, called after, refuses it.
            return _envelope(_allowed(uid))
        try:
            obj = self._decode(raw, "request.object")
            old = None
            if op == "UPDATE" and isinstance(request.get("oldObject"), dict):
                old = self._decode(request["oldObject"], "request.oldObject")
            if endpoint.mutating:
                out = obj
                for hook in self._hooks(rtype, op, False, status):
                    changed = hook(op, out, old)
                    out = changed if changed is not None else out
                patch = diff(raw, to_wire(out))
                response = _allowed(uid)
                if patch:
                    response["patchType"] = "JSONPatch"
                    response["patch"] = base64.b64encode(json.dumps(patch).encode()).decode()
                return _envelope(response)
            for hook in self._hooks(rtype, op, True, status):
                hook(op, obj, old)
        except Invalid as err:
            return _envelope(_denied(uid, str(err)))
        except StoreError as err:
            return _envelope(_denied(uid, str(err)))
        return _envelope(_allowed(uid))
