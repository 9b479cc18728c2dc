"""policy/v1 PodDisruptionBudget (``k8s.io/api/policy/v1``): every JSON field,
and kube-apiserver's validation of it (``pkg/apis/policy/validation``,
``ValidatePodDisruptionBudget``). Stored and served; the embedded cluster's
disruption controller writes ``status`` (kuota.cluster.controllers.disruption);
kuota has no eviction API that would read it."""

from __future__ import annotations

from datetime import datetime
from typing import Final

import msgspec

from kuota.api.base import Object
from kuota.api.errors import FieldError, child, invalid, not_supported
from kuota.api.k8s.apps import IntOrString, _positive_int_or_percent
from kuota.api.k8s.validation.objectmeta import validate_label_selector
from kuota.api.meta import Condition, LabelSelector, ObjectMeta

__all__ = [
    "GROUP",
    "PodDisruptionBudget",
    "PodDisruptionBudgetSpec",
    "PodDisruptionBudgetStatus",
    "validate_pdb",
]

GROUP: Final = "policy"
# UnhealthyPodEvictionPolicyType's values (nil means IfHealthyBudget).
EVICTION_POLICIES: Final = ("AlwaysAllow", "IfHealthyBudget")


class PodDisruptionBudgetSpec(Object):
    min_available: IntOrString | None = None
    selector: LabelSelector | None = None
    max_unavailable: IntOrString | None = None
    unhealthy_pod_eviction_policy: str | None = None


class PodDisruptionBudgetStatus(Object):
    observed_generation: int | None = None
    disrupted_pods: dict[str, datetime] | None = None
    disruptions_allowed: int = 0
    current_healthy: int = 0
    desired_healthy: int = 0
    expected_pods: int = 0
    conditions: list[Condition] | None = None


class PodDisruptionBudget(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodDisruptionBudgetSpec = msgspec.field(default_factory=PodDisruptionBudgetSpec)
    status: PodDisruptionBudgetStatus | None = None


Errors = list[FieldError]


def validate_pdb(pdb: PodDisruptionBudget) -> Errors:
    """``ValidatePodDisruptionBudgetSpec`` (the metadata is checked on decoding)."""
    spec, path = pdb.spec, "spec"
    errs: Errors = []
    if spec.min_available is not None and spec.max_unavailable is not None:
        errs.append(
            invalid(
                path,
                msgspec.to_builtins(spec),
                "minAvailable and maxUnavailable cannot be both set",
            )
        )
    if spec.min_available is not None:
        errs += _positive_int_or_percent(spec.min_available, child(path, "minAvailable"))
    if spec.max_unavailable is not None:
        errs += _positive_int_or_percent(spec.max_unavailable, child(path, "maxUnavailable"))
    errs += validate_label_selector(spec.selector, child(path, "selector"))
    policy = spec.unhealthy_pod_eviction_policy
    if policy is not None and policy not in EVICTION_POLICIES:
        errs.append(
            not_supported(child(path, "unhealthyPodEvictionPolicy"), policy, EVICTION_POLICIES)
        )
    return errs
