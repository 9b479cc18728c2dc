"""How k8s.io/api's Go types appear in Kubernetes' published OpenAPI v3
documents (v1.32), where kuota's Python types say less: integer widths,
``metav1.Time``, ``resource.Quantity`` and ``intstr.IntOrString`` in
kube-openapi's forms, the required lists of fields kuota defaults, and the
structs marked ``+structType=atomic``. Applied to the built-in kinds only:
a CRD's schema keeps its own forms (``x-kubernetes-int-or-string``), as
kube-apiserver serves a CRD's schema as written. Checked field by field by
tests/server/openapi/test_builtin_reference.py.
"""

from __future__ import annotations

from typing import Any, Final

# Go int64 fields (every other integer of a built-in kind is an int32).
INT64: Final = frozenset(
    {
        ("ObjectMeta", "generation"),
        ("ObjectMeta", "deletionGracePeriodSeconds"),
        ("ControllerRevision", "revision"),
        ("CronJobSpec", "startingDeadlineSeconds"),
        ("JobSpec", "activeDeadlineSeconds"),
        ("PodSpec", "activeDeadlineSeconds"),
        ("PodSpec", "terminationGracePeriodSeconds"),
        ("Toleration", "tolerationSeconds"),
    }
)
INT64_FIELDS: Final = frozenset({"observedGeneration"})  # int64 in every type

# Required fields kuota's types default instead (k8s.io/api fields without
# omitempty); the list replaces the one kuota's types give.
REQUIRED: Final[dict[str, list[str]]] = {
    "DaemonSetStatus": [
        "currentNumberScheduled",
        "numberMisscheduled",
        "desiredNumberScheduled",
        "numberReady",
    ],
    "ReplicaSetStatus": ["replicas"],
    "StatefulSetStatus": ["replicas"],
    "HorizontalPodAutoscalerStatus": ["desiredReplicas"],
    "V1HorizontalPodAutoscalerStatus": ["currentReplicas", "desiredReplicas"],
    "PodDisruptionBudgetStatus": [
        "disruptionsAllowed",
        "currentHealthy",
        "desiredHealthy",
        "expectedPods",
    ],
    "HTTPIngressPath": ["pathType", "backend"],
    "HTTPIngressRuleValue": ["paths"],
    "IngressServiceBackend": ["name"],
    "ControllerRevision": ["revision"],
    "Event": ["metadata", "involvedObject"],
    "PolicyRule": ["verbs"],
    "ValidatingWebhook": ["admissionReviewVersions", "clientConfig", "name", "sideEffects"],
    "MutatingWebhook": ["admissionReviewVersions", "clientConfig", "name", "sideEffects"],
    "Validation": ["expression"],
    "AuditAnnotation": ["key", "valueExpression"],
    "MatchCondition": ["name", "expression"],
    "Variable": ["name", "expression"],
    "ExpressionWarning": ["fieldRef", "warning"],
    "Condition": ["type", "status", "lastTransitionTime", "reason", "message"],
}

# +structType=atomic: server-side apply owns the struct as one value.
ATOMIC_STRUCTS: Final = frozenset(
    {
        "LabelSelector",
        "NodeSelector",
        "NodeSelectorTerm",
        "OwnerReference",
        "ObjectReference",
        "Subject",
        "RoleRef",
        "V1CrossVersionObjectReference",
        # networking/v1, core/v1 ResourceQuota's
        "TypedLocalObjectReference",
        "ServiceBackendPort",
        "ScopeSelector",
        # ValidatingAdmissionPolicy's
        "MatchResources",
        "NamedRuleWithOperations",
        "ParamKind",
        "ParamRef",
        "Variable",
    }
)

QUANTITY: Final[dict[str, Any]] = {"oneOf": [{"type": "string"}, {"type": "number"}]}
INT_OR_STRING: Final[dict[str, Any]] = {
    "format": "int-or-string",
    "oneOf": [{"type": "integer"}, {"type": "string"}],
}
_SCHEMA_KEYS: Final = ("type", "anyOf", "oneOf", "pattern", "format", "x-kubernetes-int-or-string")


def _replace(s: dict[str, Any], form: dict[str, Any]) -> None:
    for k in _SCHEMA_KEYS:
        s.pop(k, None)
    s.update(form)


def scalar_form(s: dict[str, Any], struct: str, field: str) -> None:
    """Give a scalar field's schema its Go type's published form."""
    if s.get("x-kubernetes-int-or-string") and "pattern" in s:
        _replace(s, QUANTITY)  # kuota's Quantity: the CRD form, with its pattern
        return
    members = {m.get("type") for m in s.get("anyOf") or ()}
    if members and members - {"null"} == {"integer", "string"}:
        _replace(s, INT_OR_STRING)
        return
    if s.get("type") == "integer" and "format" not in s:
        s["format"] = "int64" if field in INT64_FIELDS or (struct, field) in INT64 else "int32"


def struct_form(s: dict[str, Any], struct: str) -> None:
    """Give a struct's schema its Go type's required list and struct type."""
    if struct in REQUIRED:
        s["required"] = list(REQUIRED[struct])
    if struct in ATOMIC_STRUCTS:
        s["x-kubernetes-map-type"] = "atomic"
