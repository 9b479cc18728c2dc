"""Kueue's kinds as users write them, v1beta2-shaped (Kueue's storage version).

This is kuota's one internal model: v1beta1 objects are read through
``kueue.v1beta1`` and converted into these structs. Defaults are the CRD
``+kubebuilder:default`` markers (the API server applies them on create and on
read), constraints are the CRD schema markers and CEL rules of
``apis/kueue/v1beta2/*_types.go`` at Kueue ff69552e.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec

from kuota.api.base import (
    LIST_ATOMIC,
    LIST_SET,
    MAP_ATOMIC,
    Meta,
    Object,
    Quantity,
    Rule,
    cel,
    crd_default,
    list_map,
    pattern,
)
from kuota.api.k8s.corev1 import PodTemplateSpec, ResourceList, Taint, Toleration
from kuota.api.meta import Conditions, LabelSelector, ObjectMeta

GROUP = "kueue.x-k8s.io"
V1BETA1 = f"{GROUP}/v1beta1"
V1BETA2 = f"{GROUP}/v1beta2"

SUBDOMAIN_RE = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
LABEL_RE = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"

# Named references, as Kueue's string types carry their markers.
Subdomain = Annotated[str, Meta(max_length=253), pattern(SUBDOMAIN_RE)]
ClusterQueueReference = Subdomain
CohortReference = Subdomain
ResourceFlavorReference = Subdomain
LocalQueueName = Subdomain
PodSetReference = Annotated[str, Meta(max_length=63), pattern(LABEL_RE)]
AdmissionCheckReference = Annotated[str, Meta(min_length=1, max_length=316)]
ResourceName = str  # validated by the webhooks as a qualified name
Int32 = Annotated[int, Meta(ge=-(2**31), le=2**31 - 1)]
NonNegInt32 = Annotated[int, Meta(ge=0, le=2**31 - 1)]

StopPolicy = Literal["None", "Hold", "HoldAndDrain"]


# The toleration-list rules Kueue puts on ResourceFlavor.spec.tolerations and
# PodSetUpdate.tolerations (corev1.Toleration carries none of its own in a CRD).
TOLERATION_RULES = cel(
    Rule(
        "self.all(x, !has(x.key) ? x.operator == 'Exists' : true)",
        "operator must be Exists when 'key' is empty, which means 'match all values and all keys'",
        lambda ts: all(t.key is not None or t.operator == "Exists" for t in ts),
    ),
    Rule(
        "self.all(x, has(x.tolerationSeconds) ? x.effect == 'NoExecute' : true)",
        "effect must be 'NoExecute' when 'tolerationSeconds' is set",
        lambda ts: all(t.toleration_seconds is None or t.effect == "NoExecute" for t in ts),
    ),
    Rule(
        "self.all(x, !has(x.operator) || x.operator in ['Equal', 'Exists'])",
        "supported toleration values: 'Equal'(default), 'Exists'",
        lambda ts: all(t.operator in (None, "Equal", "Exists") for t in ts),
    ),
    Rule(
        "self.all(x, has(x.operator) && x.operator == 'Exists' ? !has(x.value) : true)",
        "a value must be empty when 'operator' is 'Exists'",
        lambda ts: all(not (t.operator == "Exists" and t.value is not None) for t in ts),
    ),
    Rule(
        "self.all(x, !has(x.effect) || x.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])",
        "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'",
        lambda ts: all(
            t.effect in (None, "NoSchedule", "PreferNoSchedule", "NoExecute") for t in ts
        ),
    ),
)

TAINT_RULES = cel(
    Rule(
        "self.all(x, x.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])",
        "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'",
        lambda ts: all(t.effect in ("NoSchedule", "PreferNoSchedule", "NoExecute") for t in ts),
    ),
)


# --------------------------------------------------------------------------- ResourceFlavor
class ResourceFlavorSpec(Object, kw_only=True):
    node_labels: Annotated[dict[str, str], Meta(max_length=8), MAP_ATOMIC] | None = None
    node_taints: Annotated[list[Taint], Meta(max_length=8), LIST_ATOMIC, TAINT_RULES] | None = None
    tolerations: (
        Annotated[list[Toleration], Meta(max_length=8), LIST_ATOMIC, TOLERATION_RULES] | None
    ) = None
    topology_name: Subdomain | None = None


RF_SPEC_RULES = cel(
    Rule(
        "!has(self.topologyName) || self.nodeLabels.size() >= 1",
        "at least one nodeLabel is required when topology is set",
        lambda s: s.topology_name is None or bool(s.node_labels),
    ),
    Rule(
        "!has(oldSelf.topologyName) || (has(self.topologyName) && self.topologyName == "
        "oldSelf.topologyName)",
        "topologyName is immutable when topologyName is set",
        lambda _: True,
        transition=lambda new, old: (
            old.topology_name is None or new.topology_name == old.topology_name
        ),
    ),
)


class ResourceFlavor(Object, kw_only=True):
    api_version: str = V1BETA2
    kind: str = "ResourceFlavor"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: Annotated[ResourceFlavorSpec, RF_SPEC_RULES] = msgspec.field(
        default_factory=ResourceFlavorSpec
    )


# --------------------------------------------------------------------------- quotas
class ResourceQuota(Object, kw_only=True):
    name: ResourceName
    nominal_quota: Quantity
    borrowing_limit: Quantity | None = None
    lending_limit: Quantity | None = None


class FlavorQuotas(Object, kw_only=True):
    name: ResourceFlavorReference
    resources: Annotated[list[ResourceQuota], Meta(min_length=1, max_length=64), list_map("name")]


RESOURCE_GROUP_RULES = cel(
    Rule(
        "self.flavors.all(x, size(x.resources) == size(self.coveredResources))",
        "flavors must have the same number of resources as the coveredResources",
        lambda g: all(len(f.resources) == len(g.covered_resources) for f in g.flavors),
    ),
)


class ResourceGroup(Object, kw_only=True):
    covered_resources: Annotated[list[ResourceName], Meta(min_length=1, max_length=64), LIST_ATOMIC]
    flavors: Annotated[list[FlavorQuotas], Meta(min_length=1, max_length=64), list_map("name")]


ResourceGroups = Annotated[
    list[Annotated[ResourceGroup, RESOURCE_GROUP_RULES]], Meta(max_length=16), LIST_ATOMIC
]


class FairSharing(Object, kw_only=True):
    weight: Annotated[Quantity, crd_default(1)] | None = msgspec.field(
        default_factory=lambda: Quantity.from_int(1)
    )


class FairSharingStatus(Object, kw_only=True):
    weighted_share: int = 0


# --------------------------------------------------------------------------- ClusterQueue
FungibilityPolicy = Literal["MayStopSearch", "TryNextFlavor"]

FUNGIBILITY_RULES = cel(
    Rule(
        "!has(self.preference) || (self.whenCanBorrow == 'TryNextFlavor' && "
        "self.whenCanPreempt == 'TryNextFlavor')",
        "preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor",
        lambda f: (
            f.preference is None
            or (f.when_can_borrow == "TryNextFlavor" and f.when_can_preempt == "TryNextFlavor")
        ),
    ),
)


class FlavorFungibility(Object, kw_only=True):
    when_can_borrow: FungibilityPolicy = "MayStopSearch"
    when_can_preempt: FungibilityPolicy = "TryNextFlavor"
    preference: Literal["BorrowingOverPreemption", "PreemptionOverBorrowing"] | None = None


class BorrowWithinCohort(Object, kw_only=True):
    policy: Literal["Never", "LowerPriority"] = "Never"
    max_priority_threshold: Int32 | None = None


PREEMPTION_RULES = cel(
    Rule(
        "!(self.reclaimWithinCohort == 'Never' && has(self.borrowWithinCohort) &&  "
        "self.borrowWithinCohort.policy != 'Never')",
        "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never",
        lambda p: (
            not (
                p.reclaim_within_cohort == "Never"
                and p.borrow_within_cohort is not None
                and p.borrow_within_cohort.policy != "Never"
            )
        ),
    ),
)


class ClusterQueuePreemption(Object, kw_only=True):
    reclaim_within_cohort: Literal["Never", "LowerPriority", "Any"] = "Never"
    borrow_within_cohort: Annotated[BorrowWithinCohort, crd_default({})] | None = msgspec.field(
        default_factory=BorrowWithinCohort
    )
    within_cluster_queue: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] = "Never"


class AdmissionCheckStrategyRule(Object, kw_only=True):
    name: AdmissionCheckReference
    on_flavors: Annotated[list[ResourceFlavorReference], Meta(max_length=64), LIST_SET] | None = (
        None
    )


class AdmissionChecksStrategy(Object, kw_only=True):
    admission_checks: Annotated[
        list[AdmissionCheckStrategyRule], Meta(min_length=1, max_length=64), list_map("name")
    ]


class AdmissionScope(Object, kw_only=True):
    admission_mode: Literal["UsageBasedAdmissionFairSharing", "NoAdmissionFairSharing"]


class ConcurrentAdmissionConstraints(Object, kw_only=True):
    last_acceptable_flavor_name: ResourceFlavorReference | None = None


class ConcurrentAdmissionMigration(Object, kw_only=True):
    mode: Annotated[
        Literal["TryPreferredFlavors", "RetainFirstAdmission"],
        Meta(extra_json_schema={"maxLength": 253}),
    ]
    constraints: ConcurrentAdmissionConstraints | None = None


class ConcurrentAdmissionPolicy(Object, kw_only=True):
    migration: ConcurrentAdmissionMigration


def _no_borrowing_limits(groups: list[ResourceGroup] | None) -> bool:
    return not groups or all(
        r.borrowing_limit is None for g in groups for f in g.flavors for r in f.resources
    )


CQ_SPEC_RULES = cel(
    Rule(
        "!has(self.cohortName) && has(self.resourceGroups) ? self.resourceGroups.all(rg, "
        "rg.flavors.all(f, f.resources.all(r, !has(r.borrowingLimit)))) : true",
        "borrowingLimit must be nil when cohort is empty",
        lambda s: bool(s.cohort_name) or _no_borrowing_limits(s.resource_groups),
    ),
)


class ClusterQueueSpec(Object, kw_only=True):
    resource_groups: ResourceGroups | None = None
    cohort_name: CohortReference | None = None
    queueing_strategy: Literal["StrictFIFO", "BestEffortFIFO"] = "BestEffortFIFO"
    # nil selects no namespace at all; {} selects every namespace.
    namespace_selector: LabelSelector | None = None
    flavor_fungibility: Annotated[FlavorFungibility, FUNGIBILITY_RULES, crd_default({})] = (
        msgspec.field(default_factory=FlavorFungibility)
    )
    preemption: Annotated[ClusterQueuePreemption, PREEMPTION_RULES, crd_default({})] = (
        msgspec.field(default_factory=ClusterQueuePreemption)
    )
    admission_checks_strategy: AdmissionChecksStrategy | None = None
    stop_policy: StopPolicy = "None"
    fair_sharing: FairSharing | None = None
    admission_scope: AdmissionScope | None = None
    concurrent_admission_policy: ConcurrentAdmissionPolicy | None = None


class ResourceUsage(Object, kw_only=True):
    name: ResourceName
    total: Quantity | None = None
    borrowed: Quantity | None = None


class FlavorUsage(Object, kw_only=True):
    name: ResourceFlavorReference
    resources: Annotated[list[ResourceUsage], Meta(max_length=64), list_map("name")]


class ClusterQueueStatus(Object, kw_only=True):
    conditions: Annotated[Conditions, Meta(max_length=16)] | None = None
    flavors_reservation: (
        Annotated[list[FlavorUsage], Meta(max_length=64), list_map("name")] | None
    ) = None
    flavors_usage: Annotated[list[FlavorUsage], Meta(max_length=64), list_map("name")] | None = None
    pending_workloads: Int32 = 0
    reserving_workloads: Int32 = 0
    admitted_workloads: Int32 = 0
    fair_sharing: FairSharingStatus | None = None


class ClusterQueue(Object, kw_only=True):
    api_version: str = V1BETA2
    kind: str = "ClusterQueue"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: Annotated[ClusterQueueSpec, CQ_SPEC_RULES] = msgspec.field(
        default_factory=ClusterQueueSpec
    )
    status: ClusterQueueStatus | None = None


# --------------------------------------------------------------------------- LocalQueue
CLUSTER_QUEUE_IMMUTABLE = cel(
    Rule("self == oldSelf", "field is immutable", lambda _: True, transition=operator.eq),
)


class LocalQueueSpec(Object, kw_only=True):
    cluster_queue: Annotated[ClusterQueueReference, CLUSTER_QUEUE_IMMUTABLE] | None = None
    stop_policy: StopPolicy = "None"
    fair_sharing: FairSharing | None = None


class LocalQueueFlavorUsage(Object, kw_only=True):
    name: ResourceFlavorReference
    resources: Annotated[list[ResourceUsage], Meta(max_length=64), list_map("name")] | None = None


class AdmissionFairSharingStatus(Object, kw_only=True):
    consumed_resources: ResourceList
    last_update: datetime


class LocalQueueFairSharingStatus(Object, kw_only=True):
    weighted_share: int = 0
    admission_fair_sharing_status: AdmissionFairSharingStatus | None = None


LQFlavorUsages = Annotated[list[LocalQueueFlavorUsage], Meta(max_length=64), list_map("name")]


class LocalQueueStatus(Object, kw_only=True):
    conditions: Annotated[Conditions, Meta(max_length=16)] | None = None
    pending_workloads: Int32 = 0
    reserving_workloads: Int32 = 0
    admitted_workloads: Int32 = 0
    flavors_reservation: LQFlavorUsages | None = None
    flavors_usage: LQFlavorUsages | None = None
    fair_sharing: LocalQueueFairSharingStatus | None = None


class LocalQueue(Object, kw_only=True):
    api_version: str = V1BETA2
    kind: str = "LocalQueue"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: LocalQueueSpec = msgspec.field(default_factory=LocalQueueSpec)
    status: LocalQueueStatus | None = None


# --------------------------------------------------------------------------- Cohort
class CohortSpec(Object, kw_only=True):
    parent_name: CohortReference | None = None
    resource_groups: ResourceGroups | None = None
    fair_sharing: FairSharing | None = None


class CohortStatus(Object, kw_only=True):
    fair_sharing: FairSharingStatus | None = None


class Cohort(Object, kw_only=True):
    api_version: str = V1BETA2
    kind: str = "Cohort"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: CohortSpec = msgspec.field(default_factory=CohortSpec)
    status: CohortStatus | None = None


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


def _quota_reserved(wl: Workload) -> bool:
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
        not (_quota_reserved(w) and w.status.admission is not None)
        or len(w.spec.pod_sets) == len(w.status.admission.pod_set_assignments)
    ),
)

WL_QUEUE_NAME_RULE = Rule(
    f"(({OLD_QR_CEL}) && ({_NEW_QR})) ? ((has(oldSelf.spec.queueName) == has(self.spec.queueName)) "
    "&& (!has(oldSelf.spec.queueName) || oldSelf.spec.queueName == self.spec.queueName)) : true",
    "queueName is immutable while workload quota reserved",
    lambda _: True,
    transition=lambda new, old: (
        not (_quota_reserved(old) and _quota_reserved(new))
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
            not _quota_reserved(old)
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
            not _quota_reserved(old)
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


# Kinds whose objects live in a namespace.
NAMESPACED_KINDS = frozenset({"LocalQueue", "Workload"})

KINDS: dict[str, type[Object]] = {
    "ResourceFlavor": ResourceFlavor,
    "ClusterQueue": ClusterQueue,
    "LocalQueue": LocalQueue,
    "Cohort": Cohort,
    "WorkloadPriorityClass": WorkloadPriorityClass,
    "AdmissionCheck": AdmissionCheck,
    "Workload": Workload,
}

ROOT_RULES: dict[str, Meta] = {"Workload": WL_RULES}
