"""``kueue.x-k8s.io/v1beta1``: the shapes that differ from v1beta2, and the
conversions both ways (``apis/kueue/v1beta1/*_conversion.go``).

Kinds whose v1beta1 schema equals v1beta2's (ResourceFlavor, Cohort) reuse the
internal structs. The others get their own structs here so that the v1beta1
schema, defaults and CEL rules (which name v1beta1 fields such as
``self.cohort``) are checked before conversion, as the API server does.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec
from msgspec.structs import replace

from kuota.api.base import (
    LIST_ATOMIC,
    Meta,
    Object,
    Rule,
    cel,
    crd_default,
    emitted_zero,
    list_map,
    pattern,
)
from kuota.api.k8s.corev1 import PodTemplateSpec, ResourceList, Taint
from kuota.api.kueue import types as t
from kuota.api.kueue.quota_types import no_borrowing_limits
from kuota.api.kueue.topology import TopologyV1, topology_from_internal, topology_to_internal
from kuota.api.kueue.workload_types import quota_reserved
from kuota.api.meta import Conditions, LabelSelector, ObjectMeta


# ----------------------------------------------------------------- ClusterQueue
# v1beta1 still accepts the deprecated Borrow / Preempt, which mean MayStopSearch.
class FlavorFungibility(Object, kw_only=True):
    when_can_borrow: Literal["MayStopSearch", "TryNextFlavor", "Borrow"] = "MayStopSearch"
    when_can_preempt: Literal["MayStopSearch", "TryNextFlavor", "Preempt"] = "TryNextFlavor"
    preference: Literal["BorrowingOverPreemption", "PreemptionOverBorrowing"] | None = None


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


class AdmissionScope(Object, kw_only=True):
    admission_mode: str  # no enum in v1beta1


class AdmissionCheckStrategyRule(Object, kw_only=True):
    name: t.AdmissionCheckReference
    on_flavors: Annotated[list[t.ResourceFlavorReference], Meta(max_length=64)] | None = None


class AdmissionChecksStrategy(Object, kw_only=True):
    admission_checks: Annotated[list[AdmissionCheckStrategyRule], list_map("name")] | None = None


CQ_SPEC_RULES = cel(
    Rule(
        "!has(self.cohort) && has(self.resourceGroups) ? self.resourceGroups.all(rg, "
        "rg.flavors.all(f, f.resources.all(r, !has(r.borrowingLimit)))) : true",
        "borrowingLimit must be nil when cohort is empty",
        lambda s: bool(s.cohort) or no_borrowing_limits(s.resource_groups),
    ),
)


class ClusterQueueSpec(Object, kw_only=True):
    resource_groups: t.ResourceGroups | None = None
    cohort: t.CohortReference | None = None
    queueing_strategy: Literal["StrictFIFO", "BestEffortFIFO"] = "BestEffortFIFO"
    namespace_selector: LabelSelector | None = None
    flavor_fungibility: Annotated[FlavorFungibility, FUNGIBILITY_RULES, crd_default({})] = (
        msgspec.field(default_factory=FlavorFungibility)
    )
    preemption: Annotated[t.ClusterQueuePreemption, t.PREEMPTION_RULES, crd_default({})] = (
        msgspec.field(default_factory=t.ClusterQueuePreemption)
    )
    admission_checks: list[str] | None = None
    admission_checks_strategy: AdmissionChecksStrategy | None = None
    stop_policy: t.StopPolicy = "None"
    fair_sharing: t.FairSharing | None = None
    admission_scope: AdmissionScope | None = None


class AdmissionFairSharingStatus(Object, kw_only=True):
    consumed_resources: ResourceList
    last_update: datetime


class FairSharingStatus(Object, kw_only=True):
    weighted_share: int = emitted_zero()
    admission_fair_sharing_status: AdmissionFairSharingStatus | None = None


class ClusterQueueStatus(Object, kw_only=True):
    conditions: Conditions | None = None
    flavors_reservation: (
        Annotated[list[t.FlavorUsage], Meta(max_length=64), list_map("name")] | None
    ) = None
    flavors_usage: Annotated[list[t.FlavorUsage], Meta(max_length=64), list_map("name")] | None = (
        None
    )
    pending_workloads: t.Int32 = emitted_zero()
    reserving_workloads: t.Int32 = emitted_zero()
    admitted_workloads: t.Int32 = emitted_zero()
    fair_sharing: FairSharingStatus | None = None
    # Deprecated, never written since Kueue v0.14: carried, not interpreted.
    pending_workloads_status: dict[str, Any] | None = None


class ClusterQueue(Object, kw_only=True):
    api_version: str = t.V1BETA1
    kind: str = "ClusterQueue"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: Annotated[ClusterQueueSpec, CQ_SPEC_RULES] = msgspec.field(
        default_factory=ClusterQueueSpec
    )
    status: ClusterQueueStatus | None = None


_FUNGIBILITY_V1_TO_V2 = {"Borrow": "MayStopSearch", "Preempt": "MayStopSearch"}


def _fs_status_to_v2(fs: FairSharingStatus | None) -> t.FairSharingStatus | None:
    return None if fs is None else t.FairSharingStatus(weighted_share=fs.weighted_share)


def cq_to_internal(o: ClusterQueue) -> t.ClusterQueue:
    s = o.spec
    ff = s.flavor_fungibility
    strategy = None
    if s.admission_checks_strategy is not None:
        strategy = t.AdmissionChecksStrategy(
            admission_checks=[
                t.AdmissionCheckStrategyRule(name=r.name, on_flavors=r.on_flavors)
                for r in s.admission_checks_strategy.admission_checks or []
            ]
        )
    # The legacy list wins over a strategy when both are set (Kueue's conversion).
    if s.admission_checks:
        strategy = t.AdmissionChecksStrategy(
            admission_checks=[t.AdmissionCheckStrategyRule(name=n) for n in s.admission_checks]
        )
    spec = t.ClusterQueueSpec(
        resource_groups=s.resource_groups,
        cohort_name=s.cohort,
        queueing_strategy=s.queueing_strategy,
        namespace_selector=s.namespace_selector,
        flavor_fungibility=t.FlavorFungibility(
            when_can_borrow=_FUNGIBILITY_V1_TO_V2.get(ff.when_can_borrow, ff.when_can_borrow),  # type: ignore[arg-type]
            when_can_preempt=_FUNGIBILITY_V1_TO_V2.get(ff.when_can_preempt, ff.when_can_preempt),  # type: ignore[arg-type]
            preference=ff.preference,
        ),
        preemption=s.preemption,
        admission_checks_strategy=strategy,
        stop_policy=s.stop_policy,
        fair_sharing=s.fair_sharing,
        admission_scope=(
            None
            if s.admission_scope is None
            else t.AdmissionScope(admission_mode=s.admission_scope.admission_mode)  # type: ignore[arg-type]
        ),
    )
    status = None
    if o.status is not None:
        st = o.status
        status = t.ClusterQueueStatus(
            conditions=st.conditions,
            flavors_reservation=st.flavors_reservation,
            flavors_usage=st.flavors_usage,
            pending_workloads=st.pending_workloads,
            reserving_workloads=st.reserving_workloads,
            admitted_workloads=st.admitted_workloads,
            fair_sharing=_fs_status_to_v2(st.fair_sharing),
        )
    return t.ClusterQueue(api_version=o.api_version, metadata=o.metadata, spec=spec, status=status)


def cq_from_internal(o: t.ClusterQueue) -> ClusterQueue:
    s = o.spec
    strategy = None
    if s.admission_checks_strategy is not None:
        strategy = AdmissionChecksStrategy(
            admission_checks=[
                AdmissionCheckStrategyRule(name=r.name, on_flavors=r.on_flavors)
                for r in s.admission_checks_strategy.admission_checks
            ]
        )
    spec = ClusterQueueSpec(
        resource_groups=s.resource_groups,
        cohort=s.cohort_name,
        queueing_strategy=s.queueing_strategy,
        namespace_selector=s.namespace_selector,
        flavor_fungibility=FlavorFungibility(
            when_can_borrow=s.flavor_fungibility.when_can_borrow,
            when_can_preempt=s.flavor_fungibility.when_can_preempt,
            preference=s.flavor_fungibility.preference,
        ),
        preemption=s.preemption,
        admission_checks_strategy=strategy,
        stop_policy=s.stop_policy,
        fair_sharing=s.fair_sharing,
        admission_scope=(
            None
            if s.admission_scope is None
            else AdmissionScope(admission_mode=s.admission_scope.admission_mode)
        ),
    )
    status = None
    if o.status is not None:
        st = o.status
        status = ClusterQueueStatus(
            conditions=st.conditions,
            flavors_reservation=st.flavors_reservation,
            flavors_usage=st.flavors_usage,
            pending_workloads=st.pending_workloads,
            reserving_workloads=st.reserving_workloads,
            admitted_workloads=st.admitted_workloads,
            fair_sharing=(
                None
                if st.fair_sharing is None
                else FairSharingStatus(weighted_share=st.fair_sharing.weighted_share)
            ),
        )
    return ClusterQueue(api_version=t.V1BETA1, metadata=o.metadata, spec=spec, status=status)


# ----------------------------------------------------------------- LocalQueue
class LocalQueueFlavorStatus(Object, kw_only=True):
    name: t.ResourceFlavorReference
    resources: Annotated[list[str], Meta(max_length=64)] | None = None
    node_labels: Annotated[dict[str, str], Meta(max_length=8)] | None = None
    node_taints: Annotated[list[Taint], Meta(max_length=8), LIST_ATOMIC] | None = None
    topology: dict[str, Any] | None = None


class LocalQueueStatus(Object, kw_only=True):
    conditions: Conditions | None = None
    pending_workloads: t.Int32 = emitted_zero()
    reserving_workloads: t.Int32 = emitted_zero()
    admitted_workloads: t.Int32 = emitted_zero()
    flavors_reservation: t.LQFlavorUsages | None = None
    flavor_usage: t.LQFlavorUsages | None = None
    flavors: (
        Annotated[list[LocalQueueFlavorStatus], Meta(max_length=16), list_map("name")] | None
    ) = None
    fair_sharing: FairSharingStatus | None = None


class LocalQueue(Object, kw_only=True):
    api_version: str = t.V1BETA1
    kind: str = "LocalQueue"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: t.LocalQueueSpec = msgspec.field(default_factory=t.LocalQueueSpec)
    status: LocalQueueStatus | None = None


def lq_to_internal(o: LocalQueue) -> t.LocalQueue:
    status = None
    if o.status is not None:
        st = o.status
        fs = None
        if st.fair_sharing is not None:
            afs = st.fair_sharing.admission_fair_sharing_status
            fs = t.LocalQueueFairSharingStatus(
                weighted_share=st.fair_sharing.weighted_share,
                admission_fair_sharing_status=(
                    None
                    if afs is None
                    else t.AdmissionFairSharingStatus(
                        consumed_resources=afs.consumed_resources, last_update=afs.last_update
                    )
                ),
            )
        status = t.LocalQueueStatus(
            conditions=st.conditions,
            pending_workloads=st.pending_workloads,
            reserving_workloads=st.reserving_workloads,
            admitted_workloads=st.admitted_workloads,
            flavors_reservation=st.flavors_reservation,
            flavors_usage=st.flavor_usage,
            fair_sharing=fs,
        )
    return t.LocalQueue(api_version=o.api_version, metadata=o.metadata, spec=o.spec, status=status)


def lq_from_internal(o: t.LocalQueue) -> LocalQueue:
    status = None
    if o.status is not None:
        st = o.status
        fs = None
        if st.fair_sharing is not None:
            afs = st.fair_sharing.admission_fair_sharing_status
            fs = FairSharingStatus(
                weighted_share=st.fair_sharing.weighted_share,
                admission_fair_sharing_status=(
                    None
                    if afs is None
                    else AdmissionFairSharingStatus(
                        consumed_resources=afs.consumed_resources, last_update=afs.last_update
                    )
                ),
            )
        status = LocalQueueStatus(
            conditions=st.conditions,
            pending_workloads=st.pending_workloads,
            reserving_workloads=st.reserving_workloads,
            admitted_workloads=st.admitted_workloads,
            flavors_reservation=st.flavors_reservation,
            flavor_usage=st.flavors_usage,
            fair_sharing=fs,
        )
    return LocalQueue(api_version=t.V1BETA1, metadata=o.metadata, spec=o.spec, status=status)


# ----------------------------------------------------------------- Workload
WPC_SOURCE = "kueue.x-k8s.io/workloadpriorityclass"
PC_SOURCE = "scheduling.k8s.io/priorityclass"


class PodSetTopologyRequest(Object, kw_only=True):
    required: str | None = None
    preferred: str | None = None
    unconstrained: bool | None = None
    pod_index_label: str | None = None
    sub_group_index_label: str | None = None
    sub_group_count: int | None = None
    pod_set_group_name: str | None = None
    pod_set_slice_required_topology: str | None = None
    pod_set_slice_size: Annotated[int, Meta(ge=1, le=2**31 - 1)] | None = None


class PodSet(Object, kw_only=True):
    name: t.PodSetReference = "main"
    template: PodTemplateSpec
    count: t.NonNegInt32 = 1
    min_count: Annotated[int, Meta(ge=1, le=2**31 - 1)] | None = None
    topology_request: PodSetTopologyRequest | None = None


class WorkloadSpec(Object, kw_only=True):
    pod_sets: Annotated[
        list[Annotated[PodSet, t.PODSET_RULES]],
        Meta(min_length=1, max_length=18),
        list_map("name"),
    ]
    queue_name: t.LocalQueueName | None = None
    priority_class_name: Annotated[str, Meta(max_length=253), pattern(t.SUBDOMAIN_RE)] | None = None
    priority: t.Int32 | None = None
    priority_class_source: Literal[
        "kueue.x-k8s.io/workloadpriorityclass", "scheduling.k8s.io/priorityclass", ""
    ] = ""
    active: bool = True
    maximum_execution_time_seconds: Annotated[int, Meta(ge=1, le=2**31 - 1)] | None = None


WL_SPEC_RULES = cel(
    Rule(
        "has(self.priorityClassName) ? has(self.priority) : true",
        "priority should not be nil when priorityClassName is set",
        lambda s: not s.priority_class_name or s.priority is not None,
    ),
)


class TopologyDomainAssignment(Object, kw_only=True):
    values: Annotated[list[str], Meta(min_length=1, max_length=16), t.LIST_ATOMIC]
    count: t.PosInt32


class TopologyAssignment(Object, kw_only=True):
    levels: Annotated[list[str], Meta(min_length=1, max_length=16), t.LIST_ATOMIC]
    domains: list[TopologyDomainAssignment]


class PodSetAssignment(Object, kw_only=True):
    name: t.PodSetReference = "main"
    flavors: dict[t.ResourceName, t.ResourceFlavorReference] | None = None
    resource_usage: ResourceList | None = None
    count: t.NonNegInt32 | None = None
    topology_assignment: TopologyAssignment | None = None
    delayed_topology_request: Literal["Pending", "Ready"] | None = None


class Admission(Object, kw_only=True):
    cluster_queue: t.ClusterQueueReference
    pod_set_assignments: Annotated[list[PodSetAssignment], Meta(max_length=18), list_map("name")]


# v1beta1 lists a podSet's domains one by one; v1beta2 packs them into slices.
def _domains(ta: t.TopologyAssignment) -> list[TopologyDomainAssignment]:
    out = []
    for sl in ta.slices:
        for i in range(sl.domain_count):
            pc = sl.pod_counts
            count = pc.universal if pc.universal is not None else pc.individual[i]  # type: ignore[index]
            values = []
            for v in sl.values_per_level:
                if v.universal is not None:
                    values.append(v.universal)
                else:
                    ind = v.individual
                    assert ind is not None
                    values.append((ind.prefix or "") + ind.roots[i] + (ind.suffix or ""))
            out.append(TopologyDomainAssignment(values=values, count=count))
    return out


def _level_values(values: list[str]) -> t.TopologyAssignmentSliceLevelValues:
    """One level's values, as Kueue compacts them: one value for all, or the
    longest common prefix and suffix around each root."""
    prefix, suffix = values[0], values[0]
    for v in values[1:]:
        n = 0
        while n < min(len(prefix), len(v)) and prefix[n] == v[n]:
            n += 1
        prefix = prefix[:n]
        n = 0
        while n < min(len(suffix), len(v)) and suffix[-1 - n] == v[-1 - n]:
            n += 1
        suffix = suffix[len(suffix) - n :]
    if len(prefix) == max(len(v) for v in values):
        return t.TopologyAssignmentSliceLevelValues(universal=prefix)
    shortest = min(len(v) for v in values)
    if len(prefix) + len(suffix) > shortest:
        prefix = prefix[: shortest - len(suffix)]
    roots = [v[len(prefix) : len(v) - len(suffix)] for v in values]
    ind = t.TopologyAssignmentSliceLevelIndividualValues(
        prefix=prefix or None, suffix=suffix or None, roots=roots
    )
    return t.TopologyAssignmentSliceLevelValues(individual=ind)


def _slices(ta: TopologyAssignment) -> t.TopologyAssignment:
    if not ta.domains:
        return t.TopologyAssignment(levels=ta.levels, slices=[])
    counts = [d.count for d in ta.domains]
    same = all(c == counts[0] for c in counts)
    sl = t.TopologyAssignmentSlice(
        domain_count=len(ta.domains),
        values_per_level=[
            _level_values([d.values[i] for d in ta.domains]) for i in range(len(ta.levels))
        ],
        pod_counts=t.TopologyAssignmentSlicePodCounts(
            universal=counts[0] if same else None, individual=None if same else counts
        ),
    )
    return t.TopologyAssignment(levels=ta.levels, slices=[sl])


def ta_from_domains(
    levels: list[str], domains: list[tuple[list[str], int]]
) -> t.TopologyAssignment:
    """A v1beta2 assignment of domains listed one by one (the scheduler's TAS)."""
    listed = [TopologyDomainAssignment(values=v, count=c) for v, c in domains]
    return _slices(TopologyAssignment(levels=levels, domains=listed))


def domains_of(ta: t.TopologyAssignment) -> list[tuple[list[str], int]]:
    """The (values, count) of each domain of a v1beta2 assignment."""
    return [(d.values, d.count) for d in _domains(ta)]


def _ta_from_v2(ta: t.TopologyAssignment) -> TopologyAssignment:
    return TopologyAssignment(levels=ta.levels, domains=_domains(ta))


def _convert_admission(a: Any, admission: Any, assignment: Any, convert_ta: Any) -> Any:
    """An Admission in the other version: the same fields, the topology
    assignment converted with ``convert_ta``."""
    if a is None:
        return None
    return admission(
        cluster_queue=a.cluster_queue,
        pod_set_assignments=[
            assignment(
                name=p.name,
                flavors=p.flavors,
                resource_usage=p.resource_usage,
                count=p.count,
                topology_assignment=convert_ta(p.topology_assignment)
                if p.topology_assignment is not None
                else None,
                delayed_topology_request=p.delayed_topology_request,
            )
            for p in a.pod_set_assignments
        ],
    )


def _admission_to_v2(a: Admission | None) -> t.Admission | None:
    return _convert_admission(a, t.Admission, t.PodSetAssignment, _slices)


def _admission_from_v2(a: t.Admission | None) -> Admission | None:
    return _convert_admission(a, Admission, PodSetAssignment, _ta_from_v2)


class WorkloadStatus(Object, kw_only=True):
    conditions: Annotated[Conditions, Meta(max_length=16)] | None = None
    admission: Admission | None = None
    requeue_state: t.RequeueState | None = None
    reclaimable_pods: (
        Annotated[list[t.ReclaimablePod], Meta(max_length=18), list_map("name")] | None
    ) = None
    admission_checks: (
        Annotated[list[t.AdmissionCheckState], Meta(max_length=8), list_map("name")] | None
    ) = None
    resource_requests: (
        Annotated[list[t.PodSetRequest], Meta(max_length=18), list_map("name")] | None
    ) = None
    # Kueue's v1beta1 field carries the misspelling.
    accumulated_past_exexcution_time_seconds: t.Int32 | None = None
    scheduling_stats: t.SchedulingStats | None = None
    nominated_cluster_names: Annotated[list[str], Meta(max_length=20)] | None = None
    cluster_name: str | None = None
    unhealthy_nodes: (
        Annotated[list[t.UnhealthyNode], Meta(max_length=8), list_map("name")] | None
    ) = None


class Workload(Object, kw_only=True):
    api_version: str = t.V1BETA1
    kind: str = "Workload"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: Annotated[WorkloadSpec, WL_SPEC_RULES]
    status: Annotated[WorkloadStatus, t.WL_STATUS_RULES] | None = None


def _source_rule(s: WorkloadSpec, o: WorkloadSpec) -> bool:
    # The source is always there (defaulted to ""), so has() always holds.
    return s.priority_class_source == o.priority_class_source


def _name_rule(s: WorkloadSpec, o: WorkloadSpec) -> bool:
    return (
        s.priority_class_source == WPC_SOURCE
        or not s.priority_class_name
        or not o.priority_class_name
        or s.priority_class_name == o.priority_class_name
    )


_OLD_SOURCE = (
    f"{t.OLD_QR_CEL} && has(oldSelf.spec.priorityClassSource) && has(self.spec.priorityClassSource)"
)

WL_RULES = cel(
    t.WL_PODSET_ASSIGNMENTS_RULE,
    Rule(
        f"({_OLD_SOURCE}) ? (oldSelf.spec.priorityClassSource == self.spec.priorityClassSource) "
        ": true",
        "priorityClassSource is immutable while workload quota reserved",
        lambda _: True,
        transition=lambda new, old: not quota_reserved(old) or _source_rule(new.spec, old.spec),
    ),
    Rule(
        f"({_OLD_SOURCE} && (self.spec.priorityClassSource != "
        "'kueue.x-k8s.io/workloadpriorityclass') && has(oldSelf.spec.priorityClassName) && "
        "has(self.spec.priorityClassName)) ? (oldSelf.spec.priorityClassName == "
        "self.spec.priorityClassName) : true",
        "priorityClassName is immutable while workload quota reserved and priorityClassSource "
        "is not equal to kueue.x-k8s.io/workloadpriorityclass",
        lambda _: True,
        transition=lambda new, old: not quota_reserved(old) or _name_rule(new.spec, old.spec),
    ),
    t.WL_QUEUE_NAME_RULE,
    t.WL_MAX_EXECUTION_RULE,
)


def _topology_to_v2(tr: PodSetTopologyRequest | None) -> t.PodSetTopologyRequest | None:
    if tr is None:
        return None
    return t.PodSetTopologyRequest(**msgspec.structs.asdict(tr))


def _topology_from_v2(tr: t.PodSetTopologyRequest | None) -> PodSetTopologyRequest | None:
    if tr is None:
        return None
    d = msgspec.structs.asdict(tr)
    d.pop("podset_slice_required_topology_constraints", None)
    return PodSetTopologyRequest(**d)


def wl_to_internal(o: Workload) -> t.Workload:
    s = o.spec
    ref = None
    if s.priority_class_name and s.priority_class_source == WPC_SOURCE:
        ref = t.PriorityClassRef(
            group=t.WPC_GROUP, kind="WorkloadPriorityClass", name=s.priority_class_name
        )
    elif s.priority_class_name and s.priority_class_source == PC_SOURCE:
        ref = t.PriorityClassRef(group=t.PC_GROUP, kind="PriorityClass", name=s.priority_class_name)
    spec = t.WorkloadSpec(
        pod_sets=[
            t.PodSet(
                name=p.name,
                template=p.template,
                count=p.count,
                min_count=p.min_count,
                topology_request=_topology_to_v2(p.topology_request),
            )
            for p in s.pod_sets
        ],
        queue_name=s.queue_name,
        priority_class_ref=ref,
        priority=s.priority,
        active=s.active,
        maximum_execution_time_seconds=s.maximum_execution_time_seconds,
    )
    status = None
    if o.status is not None:
        st = o.status
        status = t.WorkloadStatus(
            conditions=st.conditions,
            admission=_admission_to_v2(st.admission),
            requeue_state=st.requeue_state,
            reclaimable_pods=st.reclaimable_pods,
            admission_checks=st.admission_checks,
            resource_requests=st.resource_requests,
            accumulated_past_execution_time_seconds=st.accumulated_past_exexcution_time_seconds,
            scheduling_stats=st.scheduling_stats,
            nominated_cluster_names=st.nominated_cluster_names,
            cluster_name=st.cluster_name,
            unhealthy_nodes=st.unhealthy_nodes,
        )
    return t.Workload(api_version=o.api_version, metadata=o.metadata, spec=spec, status=status)


def wl_from_internal(o: t.Workload) -> Workload:
    s = o.spec
    name, source = None, ""
    if s.priority_class_ref is not None:
        name = s.priority_class_ref.name
        source = WPC_SOURCE if s.priority_class_ref.group == t.WPC_GROUP else PC_SOURCE
    spec = WorkloadSpec(
        pod_sets=[
            PodSet(
                name=p.name,
                template=p.template,
                count=p.count,
                min_count=p.min_count,
                topology_request=_topology_from_v2(p.topology_request),
            )
            for p in s.pod_sets
        ],
        queue_name=s.queue_name,
        priority_class_name=name,
        priority=s.priority,
        priority_class_source=source,
        active=s.active,
        maximum_execution_time_seconds=s.maximum_execution_time_seconds,
    )
    status = None
    if o.status is not None:
        st = o.status
        status = WorkloadStatus(
            conditions=st.conditions,
            admission=_admission_from_v2(st.admission),
            requeue_state=st.requeue_state,
            reclaimable_pods=st.reclaimable_pods,
            admission_checks=st.admission_checks,
            resource_requests=st.resource_requests,
            accumulated_past_exexcution_time_seconds=st.accumulated_past_execution_time_seconds,
            scheduling_stats=st.scheduling_stats,
            nominated_cluster_names=st.nominated_cluster_names,
            cluster_name=st.cluster_name,
            unhealthy_nodes=st.unhealthy_nodes,
        )
    return Workload(api_version=t.V1BETA1, metadata=o.metadata, spec=spec, status=status)


# ----------------------------------------------------------------- AdmissionCheck
class AdmissionCheckParametersReference(Object, kw_only=True):
    api_group: Annotated[str, Meta(max_length=253), pattern(t.SUBDOMAIN_RE)]
    kind: Annotated[str, Meta(max_length=63), pattern(t.KIND_RE)]
    name: Annotated[str, Meta(max_length=63), pattern(t.LABEL_RE)]


class AdmissionCheckSpec(Object, kw_only=True):
    controller_name: Annotated[str, t.CONTROLLER_NAME_IMMUTABLE]
    retry_delay_minutes: int | None = 15  # deprecated; dropped on conversion
    parameters: AdmissionCheckParametersReference | None = None


class AdmissionCheck(Object, kw_only=True):
    api_version: str = t.V1BETA1
    kind: str = "AdmissionCheck"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: AdmissionCheckSpec = msgspec.field(
        default_factory=lambda: AdmissionCheckSpec(controller_name="")
    )
    status: t.AdmissionCheckStatus | None = None


def ac_to_internal(o: AdmissionCheck) -> t.AdmissionCheck:
    p = o.spec.parameters
    params = (
        None
        if p is None
        else t.AdmissionCheckParametersReference(api_group=p.api_group, kind=p.kind, name=p.name)
    )
    return t.AdmissionCheck(
        api_version=o.api_version,
        metadata=o.metadata,
        spec=t.AdmissionCheckSpec(controller_name=o.spec.controller_name, parameters=params),
        status=o.status,
    )


def ac_from_internal(o: t.AdmissionCheck) -> AdmissionCheck:
    p = o.spec.parameters
    params = (
        None
        if p is None
        else AdmissionCheckParametersReference(api_group=p.api_group, kind=p.kind, name=p.name)
    )
    return AdmissionCheck(
        api_version=t.V1BETA1,
        metadata=o.metadata,
        spec=AdmissionCheckSpec(controller_name=o.spec.controller_name, parameters=params),
        status=o.status,
    )


# ----------------------------------------------------------------- WorkloadPriorityClass
class WorkloadPriorityClass(Object, kw_only=True):
    api_version: str = t.V1BETA1
    kind: str = "WorkloadPriorityClass"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    value: t.Int32
    description: str | None = None


def wpc_to_internal(o: WorkloadPriorityClass) -> t.WorkloadPriorityClass:
    return t.WorkloadPriorityClass(
        api_version=o.api_version, metadata=o.metadata, value=o.value, description=o.description
    )


def wpc_from_internal(o: t.WorkloadPriorityClass) -> WorkloadPriorityClass:
    return WorkloadPriorityClass(metadata=o.metadata, value=o.value, description=o.description)


def _same(o: Any) -> Any:
    return o


def _relabel(o: Any) -> Any:
    return replace(o, api_version=t.V1BETA1)


# kind -> (v1beta1 wire type, to internal, from internal)
KINDS: dict[str, tuple[type[Object], Any, Any]] = {
    "ResourceFlavor": (t.ResourceFlavor, _same, _relabel),
    "Cohort": (t.Cohort, _same, _relabel),
    "ClusterQueue": (ClusterQueue, cq_to_internal, cq_from_internal),
    "LocalQueue": (LocalQueue, lq_to_internal, lq_from_internal),
    "Workload": (Workload, wl_to_internal, wl_from_internal),
    "AdmissionCheck": (AdmissionCheck, ac_to_internal, ac_from_internal),
    "WorkloadPriorityClass": (WorkloadPriorityClass, wpc_to_internal, wpc_from_internal),
    "Topology": (TopologyV1, topology_to_internal, topology_from_internal),
}

# Rules on the whole object, by kind (v1beta2's are kueue.types.ROOT_RULES).
ROOT_RULES: dict[str, Meta] = {"Workload": WL_RULES}
