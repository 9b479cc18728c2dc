"""ValidatingAdmissionPolicies enforced as kube-apiserver's admission plugin
does (``k8s.io/apiserver/pkg/admission/plugin/policy/validating``), as a
store admission hook: on every create, update and delete (of any writer:
users and controllers alike, as on a cluster), each stored policy whose
``matchConstraints`` match the request (resource rules, excluded rules,
namespace and object selectors) and each of its bindings whose
``matchResources`` match too have the policy's ``matchConditions`` then
``validations`` evaluated in CEL (``object``, ``oldObject``, ``request``,
``namespaceObject``, ``params``, ``variables``). A validation that is false
denies under a binding's ``Deny`` action with kube-apiserver's text
(``<resource> "<name>" is forbidden: ValidatingAdmissionPolicy '<p>' with
binding '<b>' denied request: <message>``, reason Invalid unless the
validation names another); one that fails to evaluate denies under
``failurePolicy: Fail`` and is skipped under ``Ignore``.

Params: a policy's ``paramKind`` with a binding's ``paramRef`` (by name or
selector, ``parameterNotFoundAction``) evaluate the validations once per
param object, as ``params``.

A binding's ``Warn`` action adds kube-apiserver's warning (``Validation
failed for ValidatingAdmissionPolicy '<p>' with binding '<b>': <message>``)
and ``Audit`` the request's ``validation.policy.admission.k8s.io/
validation_failure`` audit annotation; a policy's ``auditAnnotations`` add
``<policy>/<key>``. Both go to the writer's collector
(:mod:`kuota.webhooks.admission_notes`): ``kuota serve`` answers the warnings
as ``Warning`` headers and logs the audit annotations (kuota keeps no audit
log), ``kuota run`` prints both for the world's objects.

Not there: ``matchPolicy: Equivalent`` across versions, status subresource
writes, the authorizer library.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from kuota.api.base import enc_hook
from kuota.api.cel import POLICY_VARIABLES, CelError, compile_expr
from kuota.api.k8s.admission_policy import (
    MatchResources,
    NamedRuleWithOperations,
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
)
from kuota.api.meta import selector_matches
from kuota.store.kinds import kind_named, resource_for, resource_type
from kuota.store.protocol import NotFound, ObjectStore, StoreError, group_of
from kuota.webhooks.admission_notes import add_annotation, add_warning

__all__ = ["PolicyDenied", "ValidatingAdmissionPolicies"]

_GROUP = "admissionregistration.k8s.io"
POLICIES = resource_for(f"{_GROUP}/v1", "ValidatingAdmissionPolicy")
BINDINGS = resource_for(f"{_GROUP}/v1", "ValidatingAdmissionPolicyBinding")
NAMESPACES = resource_for("v1", "Namespace")
_CODES = {"Unauthorized": 401, "Forbidden": 403, "RequestEntityTooLarge": 413}


class PolicyDenied(StoreError):
    """A request a policy denied: the Status kube-apiserver answers
    (``details`` with the cause kubectl prints)."""

    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any]) -> None:
        super().__init__(message)
        self.code, self.reason, self.details = code, reason, details


def _rule_matches(
    r: NamedRuleWithOperations, op: str, rtype: tuple[str, ...], name: str, namespaced: bool
) -> bool:
    group, version, resource = rtype[0], rtype[1], rtype[2]

    def has(values: list[str] | None, v: str) -> bool:
        return bool(values) and ("*" in values or v in values)  # type: ignore[operator]

    if not (has(r.operations, op) and has(r.api_groups, group) and has(r.api_versions, version)):
        return False
    res = r.resources or []
    if not ("*" in res or "*/*" in res or resource in res):
        return False
    if r.scope != "*" and (r.scope == "Namespaced") != namespaced:
        return False
    return not r.resource_names or name in r.resource_names


def _labels(obj: Mapping[str, Any] | None) -> dict[str, str]:
    if not obj:
        return {}
    return (obj.get("metadata") or {}).get("labels") or {}


class ValidatingAdmissionPolicies:
    validating = True
    status_writes = False
    operations = frozenset({"CREATE", "UPDATE", "DELETE"})

    def __init__(self, store: Callable[[], ObjectStore]) -> None:
        self._store = store
        self._at: tuple[int, int] | None = None
        self._pairs: list[
            tuple[ValidatingAdmissionPolicy, list[ValidatingAdmissionPolicyBinding]]
        ] = []

    def _policies(
        self,
    ) -> list[tuple[ValidatingAdmissionPolicy, list[ValidatingAdmissionPolicyBinding]]]:
        """The stored policies with their bindings, read again only when
        either resource changed (on a store that counts revisions)."""
        store = self._store()
        revision_of = getattr(store, "revision_of", None)
        revs = (revision_of(POLICIES), revision_of(BINDINGS)) if revision_of else None
        if revs is not None and revs == self._at:
            return self._pairs
        bindings: dict[str, list[ValidatingAdmissionPolicyBinding]] = {}
        for b in store.list(BINDINGS).items:
            bindings.setdefault(b.spec.policy_name, []).append(b)
        self._pairs = [
            (p, sorted(bindings[p.metadata.name], key=lambda b: b.metadata.name))
            for p in sorted(store.list(POLICIES).items, key=lambda p: p.metadata.name)
            if p.metadata.name in bindings
        ]
        self._at = revs
        return self._pairs

    def __call__(self, op: str, new: Any, old: Any | None) -> Any:
        pairs = self._policies()
        if not pairs:
            return new
        rtype = resource_type(new)
        if rtype[0] == _GROUP:
            return new  # (kube-apiserver's policies never see its admission configuration)
        obj = None if op == "DELETE" else _raw(new)
        prev = _raw(old) if old is not None and op != "CREATE" else None
        m = new.metadata
        namespaced = bool(m.namespace)
        ctx = _Request(self._store, op, rtype, new.kind, m.name, m.namespace, obj, prev)
        # (validating.dispatcher.Dispatch: every binding's decisions are
        # gathered, warnings and audit annotations published, and the first
        # Deny decision, if any, refuses the request)
        denied: list[tuple[ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding, str, str]]
        denied = []
        for policy, bindings in pairs:
            spec = policy.spec
            if spec.match_constraints is None or not ctx.matches(
                spec.match_constraints, namespaced, need_rules=True
            ):
                continue
            audit: dict[str, list[str]] = {}
            for binding in bindings:
                mr = binding.spec.match_resources
                if mr is not None and not ctx.matches(mr, namespaced, need_rules=False):
                    continue
                try:
                    params = self._params(policy, binding, ctx)
                except _ConfigError as err:
                    if spec.failure_policy != "Ignore":
                        message = f"failed to configure binding: {err}"
                        denied.append((policy, binding, "Invalid", message))
                    continue
                actions = binding.spec.validation_actions or ()
                for param in params:
                    result = _evaluate(policy, ctx, param)
                    for index, reason, message in result.denials:
                        for action in actions:
                            if action == "Deny":
                                denied.append((policy, binding, reason, message))
                            elif action == "Warn":
                                add_warning(
                                    f"Validation failed for ValidatingAdmissionPolicy "
                                    f"'{policy.metadata.name}' with binding "
                                    f"'{binding.metadata.name}': {message}"
                                )
                            elif action == "Audit":
                                _publish_failure(binding, index, message)
                    for key, value in result.annotations:
                        values = audit.setdefault(key, [])
                        if value not in values:
                            values.append(value[:_MAX_ANNOTATION])
                    for message in result.annotation_errors:
                        denied.append((policy, binding, "Invalid", message))
            # (auditAnnotationCollector.publish: values of several bindings joined)
            for key, values in audit.items():
                add_annotation(f"{policy.metadata.name}/{key}", ", ".join(values))
        if denied:
            policy, binding, reason, message = denied[0]
            raise _denied(ctx, policy, binding, reason, message)
        return new

    def _params(
        self,
        policy: ValidatingAdmissionPolicy,
        binding: ValidatingAdmissionPolicyBinding,
        ctx: _Request,
    ) -> list[dict[str, Any] | None]:
        """The params a binding gives the policy (generic.CollectParams):
        ``[None]`` without paramKind or paramRef; the object paramRef names,
        or those its selector picks, in its namespace (for a namespaced kind
        without one, the request's)."""
        kind, ref = policy.spec.param_kind, binding.spec.param_ref
        if kind is None or ref is None:
            return [None]
        try:
            info = kind_named(group_of(kind.api_version), kind.kind)
        except NotFound:
            raise _ConfigError(
                f"paramKind kind `{kind.api_version}, Kind={kind.kind}` not known"
            ) from None
        ns = ref.namespace or ""
        if info.namespaced and not ns:
            ns = ctx.namespace
            if not ns:
                raise _ConfigError(
                    "cannot use namespaced paramRef in policy binding that matches "
                    "cluster-scoped resources"
                )
        store = self._store()
        found: list[Any]
        if ref.name:
            try:
                found = [store.get(info.rtype, ns, ref.name)]
            except NotFound:
                found = []
        else:
            found = [
                o
                for o in store.list(info.rtype, ns or None).items
                if selector_matches(ref.selector, o.metadata.labels)
            ]
        if not found and ref.parameter_not_found_action == "Deny":
            raise _ConfigError(
                "no params found for policy binding with `Deny` parameterNotFoundAction"
            )
        return [_raw(o) for o in found]


class _ConfigError(Exception):
    """A binding kube-apiserver cannot apply (its params): the policy's
    failurePolicy decides."""


def _raw(obj: Any) -> dict[str, Any]:
    """An object as kube-apiserver hands it to CEL (its unstructured form):
    the wire fields, and a nested struct even when empty (Go's JSON keeps a
    struct field that ``omitempty`` cannot omit: a container's
    ``resources: {}``, which ``has(c.resources.requests)`` reads)."""
    out: dict[str, Any] = _full(obj)
    return out


# The fields of Kubernetes' types that are Go value structs (never omitted
# from the unstructured form), by wire name, where kuota's structs make
# them optional: what policies read (a container's resources, a template's
# metadata and spec, an object's status).
_VALUE_STRUCTS = frozenset(
    {"metadata", "spec", "status", "template", "resources", "strategy", "updateStrategy"}
)


def _struct_type(t: Any) -> type | None:
    if isinstance(t, type) and issubclass(t, msgspec.Struct):
        return t
    for a in getattr(t, "__args__", ()):
        if isinstance(a, type) and issubclass(a, msgspec.Struct):
            return a
    return None


def _full(v: Any) -> Any:
    if isinstance(v, msgspec.Struct):
        out: dict[str, Any] = {}
        for f in msgspec.structs.fields(v):
            x = getattr(v, f.name)
            if x is None:
                if f.encode_name in _VALUE_STRUCTS and _struct_type(f.type) is not None:
                    out[f.encode_name] = {}
                continue
            if isinstance(x, msgspec.Struct) or not _is_default(f, x):
                out[f.encode_name] = _full(x)
        return out
    if isinstance(v, list | tuple):
        return [_full(x) for x in v]
    if isinstance(v, dict):
        return {k: _full(x) for k, x in v.items()}
    return msgspec.to_builtins(v, enc_hook=enc_hook)


def _is_default(f: Any, x: Any) -> bool:
    if f.default is not msgspec.NODEFAULT:
        return bool(x == f.default)
    if f.default_factory is not msgspec.NODEFAULT:
        return bool(x == f.default_factory())
    return False


class _Request:
    """One write's admission attributes, and what CEL reads of it."""

    def __init__(
        self,
        store: Callable[[], ObjectStore],
        op: str,
        rtype: tuple[str, ...],
        kind: str,
        name: str,
        namespace: str,
        obj: dict[str, Any] | None,
        old: dict[str, Any] | None,
    ) -> None:
        self.store, self.op, self.rtype, self.kind = store, op, rtype, kind
        self.name, self.namespace, self.obj, self.old = name, namespace, obj, old
        self._ns: dict[str, Any] | None = None
        self._ns_read = False

    def namespace_object(self) -> dict[str, Any] | None:
        if not self._ns_read:
            self._ns_read = True
            if self.namespace:
                try:
                    self._ns = _raw(self.store().get(NAMESPACES, "", self.namespace))
                except NotFound:
                    self._ns = None
        return self._ns

    def matches(self, m: MatchResources, namespaced: bool, need_rules: bool) -> bool:
        """``matchConstraints`` or a binding's ``matchResources``
        (generic.PolicyMatcher): resource rules (a binding's may be empty:
        all the policy matched), excluded rules, then the selectors."""
        rules = m.resource_rules or []
        if (need_rules or rules) and not any(
            _rule_matches(r, self.op, self.rtype, self.name, namespaced) for r in rules
        ):
            return False
        if any(
            _rule_matches(r, self.op, self.rtype, self.name, namespaced)
            for r in m.exclude_resource_rules or ()
        ):
            return False
        if self.kind == "Namespace" and self.rtype[0] == "" and not self.namespace:
            ns_labels = _labels(self.obj or self.old)
        elif not self.namespace:
            ns_labels = None  # cluster-scoped: the namespace selector does not apply
        else:
            ns_labels = _labels(self.namespace_object())
        if ns_labels is not None and not selector_matches(m.namespace_selector, ns_labels):
            return False
        return any(
            selector_matches(m.object_selector, _labels(o))
            for o in (self.obj, self.old)
            if o is not None
        ) or (self.obj is None and self.old is None)

    def activation(self) -> dict[str, Any]:
        group, version, resource = self.rtype[0], self.rtype[1], self.rtype[2]
        kind = {"group": group, "version": version, "kind": self.kind}
        res = {"group": group, "version": version, "resource": resource}
        return {
            "object": self.obj,
            "oldObject": self.old,
            "params": None,
            "namespaceObject": self.namespace_object(),
            "request": {
                "kind": kind,
                "resource": res,
                "requestKind": kind,
                "requestResource": res,
                "name": self.name,
                "namespace": self.namespace,
                "operation": self.op,
                "userInfo": {},
                "dryRun": False,
            },
        }


def _eval(source: str, data: Mapping[str, Any]) -> Any:
    return compile_expr(source, POLICY_VARIABLES).eval(data)


class _Result:
    """One evaluation of a policy under a binding and param (validator.
    Validate): the failed validations (index, reason, message), the audit
    annotations to publish (key, value) and those that failed under
    ``failurePolicy: Fail`` (they deny)."""

    __slots__ = ("annotation_errors", "annotations", "denials")

    def __init__(self) -> None:
        self.denials: list[tuple[int, str, str]] = []
        self.annotations: list[tuple[str, str]] = []
        self.annotation_errors: list[str] = []


def _evaluate(
    policy: ValidatingAdmissionPolicy, ctx: _Request, params: dict[str, Any] | None = None
) -> _Result:
    """Every validation of ``policy`` for the request and its audit
    annotations (none when its matchConditions are not all true)."""
    spec = policy.spec
    fail = spec.failure_policy != "Ignore"
    out = _Result()
    data = ctx.activation()
    data["params"] = params
    errors: list[str] = []
    for cond in spec.match_conditions or ():
        try:
            if _eval(cond.expression, data) is not True:
                return out  # a false condition: the policy does not apply
        except CelError as err:
            errors.append(f"expression '{cond.expression}' resulted in error: {err}")
    if errors:
        if fail:
            out.denials.append((0, "Invalid", errors[0]))
        return out
    variables: dict[str, Any] = {}
    data["variables"] = variables
    for var in spec.variables or ():
        with contextlib.suppress(CelError):  # (one reading it fails as no such key)
            variables[var.name] = _eval(var.expression, data)
    for i, v in enumerate(spec.validations or ()):
        try:
            ok = _eval(v.expression, data)
        except CelError as err:
            if err.unsupported:
                continue  # a function kuota's CEL lacks: not evaluated
            if fail:
                message = f"expression '{v.expression.strip()}' resulted in error: {err}"
                out.denials.append((i, "Invalid", message))
            continue
        if ok is True:
            continue
        message = _message(v.expression, v.message, v.message_expression, data)
        out.denials.append((i, v.reason or "Invalid", message))
    for a in spec.audit_annotations or ():
        try:
            value = _eval(a.value_expression, data)
        except CelError as err:
            if err.unsupported:
                continue
            if fail:
                out.annotation_errors.append(
                    f"expression '{a.value_expression.strip()}' resulted in error: {err}"
                )
            continue
        if value is None or (isinstance(value, str) and not value.strip()):
            continue  # null or blank: not published
        if not isinstance(value, str):
            if fail:
                out.annotation_errors.append(
                    f"valueExpression '{a.value_expression}' resulted in unsupported return "
                    f"type: {_cel_type(value)}. Return type must be either string or null."
                )
            continue
        out.annotations.append((a.key, value.strip()))
    return out


def _cel_type(value: Any) -> str:
    """A CEL value's type name, as cel-go prints it."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "map"
    return type(value).__name__


# (validating.maxAuditAnnotationValueLength)
_MAX_ANNOTATION = 10 * 1024
VALIDATION_FAILURE = "validation.policy.admission.k8s.io/validation_failure"


def _publish_failure(binding: ValidatingAdmissionPolicyBinding, index: int, message: str) -> None:
    """An ``Audit`` action: the failure as kube-apiserver's audit annotation
    (publishValidationFailureAnnotation; one per request, the first kept)."""
    value = json.dumps(
        [
            {
                "message": message,
                "policy": binding.spec.policy_name,
                "binding": binding.metadata.name,
                "expressionIndex": index,
                "validationActions": list(binding.spec.validation_actions or ()),
            }
        ],
        separators=(",", ":"),
        ensure_ascii=False,
    )
    # (Go's encoding/json escapes these for HTML)
    value = value.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    add_annotation(VALIDATION_FAILURE, value)


def _message(
    expression: str, message: str | None, message_expression: str | None, data: Mapping[str, Any]
) -> str:
    if message_expression:
        try:
            text = _eval(message_expression, data)
        except CelError:
            text = None
        if isinstance(text, str) and text.strip() and "\n" not in text.strip():
            return text.strip()
    if message and message.strip():
        return message.strip()
    return f"failed expression: {expression.strip()}"


def _denied(
    ctx: _Request,
    policy: ValidatingAdmissionPolicy,
    binding: ValidatingAdmissionPolicyBinding,
    reason: str,
    message: str,
) -> PolicyDenied:
    text = (
        f"ValidatingAdmissionPolicy '{policy.metadata.name}' with binding "
        f"'{binding.metadata.name}' denied request: {message}"
    )
    group, resource = ctx.rtype[0], ctx.rtype[2]
    gr = f"{resource}.{group}" if group else resource
    full = f'{gr} "{ctx.name}" is forbidden: {text}' if ctx.name else f"{gr} is forbidden: {text}"
    details = {"name": ctx.name, "group": group, "kind": resource, "causes": [{"message": text}]}
    return PolicyDenied(_CODES.get(reason, 422), reason, full, details)
