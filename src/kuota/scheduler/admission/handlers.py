"""The object tables' handlers: one per kind the core reads, each storing
its objects and doing what Kueue's controllers and cache do when one is
created, updated or deleted. The core dispatches by kind through the table
``handlers`` builds; other kinds (Nodes, Pods, Jobs) are not its business."""

from __future__ import annotations

from typing import Any, Final

from kuota.api.kueue import types as kt
from kuota.quota.workload import has_quota_reservation
from kuota.scheduler.admission.admission_checks import topology_pending
from kuota.scheduler.admission.admission_fair_sharing import AdmissionFairSharing
from kuota.scheduler.admission.cluster_queues import QueueController, quotas_of, weight_of
from kuota.scheduler.admission.state import CoreState, key_of
from kuota.scheduler.admission.unreserved import UnreservedReasons
from kuota.scheduler.admission.wakes import Wakes
from kuota.scheduler.admission.workloads import WorkloadController
from kuota.scheduler.tas.snapshot import non_tas_pod_usage, tas_node

CLUSTER_SCOPED: Final = frozenset(
    {
        "ResourceFlavor",
        "ClusterQueue",
        "Cohort",
        "WorkloadPriorityClass",
        "AdmissionCheck",
        "Namespace",
        "PriorityClass",
        "RuntimeClass",
        "Node",
        "Topology",
    }
)


class KindHandler:
    """One kind's table: ``put`` an object created or updated (``keep_status``:
    an update that keeps the status the core has), ``delete`` one by name
    (whether it was there)."""

    def __init__(self, state: CoreState) -> None:
        self.state = state

    def put(self, obj: Any, keep_status: bool) -> None:
        raise NotImplementedError

    def delete(self, namespace: str, name: str) -> bool:
        raise NotImplementedError


class NamespaceHandler(KindHandler):
    def __init__(self, state: CoreState, wakes: Wakes) -> None:
        super().__init__(state)
        self.wakes = wakes

    def put(self, obj: Any, keep_status: bool) -> None:
        self.state.namespaces[obj.metadata.name] = obj
        self.wakes.retry_all()

    def delete(self, namespace: str, name: str) -> bool:
        return self.state.namespaces.pop(name, None) is not None


class FlavorHandler(KindHandler):
    def __init__(self, state: CoreState, qc: QueueController, wakes: Wakes) -> None:
        super().__init__(state)
        self.qc = qc
        self.wakes = wakes

    def put(self, obj: Any, keep_status: bool) -> None:
        name = obj.metadata.name
        old_rf = self.state.flavors.get(name)
        self.state.flavors[name] = obj
        self.qc.refresh_cqs()
        if old_rf is not None and _flavor_scheduling_changed(old_rf, obj):
            # Kueue's ResourceFlavor controller: the queues stay active but
            # what the flavor admits changed, so the workloads it left
            # inadmissible in the queues that use it are tried again.
            roots: set[str] = set()
            for cq_name, st in self.state.snap.cqs.items():
                if any(name in rg.flavors for rg in st.resource_groups):
                    roots.update(self.wakes.root_cqs(cq_name))
            self.wakes.retry(sorted(roots))

    def delete(self, namespace: str, name: str) -> bool:
        if self.state.flavors.pop(name, None) is None:
            return False
        self.qc.refresh_cqs()
        return True


class TopologyHandler(KindHandler):
    """Kueue's Topology controller and TAS cache: a TAS flavor's queues are
    active only while its Topology exists."""

    def __init__(self, state: CoreState, qc: QueueController, wakes: Wakes) -> None:
        super().__init__(state)
        self.qc = qc
        self.wakes = wakes

    def put(self, obj: Any, keep_status: bool) -> None:
        self.state.tas.topologies[obj.metadata.name] = obj
        self.qc.refresh_cqs()
        self.wakes.retry_all()

    def delete(self, namespace: str, name: str) -> bool:
        if self.state.tas.topologies.pop(name, None) is None:
            return False
        self.qc.refresh_cqs()
        return True


class NodeHandler(KindHandler):
    """Kueue's TAS node cache (the control plane gives nodes at cycle time
    instead; this serves the core alone)."""

    def put(self, obj: Any, keep_status: bool) -> None:
        self.state.tas.nodes[obj.metadata.name] = tas_node(obj)

    def delete(self, namespace: str, name: str) -> bool:
        return self.state.tas.nodes.pop(name, None) is not None


class PodHandler(KindHandler):
    """Kueue's non-TAS pod usage cache (as NodeHandler, for the core alone)."""

    def put(self, obj: Any, keep_status: bool) -> None:
        key = key_of(obj.metadata.namespace, obj.metadata.name)
        usage = non_tas_pod_usage(obj)
        if usage is None:
            self.state.tas.pods.pop(key, None)
        else:
            self.state.tas.pods[key] = usage

    def delete(self, namespace: str, name: str) -> bool:
        return self.state.tas.pods.pop(key_of(namespace, name), None) is not None


class ClusterQueueHandler(KindHandler):
    def __init__(
        self,
        state: CoreState,
        qc: QueueController,
        wlc: WorkloadController,
        reasons: UnreservedReasons,
    ) -> None:
        super().__init__(state)
        self.qc = qc
        self.wlc = wlc
        self.reasons = reasons

    def put(self, obj: Any, keep_status: bool) -> None:
        name = obj.metadata.name
        old = self.state.cq_objs.get(name)
        if keep_status and old is not None:
            obj.status = old.status
        self.state.cq_objs[name] = obj
        self.state.terminating.discard(name)  # (made again: a new one)
        self.qc.refresh_cq(name, old)

    def delete(self, namespace: str, name: str) -> bool:
        state = self.state
        if name not in state.cq_objs or name in state.terminating:
            return False
        st = state.snap.cqs.get(name)
        if st is not None and st.workloads:
            # Kueue keeps a ClusterQueue whose workloads still hold quota
            # (its resource-in-use finalizer): terminating, inactive, its
            # usage still counted in the cohort, until the last one goes.
            state.terminating.add(name)
            self.qc.refresh_cq(name, state.cq_objs[name], structural=False)
            for k in sorted(st.workloads):
                self.wlc.sync(k)
            self.reasons.restamp(self.reasons.lqs_of(name))
            return True
        self.wlc.remove_cq(name)
        self.reasons.restamp(self.reasons.lqs_of(name))
        return True


class CohortHandler(KindHandler):
    def __init__(self, state: CoreState, qc: QueueController, wakes: Wakes) -> None:
        super().__init__(state)
        self.qc = qc
        self.wakes = wakes

    def put(self, obj: Any, keep_status: bool) -> None:
        state = self.state
        name = obj.metadata.name
        state.cohort_objs[name] = obj
        state.queues.settle_wakes()  # the trees change shape
        state.tree.set_cohort(
            name,
            obj.spec.parent_name,
            quotas_of(obj.spec.resource_groups),
            weight_of(obj.spec.fair_sharing),
        )
        self.qc.refresh_cqs()
        self.wakes.retry_tree_of_cohort(name)

    def delete(self, namespace: str, name: str) -> bool:
        state = self.state
        if state.cohort_objs.pop(name, None) is None:
            return False
        cqs = self.wakes.cqs_in_tree_of_cohort(name)
        state.queues.settle_wakes()
        state.tree.delete_cohort(name)
        self.qc.refresh_cqs()
        self.wakes.retry(cqs)
        return True


class LocalQueueHandler(KindHandler):
    def __init__(
        self,
        state: CoreState,
        qc: QueueController,
        wlc: WorkloadController,
        reasons: UnreservedReasons,
        fair: AdmissionFairSharing,
    ) -> None:
        super().__init__(state)
        self.qc = qc
        self.wlc = wlc
        self.reasons = reasons
        self.fair = fair

    def put(self, obj: Any, keep_status: bool) -> None:
        key = key_of(obj.metadata.namespace, obj.metadata.name)
        old_lq = self.state.lq_objs.get(key)
        if keep_status and old_lq is not None:
            obj.status = old_lq.status
        self.state.lq_objs[key] = obj
        self.qc.refresh_lq(obj, old_lq)

    def delete(self, namespace: str, name: str) -> bool:
        state = self.state
        key = key_of(namespace, name)
        if state.lq_objs.pop(key, None) is None:
            return False
        state.queues.delete_local_queue(key)
        self.wlc.refile_reserving(namespace, name)
        self.reasons.restamp({(namespace, name)})
        self.fair.weights.pop(key, None)
        if state.afs is not None:
            state.afs.delete(key)
            self.fair.due.pop(key, None)
        return True


class WorkloadPriorityClassHandler(KindHandler):
    def __init__(self, state: CoreState, wlc: WorkloadController) -> None:
        super().__init__(state)
        self.wlc = wlc

    def put(self, obj: Any, keep_status: bool) -> None:
        name = obj.metadata.name
        old_wpc = self.state.wpcs.get(name)
        self.state.wpcs[name] = obj
        if old_wpc is None or old_wpc.value != obj.value:
            self.wlc.sync_priority_class(name, obj.value)

    def delete(self, namespace: str, name: str) -> bool:
        return self.state.wpcs.pop(name, None) is not None


class PriorityClassHandler(KindHandler):
    def put(self, obj: Any, keep_status: bool) -> None:
        self.state.pcs[obj.metadata.name] = obj

    def delete(self, namespace: str, name: str) -> bool:
        return self.state.pcs.pop(name, None) is not None


class _NamespaceResizer(KindHandler):
    """A namespaced kind whose objects change the requests of the waiting
    workloads of their namespace: each write resyncs that namespace."""

    def __init__(self, state: CoreState, wlc: WorkloadController) -> None:
        super().__init__(state)
        self.wlc = wlc

    def table(self) -> dict[str, dict[str, Any]]:
        raise NotImplementedError

    def put(self, obj: Any, keep_status: bool) -> None:
        self.state.ctx_gen += 1
        m = obj.metadata
        self.table().setdefault(m.namespace, {})[m.name] = obj
        self.wlc.resync_namespace(m.namespace)

    def delete(self, namespace: str, name: str) -> bool:
        self.state.ctx_gen += 1
        found = self.table().get(namespace, {}).pop(name, None) is not None
        if found:
            self.wlc.resync_namespace(namespace)
        return found


class LimitRangeHandler(_NamespaceResizer):
    """LimitRanges resize the waiting workloads of their namespace."""

    def table(self) -> dict[str, dict[str, Any]]:
        return self.state.limit_ranges


class ResourceClaimTemplateHandler(_NamespaceResizer):
    """ResourceClaimTemplates (DRA) resize the waiting workloads of their
    namespace, as Kueue's workload controller reprocesses a pending DRA
    workload."""

    def table(self) -> dict[str, dict[str, Any]]:
        return self.state.claim_templates


class _DeviceHandler(KindHandler):
    """ResourceSlices and DeviceClasses (DRA): what counter, capacity and CEL
    checks read; a change recharges the waiting workloads with claims, as
    Kueue's workload controller retries a DRA workload it could not charge."""

    def __init__(self, state: CoreState, wlc: WorkloadController) -> None:
        super().__init__(state)
        self.wlc = wlc

    def table(self) -> dict[str, Any]:
        raise NotImplementedError

    def put(self, obj: Any, keep_status: bool) -> None:
        old = self.table().get(obj.metadata.name)
        self.table()[obj.metadata.name] = obj
        self._recharge(_extended_names(old, obj))

    def delete(self, namespace: str, name: str) -> bool:
        old = self.table().pop(name, None)
        if old is not None:
            self._recharge(_extended_names(old))
        return old is not None

    def _recharge(self, extended: frozenset[str]) -> None:
        """``extended``: the extended resource names a changed DeviceClass
        declared or declares: workloads asking for them are charged anew
        (Kueue's DeviceClass watch requeues them)."""
        self.state.ctx_gen += 1
        for key, wl in list(self.state.workloads.items()):
            if not has_quota_reservation(wl) and any(
                ps.template.spec is not None
                and (ps.template.spec.resource_claims or _asks_for(ps.template.spec, extended))
                for ps in wl.spec.pod_sets
            ):
                self.wlc.sync(key, event=False)


def _extended_names(*objs: Any) -> frozenset[str]:
    """The ``spec.extendedResourceName``s of DeviceClasses (none for slices)."""
    out = set()
    for o in objs:
        name = getattr(getattr(o, "spec", None), "extended_resource_name", None)
        if isinstance(name, str) and name:
            out.add(name)
    return frozenset(out)


def _asks_for(spec: Any, names: frozenset[str]) -> bool:
    if not names:
        return False
    for c in (*(spec.init_containers or ()), *spec.containers):
        reqs = c.resources.requests if c.resources is not None else None
        if reqs and not names.isdisjoint(reqs):
            return True
    return False


class ResourceSliceHandler(_DeviceHandler):
    def table(self) -> dict[str, Any]:
        return self.state.resource_slices


class DeviceClassHandler(_DeviceHandler):
    def table(self) -> dict[str, Any]:
        return self.state.device_class_objs


class RuntimeClassHandler(KindHandler):
    """RuntimeClasses (their pod overhead) resize every waiting workload."""

    def __init__(self, state: CoreState, wlc: WorkloadController) -> None:
        super().__init__(state)
        self.wlc = wlc

    def put(self, obj: Any, keep_status: bool) -> None:
        self.state.ctx_gen += 1
        self.state.runtime_classes[obj.metadata.name] = obj
        self.wlc.resync_namespace(None)

    def delete(self, namespace: str, name: str) -> bool:
        self.state.ctx_gen += 1
        return self.state.runtime_classes.pop(name, None) is not None


class AdmissionCheckHandler(KindHandler):
    def __init__(self, state: CoreState, qc: QueueController) -> None:
        super().__init__(state)
        self.qc = qc

    def put(self, obj: Any, keep_status: bool) -> None:
        self.state.checks[obj.metadata.name] = obj
        self.qc.refresh_cqs()

    def delete(self, namespace: str, name: str) -> bool:
        if self.state.checks.pop(name, None) is None:
            return False
        self.qc.refresh_cqs()
        return True


class WorkloadHandler(KindHandler):
    def __init__(
        self, state: CoreState, wlc: WorkloadController, fair: AdmissionFairSharing
    ) -> None:
        super().__init__(state)
        self.wlc = wlc
        self.fair = fair

    def put(self, obj: Any, keep_status: bool) -> None:
        key = key_of(obj.metadata.namespace, obj.metadata.name)
        old_wl = self.state.workloads.get(key)
        if keep_status and old_wl is not None:
            obj.status = old_wl.status
        self.wlc.put(obj, old_wl)
        if obj.status is not None and obj.status.unhealthy_nodes:
            self.state.unhealthy.add(key)  # (a second pass may replace the node)
        else:
            self.state.unhealthy.discard(key)
        if topology_pending(obj):
            self.state.delayed_topology.add(key)  # (a second pass may assign it)

    def delete(self, namespace: str, name: str) -> bool:
        state = self.state
        key = key_of(namespace, name)
        wl = state.workloads.pop(key, None)
        if wl is None:
            return False
        self.wlc.forget(key)
        state.unhealthy.discard(key)
        state.delayed_topology.discard(key)
        state.second_pass_at.pop(key, None)
        state.second_pass_failures.pop(key, None)
        if state.afs is not None:
            lq = key_of(namespace, wl.spec.queue_name or "")
            state.afs.sub_penalty(lq, key)
            self.fair.reconcile(lq)
        return True


def handlers(
    state: CoreState,
    qc: QueueController,
    wlc: WorkloadController,
    wakes: Wakes,
    reasons: UnreservedReasons,
    fair: AdmissionFairSharing,
) -> dict[str, KindHandler]:
    """The handler of each kind the core reads."""
    return {
        "Namespace": NamespaceHandler(state, wakes),
        "ResourceFlavor": FlavorHandler(state, qc, wakes),
        "ClusterQueue": ClusterQueueHandler(state, qc, wlc, reasons),
        "Cohort": CohortHandler(state, qc, wakes),
        "LocalQueue": LocalQueueHandler(state, qc, wlc, reasons, fair),
        "WorkloadPriorityClass": WorkloadPriorityClassHandler(state, wlc),
        "PriorityClass": PriorityClassHandler(state),
        "LimitRange": LimitRangeHandler(state, wlc),
        "RuntimeClass": RuntimeClassHandler(state, wlc),
        "ResourceClaimTemplate": ResourceClaimTemplateHandler(state, wlc),
        "ResourceSlice": ResourceSliceHandler(state, wlc),
        "DeviceClass": DeviceClassHandler(state, wlc),
        "AdmissionCheck": AdmissionCheckHandler(state, qc),
        "Workload": WorkloadHandler(state, wlc, fair),
        "Topology": TopologyHandler(state, qc, wakes),
        "Node": NodeHandler(state),
        "Pod": PodHandler(state),
    }


def _flavor_scheduling_changed(old: kt.ResourceFlavor, new: kt.ResourceFlavor) -> bool:
    """Kueue's flavorSchedulingFieldsChanged: the fields the flavor assigner reads."""
    a, b = old.spec, new.spec
    return (
        a.node_taints != b.node_taints
        or a.tolerations != b.tolerations
        or a.node_labels != b.node_labels
    )
