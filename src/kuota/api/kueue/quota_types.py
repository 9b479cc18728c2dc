"""Kueue's quota kinds, v1beta2-shaped (part of kuota's one internal model, which
``types`` exports): ResourceFlavor, ClusterQueue, LocalQueue, Cohort,
WorkloadPriorityClass and AdmissionCheck, with the CEL rules they share with
Workloads (tolerations, taints). Defaults and constraints are the CRD markers and
CEL rules of ``apis/kueue/v1beta2/*_types.go`` at Kueue ff69552e.
"""

from __future__ import annotations

import operator
from datetime import datetime
from typing import Annotated, Literal

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
    emitted_zero,
    list_map,
    pattern,
)
from kuota.api.k8s.corev1 import ResourceList, Taint, Toleration
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
    weighted_share: int = emitted_zero()


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


def no_borrowing_limits(groups: list[ResourceGroup] | None) -> bool:
    return not groups or all(
        r.borrowing_limit is None for g in groups for f in g.flavors for r in f.resources
    )


CQ_SPEC_RULES = cel(
    Rule(
        "!has(self.cohortName) && has(self.resourceGroups) ? self.resourceGroups.all(rg, "
        "rg.flavors.all(f, f.resources.all(r, !has(r.borrowingLimit)))) : true",
        "borrowingLimit must be nil when cohort is empty",
        lambda s: bool(s.cohort_name) or no_borrowing_limits(s.resource_groups),
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
    pending_workloads: Int32 = emitted_zero()
    reserving_workloads: Int32 = emitted_zero()
    admitted_workloads: Int32 = emitted_zero()
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
    weighted_share: int = emitted_zero()
    admission_fair_sharing_status: AdmissionFairSharingStatus | None = None


LQFlavorUsages = Annotated[list[LocalQueueFlavorUsage], Meta(max_length=64), list_map("name")]


class LocalQueueStatus(Object, kw_only=True):
    conditions: Annotated[Conditions, Meta(max_length=16)] | None = None
    pending_workloads: Int32 = emitted_zero()
    reserving_workloads: Int32 = emitted_zero()
    admitted_workloads: Int32 = emitted_zero()
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
