"""Kueue's Workload, v1beta2-shaped (part of kuota's one internal model, which
``types`` exports): its spec, status, topology assignments and CEL rules
(``apis/kueue/v1beta2/workload_types.go`` at Kueue ff69552e).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec

from kuota.api.base import (
    LIST_ATOMIC,
    Meta,
    Object,
    Rule,
    cel,
    list_map,
    pattern,
)
from kuota.api.k8s.corev1 import PodTemplateSpec, ResourceList, Toleration
from kuota.api.kueue.quota_types import (
    CLUSTER_QUEUE_IMMUTABLE,
    LABEL_RE,
    SUBDOMAIN_RE,
    TOLERATION_RULES,
    V1BETA2,
    AdmissionCheckReference,
    ClusterQueueReference,
    Int32,
    LocalQueueName,
    NonNegInt32,
    PodSetReference,
    ResourceFlavorReference,
    ResourceName,
)
from kuota.api.meta import Conditions, ObjectMeta


# --------------------------------------------------------------------------- WorkloadPriorityClass
class WorkloadPriorityClass(Object, kw_only=True):
    api_version: str = V1BETA2
    kind: str = "WorkloadPriorityClass"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    value: Int32
    description: Annotated[str, Meta(max_length=2048)] | None = None


# --------------------------------------------------------------------------- AdmissionCheck
KIND_RE = r"^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$"


class AdmissionCheckParametersReference(Object, kw_only=True):
    api_group: Annotated[str, Meta(min_length=1, max_length=253), pattern(SUBDOMAIN_RE)]
    kind: Annotated[str, Meta(min_length=1, max_length=63), pattern(KIND_RE)]
    name: Annotated[str, Meta(min_length=1, max_length=63), pattern(LABEL_RE)]


CONTROLLER_NAME_IMMUTABLE = CLUSTER_QUEUE_IMMUTABLE  # the same rule: self == oldSelf


class AdmissionCheckSpec(Object, kw_only=True):
    controller_name: Annotated[str, Meta(min_length=1, max_length=253), CONTROLLER_NAME_IMMUTABLE]
    parameters: AdmissionCheckParametersReference | None = None


class AdmissionCheckStatus(Object, kw_only=True):
    conditions: Annotated[Conditions, Meta(max_length=16)] | None = None


class AdmissionCheck(Object, kw_only=True):
    api_version: str = V1BETA2
    kind: str = "AdmissionCheck"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: AdmissionCheckSpec
    status: AdmissionCheckStatus | None = None


# --------------------------------------------------------------------------- Workload
PRIORITY_REF_RULES = cel(
    Rule(
        "(self.group == 'scheduling.k8s.io') ? self.kind == 'PriorityClass' : true",
        "only the PriorityClass kind is allowed for the scheduling.k8s.io group",
        lambda r: r.group != "scheduling.k8s.io" or r.kind == "PriorityClass",
    ),
    Rule(
        "(self.group == 'kueue.x-k8s.io') ? self.kind == 'WorkloadPriorityClass' : true",
        "only the WorkloadPriorityClass kind is allowed for the kueue.x-k8s.io group",
        lambda r: r.group != "kueue.x-k8s.io" or r.kind == "WorkloadPriorityClass",
    ),
)

WPC_GROUP = "kueue.x-k8s.io"
PC_GROUP = "scheduling.k8s.io"


class PriorityClassRef(Object, kw_only=True):
    group: Literal["kueue.x-k8s.io", "scheduling.k8s.io"]
    kind: Literal["WorkloadPriorityClass", "PriorityClass"]
    name: Annotated[str, Meta(min_length=1, max_length=253), pattern(SUBDOMAIN_RE)]


class PodSetSliceTopologyConstraint(Object, kw_only=True):
    topology: Annotated[str, Meta(min_length=1, max_length=63)]
    size: Annotated[int, Meta(ge=1, le=2**31 - 1)]


class PodSetTopologyRequest(Object, kw_only=True):
    required: Annotated[str, Meta(max_length=63)] | None = None
    preferred: Annotated[str, Meta(max_length=63)] | None = None
    unconstrained: bool | None = None
    pod_index_label: Annotated[str, Meta(max_length=317)] | None = None
    sub_group_index_label: Annotated[str, Meta(max_length=317)] | None = None
    sub_group_count: NonNegInt32 | None = None
    pod_set_group_name: Annotated[str, Meta(max_length=256)] | None = None
    pod_set_slice_required_topology: Annotated[str, Meta(max_length=63)] | None = None
    pod_set_slice_size: Annotated[int, Meta(ge=1, le=2**31 - 1)] | None = None
    podset_slice_required_topology_constraints: (
        Annotated[list[PodSetSliceTopologyConstraint], Meta(max_length=3), LIST_ATOMIC] | None
    ) = msgspec.field(default=None, name="podsetSliceRequiredTopologyConstraints")


PODSET_RULES = cel(
    Rule(
        "has(self.minCount) ? self.minCount <= self.count : true",
        "minCount should be positive and less or equal to count",
        lambda p: p.min_count is None or p.min_count <= p.count,
    ),
)


class PodSet(Object, kw_only=True):
    name: PodSetReference = "main"
    template: PodTemplateSpec
    count: NonNegInt32 = 1
    min_count: Annotated[int, Meta(ge=1, le=2**31 - 1)] | None = None
    topology_request: PodSetTopologyRequest | None = None


class PreemptionGate(Object, kw_only=True):
    name: Annotated[str, Meta(min_length=1, max_length=63)]


WL_SPEC_RULES = cel(
    Rule(
        "!has(self.priorityClassRef) || has(self.priority)",
        "priority should not be nil when priorityClassRef is set",
        lambda s: s.priority_class_ref is None or s.priority is not None,
    ),
)


class WorkloadSpec(Object, kw_only=True):
    pod_sets: Annotated[
        list[Annotated[PodSet, PODSET_RULES]],
        Meta(min_length=1, max_length=18),
        list_map("name"),
    ]
    queue_name: LocalQueueName | None = None
    priority_class_ref: Annotated[PriorityClassRef, PRIORITY_REF_RULES] | None = None
    priority: Int32 | None = None
    active: bool = True
    maximum_execution_time_seconds: Annotated[int, Meta(ge=1, le=2**31 - 1)] | None = None
    preemption_gates: (
        Annotated[list[PreemptionGate], Meta(max_length=8), list_map("name")] | None
    ) = None


# ----------------------------------------------------------- TAS assignments
# Where a podSet's pods were placed, per topology domain, in v1beta2's compact
# form: slices of domains whose values per level are one value for all or
# prefix + root + suffix each, and pod counts one for all or one each.
PosInt32 = Annotated[int, Meta(ge=1, le=2**31 - 1)]
Value63 = Annotated[str, Meta(max_length=63)]


class TopologyAssignmentSliceLevelIndividualValues(Object, kw_only=True):
    prefix: Value63 | None = None
    suffix: Value63 | None = None
    roots: Annotated[list[Value63], Meta(min_length=1, max_length=100_000), LIST_ATOMIC]


ONE_OF_UNIVERSAL_INDIVIDUAL = cel(
    Rule(
        "has(self.universal) != has(self.individual)",
        "exactly one of the fields in [universal individual] must be set",
        lambda v: (v.universal is None) != (v.individual is None),
    ),
)


# The same rule as generated from an ExactlyOneOf marker.
EXACTLY_ONE_POD_COUNT = cel(
    Rule(
        "[has(self.universal),has(self.individual)].filter(x,x==true).size() == 1",
        "exactly one of the fields in [universal individual] must be set",
        lambda v: (v.universal is None) != (v.individual is None),
    ),
)


class TopologyAssignmentSliceLevelValues(Object, kw_only=True):
    universal: Value63 | None = None
    individual: TopologyAssignmentSliceLevelIndividualValues | None = None


class TopologyAssignmentSlicePodCounts(Object, kw_only=True):
    universal: PosInt32 | None = None
    individual: (
        Annotated[list[PosInt32], Meta(min_length=1, max_length=100_000), LIST_ATOMIC] | None
    ) = None


TA_SLICE_RULES = cel(
    Rule(
        "!has(self.podCounts.individual) || size(self.podCounts.individual) == self.domainCount",
        "podCounts.individual must have length equal to domainCount",
        lambda s: s.pod_counts.individual is None or len(s.pod_counts.individual) == s.domain_count,
    ),
    Rule(
        "self.valuesPerLevel.all(x, !has(x.individual) || size(x.individual.roots) == "
        "self.domainCount)",
        "valuesPerLevel.individual, if set, must have roots of length equal to domainCount of "
        "this TopologyAssignmentSlice",
        lambda s: all(
            v.individual is None or len(v.individual.roots) == s.domain_count
            for v in s.values_per_level
        ),
    ),
)


class TopologyAssignmentSlice(Object, kw_only=True):
    domain_count: PosInt32
    values_per_level: Annotated[
        list[Annotated[TopologyAssignmentSliceLevelValues, ONE_OF_UNIVERSAL_INDIVIDUAL]],
        Meta(min_length=1, max_length=16),
        LIST_ATOMIC,
    ]
    pod_counts: Annotated[TopologyAssignmentSlicePodCounts, EXACTLY_ONE_POD_COUNT]


TA_RULES = cel(
    Rule(
        "self.slices.all(x, size(x.valuesPerLevel) == size(self.levels))",
        "valuesPerLevel must have the same length as the number of levels in this "
        "TopologyAssignment",
        lambda ta: all(len(x.values_per_level) == len(ta.levels) for x in ta.slices),
    ),
)


class TopologyAssignment(Object, kw_only=True):
    levels: Annotated[
        list[Annotated[str, Meta(max_length=317)]],
        Meta(min_length=1, max_length=16),
        LIST_ATOMIC,
    ]
    slices: Annotated[
        list[Annotated[TopologyAssignmentSlice, TA_SLICE_RULES]],
        Meta(max_length=1000),
        LIST_ATOMIC,
    ]


class PodSetAssignment(Object, kw_only=True):
    name: PodSetReference = "main"
    flavors: dict[ResourceName, ResourceFlavorReference] | None = None
    resource_usage: ResourceList | None = None
    count: NonNegInt32 | None = None
    topology_assignment: Annotated[TopologyAssignment, TA_RULES] | None = None
    delayed_topology_request: Literal["Pending", "Ready"] | None = None


class Admission(Object, kw_only=True):
    cluster_queue: ClusterQueueReference
    pod_set_assignments: Annotated[list[PodSetAssignment], Meta(max_length=18), list_map("name")]


class RequeueState(Object, kw_only=True):
    count: NonNegInt32 | None = None
    requeue_at: datetime | None = None


class ReclaimablePod(Object, kw_only=True):
    name: PodSetReference
    count: NonNegInt32


class PodSetUpdate(Object, kw_only=True):
    name: PodSetReference
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    node_selector: dict[str, str] | None = None
    tolerations: (
        Annotated[list[Toleration], Meta(max_length=8), LIST_ATOMIC, TOLERATION_RULES] | None
    ) = None


CheckState = Literal["Pending", "Ready", "Retry", "Rejected"]


class AdmissionCheckState(Object, kw_only=True):
    name: AdmissionCheckReference
    state: CheckState
    last_transition_time: datetime | None = None
    message: Annotated[str, Meta(max_length=32768)] = ""
    requeue_after_seconds: NonNegInt32 | None = None
    retry_count: NonNegInt32 | None = None
    pod_set_updates: Annotated[list[PodSetUpdate], Meta(max_length=18), LIST_ATOMIC] | None = None


class PodSetRequest(Object, kw_only=True):
    name: PodSetReference
    resources: ResourceList | None = None


class WorkloadSchedulingStatsEviction(Object, kw_only=True):
    reason: Annotated[str, Meta(max_length=316)]
    underlying_cause: Annotated[str, Meta(max_length=316)]
    count: NonNegInt32


class SchedulingStats(Object, kw_only=True):
    evictions: (
        Annotated[
            list[WorkloadSchedulingStatsEviction],
            Meta(max_length=256),
            list_map("reason", "underlyingCause"),
        ]
        | None
    ) = None


class UnhealthyNode(Object, kw_only=True):
    name: Annotated[str, Meta(max_length=63)]


class PreemptionGateState(Object, kw_only=True):
    name: Annotated[str, Meta(min_length=1, max_length=63)]
    position: Literal["Closed", "Open"] | None = None
    last_transition_time: datetime | None = None


WL_STATUS_RULES = cel(
    Rule(
        "!has(oldSelf.clusterName) || !has(self.clusterName) || "
        "oldSelf.clusterName == self.clusterName",
        "clusterName is immutable once set",
        lambda _: True,
        transition=lambda new, old: (
            old.cluster_name is None
            or new.cluster_name is None
            or new.cluster_name == old.cluster_name
        ),
    ),
    Rule(
        "!has(self.clusterName) || (!has(self.nominatedClusterNames) || "
        "(has(self.nominatedClusterNames) && size(self.nominatedClusterNames) == 0))",
        "clusterName and nominatedClusterNames are mutually exclusive",
        lambda s: s.cluster_name is None or not s.nominated_cluster_names,
    ),
)


class WorkloadStatus(Object, kw_only=True):
    conditions: Annotated[Conditions, Meta(max_length=16)] | None = None
    admission: Admission | None = None
    requeue_state: RequeueState | None = None
    reclaimable_pods: (
        Annotated[list[ReclaimablePod], Meta(max_length=18), list_map("name")] | None
    ) = None
    admission_checks: (
        Annotated[list[AdmissionCheckState], Meta(max_length=8), list_map("name")] | None
    ) = None
    resource_requests: (
        Annotated[list[PodSetRequest], Meta(max_length=18), list_map("name")] | None
    ) = None
    accumulated_past_execution_time_seconds: Int32 | None = None
    scheduling_stats: SchedulingStats | None = None
    nominated_cluster_names: (
        Annotated[list[Annotated[str, Meta(max_length=256)]], Meta(max_length=20), LIST_ATOMIC]
        | None
    ) = None
    cluster_name: Annotated[str, Meta(max_length=256)] | None = None
    unhealthy_nodes: Annotated[list[UnhealthyNode], Meta(max_length=8), list_map("name")] | None = (
        None
    )
    preemption_gates: (
        Annotated[list[PreemptionGateState], Meta(max_length=8), list_map("name")] | None
    ) = None


def _condition_true(wl: Any, ctype: str) -> bool:
    st = wl.status
    return bool(
        st is not None
        and st.conditions
        and any(c.type == ctype and c.status == "True" for c in st.conditions)
    )


def quota_reserved(wl: Workload) -> bool:
    return _condition_true(wl, "QuotaReserved")


def _admitted(wl: Workload) -> bool:
    return _condition_true(wl, "Admitted")


# The CEL texts of Kueue's Workload rules (both versions share the first and
# the last two); the Python predicates say the same of kuota's structs.
_QR = "oldSelf.status.conditions.exists(c, c.type == 'QuotaReserved' && c.status == 'True')"
OLD_QR_CEL = f"has(oldSelf.status) && has(oldSelf.status.conditions) && {_QR}"
_NEW_QR = OLD_QR_CEL.replace("oldSelf", "self")
_OLD_ADM = OLD_QR_CEL.replace("QuotaReserved", "Admitted")
_NEW_ADM = _NEW_QR.replace("QuotaReserved", "Admitted")
_BOTH_REFS = "has(oldSelf.spec.priorityClassRef) && has(self.spec.priorityClassRef)"

WL_PODSET_ASSIGNMENTS_RULE = Rule(
    "has(self.status) && has(self.status.conditions) && self.status.conditions.exists(c, "
    "c.type == 'QuotaReserved' && c.status == 'True') && has(self.status.admission) ? "
    "size(self.spec.podSets) == size(self.status.admission.podSetAssignments) : true",
    "podSetAssignments must have the same number of podSets as the spec",
    lambda w: (
        not (quota_reserved(w) and w.status.admission is not None)
        or len(w.spec.pod_sets) == len(w.status.admission.pod_set_assignments)
    ),
)

WL_QUEUE_NAME_RULE = Rule(
    f"(({OLD_QR_CEL}) && ({_NEW_QR})) ? ((has(oldSelf.spec.queueName) == has(self.spec.queueName)) "
    "&& (!has(oldSelf.spec.queueName) || oldSelf.spec.queueName == self.spec.queueName)) : true",
    "queueName is immutable while workload quota reserved",
    lambda _: True,
    transition=lambda new, old: (
        not (quota_reserved(old) and quota_reserved(new))
        or new.spec.queue_name == old.spec.queue_name
    ),
)

WL_MAX_EXECUTION_RULE = Rule(
    f"(({_OLD_ADM}) && ({_NEW_ADM}))?((has(oldSelf.spec.maximumExecutionTimeSeconds)?"
    "oldSelf.spec.maximumExecutionTimeSeconds:0) ==  (has(self.spec.maximumExecutionTimeSeconds)"
    "?self.spec.maximumExecutionTimeSeconds:0)):true",
    "maximumExecutionTimeSeconds is immutable while workload quota reserved",
    lambda _: True,
    transition=lambda new, old: (
        not (_admitted(old) and _admitted(new))
        or (new.spec.maximum_execution_time_seconds or 0)
        == (old.spec.maximum_execution_time_seconds or 0)
    ),
)


def _ref_rule(cel_text: str, message: str, holds: Callable[[Any, Any], bool]) -> Rule:
    """A priorityClassRef rule: binds while the old workload reserves quota
    and both sides have a reference."""
    return Rule(
        cel_text,
        message,
        lambda _: True,
        transition=lambda new, old: (
            not quota_reserved(old)
            or new.spec.priority_class_ref is None
            or old.spec.priority_class_ref is None
            or holds(new.spec.priority_class_ref, old.spec.priority_class_ref)
        ),
    )


WL_RULES = cel(
    WL_PODSET_ASSIGNMENTS_RULE,
    Rule(
        f"({OLD_QR_CEL}) ? (!has(oldSelf.spec.priorityClassRef) && !has(self.spec.priorityClassRef))"
        f" || ({_BOTH_REFS}) : true",
        "priorityClassRef is immutable while workload quota reserved",
        lambda _: True,
        transition=lambda new, old: (
            not quota_reserved(old)
            or (new.spec.priority_class_ref is None) == (old.spec.priority_class_ref is None)
        ),
    ),
    _ref_rule(
        f"({OLD_QR_CEL} && {_BOTH_REFS}) ? "
        "oldSelf.spec.priorityClassRef.group == self.spec.priorityClassRef.group : true",
        "priorityClassRef.group is immutable while workload quota reserved",
        lambda n, o: n.group == o.group,
    ),
    _ref_rule(
        f"({OLD_QR_CEL} && {_BOTH_REFS}) ? "
        "oldSelf.spec.priorityClassRef.kind == self.spec.priorityClassRef.kind : true",
        "priorityClassRef.kind is immutable while workload quota reserved",
        lambda n, o: n.kind == o.kind,
    ),
    _ref_rule(
        f"({OLD_QR_CEL} && {_BOTH_REFS} && self.spec.priorityClassRef.group == 'scheduling.k8s.io'"
        " && self.spec.priorityClassRef.kind == 'PriorityClass') ? "
        "oldSelf.spec.priorityClassRef.name == self.spec.priorityClassRef.name : true",
        "priorityClassRef.name is immutable for scheduling.k8s.io/priorityclass while "
        "workload quota reserved",
        lambda n, o: not (n.group == PC_GROUP and n.kind == "PriorityClass") or n.name == o.name,
    ),
    WL_QUEUE_NAME_RULE,
    WL_MAX_EXECUTION_RULE,
)


class Workload(Object, kw_only=True):
    api_version: str = V1BETA2
    kind: str = "Workload"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: Annotated[WorkloadSpec, WL_SPEC_RULES]
    status: Annotated[WorkloadStatus, WL_STATUS_RULES] | None = None
