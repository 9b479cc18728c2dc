"""admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy and
ValidatingAdmissionPolicyBinding: the types, kube-apiserver's defaults and
the checks of its validation (``pkg/apis/admissionregistration/validation``)
as far as kuota enforces policies (``kuota.webhooks.policy``): required
fields, enums, expressions that compile. Pure: no I/O."""

from __future__ import annotations

from typing import Literal

import msgspec

from kuota.api import names
from kuota.api.base import Object
from kuota.api.cel import POLICY_VARIABLES, CelError, compile_expr
from kuota.api.errors import FieldError, child, duplicate, index, invalid, not_supported, required
from kuota.api.k8s.validation.objectmeta import validate_object_meta
from kuota.api.meta import Condition, LabelSelector, ObjectMeta

__all__ = [
    "MatchResources",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "validate_binding",
    "validate_policy",
]

API_VERSION = "admissionregistration.k8s.io/v1"
_OPERATIONS = ("*", "CREATE", "UPDATE", "DELETE", "CONNECT")
_REASONS = ("Unauthorized", "Forbidden", "Invalid", "RequestEntityTooLarge")


class NamedRuleWithOperations(Object, kw_only=True):
    resource_names: list[str] | None = None
    operations: list[str] | None = None
    api_groups: list[str] | None = None
    api_versions: list[str] | None = None
    resources: list[str] | None = None
    scope: Literal["Cluster", "Namespaced", "*"] = "*"


class MatchResources(Object, kw_only=True):
    namespace_selector: LabelSelector = msgspec.field(default_factory=LabelSelector)
    object_selector: LabelSelector = msgspec.field(default_factory=LabelSelector)
    resource_rules: list[NamedRuleWithOperations] | None = None
    exclude_resource_rules: list[NamedRuleWithOperations] | None = None
    match_policy: Literal["Exact", "Equivalent"] = "Equivalent"


class ParamKind(Object, kw_only=True):
    api_version: str = ""
    kind: str = ""


class Validation(Object, kw_only=True):
    expression: str
    message: str | None = None
    reason: str | None = None
    message_expression: str | None = None


class AuditAnnotation(Object, kw_only=True):
    key: str
    value_expression: str


class MatchCondition(Object, kw_only=True):
    name: str
    expression: str


class Variable(Object, kw_only=True):
    name: str
    expression: str


class ValidatingAdmissionPolicySpec(Object, kw_only=True):
    param_kind: ParamKind | None = None
    match_constraints: MatchResources | None = None
    validations: list[Validation] | None = None
    failure_policy: Literal["Ignore", "Fail"] = "Fail"
    audit_annotations: list[AuditAnnotation] | None = None
    match_conditions: list[MatchCondition] | None = None
    variables: list[Variable] | None = None


class ExpressionWarning(Object, kw_only=True):
    field_ref: str
    warning: str


class TypeChecking(Object, kw_only=True):
    expression_warnings: list[ExpressionWarning] | None = None


class ValidatingAdmissionPolicyStatus(Object, kw_only=True):
    observed_generation: int | None = None
    type_checking: TypeChecking | None = None
    conditions: list[Condition] | None = None


class ValidatingAdmissionPolicy(Object, kw_only=True):
    api_version: str = API_VERSION
    kind: str = "ValidatingAdmissionPolicy"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ValidatingAdmissionPolicySpec = msgspec.field(
        default_factory=ValidatingAdmissionPolicySpec
    )
    status: ValidatingAdmissionPolicyStatus | None = None


class ParamRef(Object, kw_only=True):
    name: str | None = None
    namespace: str | None = None
    selector: LabelSelector | None = None
    parameter_not_found_action: Literal["Allow", "Deny"] | None = None


class ValidatingAdmissionPolicyBindingSpec(Object, kw_only=True):
    policy_name: str = ""
    param_ref: ParamRef | None = None
    match_resources: MatchResources | None = None
    validation_actions: list[str] | None = None


class ValidatingAdmissionPolicyBinding(Object, kw_only=True):
    api_version: str = API_VERSION
    kind: str = "ValidatingAdmissionPolicyBinding"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ValidatingAdmissionPolicyBindingSpec = msgspec.field(
        default_factory=ValidatingAdmissionPolicyBindingSpec
    )


def _expression(path: str, source: str, errs: list[FieldError]) -> None:
    if not source.strip():
        errs.append(required(path, ""))
        return
    try:
        compile_expr(source, POLICY_VARIABLES)
    except CelError as err:
        if not err.unsupported:  # (a function kuota's CEL lacks: not evaluated)
            errs.append(invalid(path, source, str(err)))


def _rules(path: str, rules: list[NamedRuleWithOperations] | None, errs: list[FieldError]) -> None:
    for i, r in enumerate(rules or ()):
        rp = index(path, i)
        for j, op in enumerate(r.operations or ()):
            if op not in _OPERATIONS:
                errs.append(not_supported(index(child(rp, "operations"), j), op, _OPERATIONS))
        for field_name in ("apiGroups", "apiVersions", "resources", "operations"):
            value = getattr(r, names_attr(field_name))
            if not value:
                errs.append(required(child(rp, field_name), ""))


def names_attr(wire: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in wire)


def _match(path: str, m: MatchResources, errs: list[FieldError], need_rules: bool) -> None:
    if need_rules and not m.resource_rules:
        errs.append(required(child(path, "resourceRules"), ""))
    _rules(child(path, "resourceRules"), m.resource_rules, errs)
    _rules(child(path, "excludeResourceRules"), m.exclude_resource_rules, errs)


def validate_policy(p: ValidatingAdmissionPolicy) -> list[FieldError]:
    errs = validate_object_meta(p.metadata, False, names.is_dns1123_subdomain)
    spec = p.spec
    if spec.match_constraints is None:
        errs.append(required("spec.matchConstraints", ""))
    else:
        _match("spec.matchConstraints", spec.match_constraints, errs, True)
    if not spec.validations and not spec.audit_annotations:
        errs.append(
            required(
                "spec.validations", "validations or auditAnnotations must contain at least one item"
            )
        )
    for i, v in enumerate(spec.validations or ()):
        vp = index("spec.validations", i)
        _expression(child(vp, "expression"), v.expression, errs)
        if v.message_expression:
            _expression(child(vp, "messageExpression"), v.message_expression, errs)
        if v.reason is not None and v.reason not in _REASONS:
            errs.append(not_supported(child(vp, "reason"), v.reason, _REASONS))
    seen: set[str] = set()
    for i, c in enumerate(spec.match_conditions or ()):
        cp = index("spec.matchConditions", i)
        if not c.name:
            errs.append(required(child(cp, "name"), ""))
        elif c.name in seen:
            errs.append(duplicate(child(cp, "name"), c.name))
        seen.add(c.name)
        _expression(child(cp, "expression"), c.expression, errs)
    for i, var in enumerate(spec.variables or ()):
        vp = index("spec.variables", i)
        if not var.name:
            errs.append(required(child(vp, "name"), ""))
        _expression(child(vp, "expression"), var.expression, errs)
    for i, a in enumerate(spec.audit_annotations or ()):
        _expression(
            child(index("spec.auditAnnotations", i), "valueExpression"), a.value_expression, errs
        )
    if spec.param_kind is not None:
        for field_name, value in (
            ("apiVersion", spec.param_kind.api_version),
            ("kind", spec.param_kind.kind),
        ):
            if not value:
                errs.append(required(child("spec.paramKind", field_name), ""))
    return errs


_ACTIONS = ("Deny", "Warn", "Audit")


def validate_binding(b: ValidatingAdmissionPolicyBinding) -> list[FieldError]:
    errs = validate_object_meta(b.metadata, False, names.is_dns1123_subdomain)
    spec = b.spec
    if not spec.policy_name:
        errs.append(required("spec.policyName", ""))
    actions = spec.validation_actions or []
    if not actions:
        errs.append(
            required("spec.validationActions", "at least one validation action is required")
        )
    seen: set[str] = set()
    for i, a in enumerate(actions):
        ap = index("spec.validationActions", i)
        if a not in _ACTIONS:
            errs.append(not_supported(ap, a, _ACTIONS))
        elif a in seen:
            errs.append(duplicate(ap, a))
        seen.add(a)
    if "Deny" in seen and "Warn" in seen:
        errs.append(
            invalid(
                "spec.validationActions",
                actions,
                'must not contain both "Deny" and "Warn" (repeating the same validation failure '
                "information in the API response and headers serves no purpose)",
            )
        )
    if spec.match_resources is not None:
        _match("spec.matchResources", spec.match_resources, errs, False)
    ref = spec.param_ref
    if ref is not None:
        if not ref.name and ref.selector is None:
            errs.append(required("spec.paramRef", "one of name or selector must be specified"))
        if ref.parameter_not_found_action is None:
            errs.append(required(child("spec.paramRef", "parameterNotFoundAction"), ""))
    return errs
