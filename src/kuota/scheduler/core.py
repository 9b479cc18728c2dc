"""The admission core: Kueue's objects in, admission decisions out.

It holds what Kueue's caches hold (flavors, queues, cohorts, the workloads
holding quota and the pending ones), applies object changes the way Kueue's
controllers react to them, and runs scheduling cycles. Pure and synchronous:
time is passed in (``advance``), nothing is read from a clock or a disk, so
the same core serves scenarios, simulations and the controllers of a cluster.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any, Final

import msgspec

from kuota.api import k8s as kc
from kuota.api.hooks import enc_hook
from kuota.api.kueue import types as kt
from kuota.api.kueue.config import KueueConfig
from kuota.api.kueue.webhooks import ADMISSION_GATED_BY, parse_int32
from kuota.api.meta import Condition, selector_matches
from kuota.api.quantity import Quantity
from kuota.queueing.manager import QueueManager
from kuota.queueing.queues import NAMESPACE_MISMATCH
from kuota.quota.afs import (
    Amounts,
    UsageLedger,
    decimal_of,
    from_units,
    quantity_weight,
    to_quantity,
)
from kuota.quota.requests import (
    RequestContext,
    podset_requests,
    resource_quantity,
    resource_value,
    saturate_int64,
    validate_podset_resources,
)
from kuota.quota.tree import FR, Cohort, Quota, QuotaTree
from kuota.quota.workload import (
    NO_RECLAIMABLE,
    ORDER_EVICTION_TS,
    ORDER_NO_PRIORITY_SORTING,
    PodSetResources,
    SpecPodSets,
    WorkloadInfo,
    condition_true,
    evicted_reason,
    find_condition,
    has_quota_reservation,
    held_part,
    is_admitted,
    is_finished,
    podsets_from_admission,
    podsets_from_spec,
    reclaimable_counts,
)
from kuota.scheduler import unadmitted as ur
from kuota.scheduler.flavorassigner import Assignment
from kuota.scheduler.preemption import Target, preemption_message
from kuota.scheduler.snapshot import (
    ClusterQueueState,
    CurrentInfos,
    ResourceGroup,
    Snapshot,
    sum_into,
    take_from,
)
from kuota.scheduler.views import (
    ClusterQueueView,
    CycleResult,
    FlavorUsage,
    LocalQueueView,
    Preemption,
    WorkloadView,
)

# Bound once (Final: a C static when compiled, not a module-dict lookup per call).
heappop: Final = heapq.heappop
heappush: Final = heapq.heappush
_replace: Final = msgspec.structs.replace

# Distinct pod templates whose requests and checks are kept (then forgotten at once).
_TEMPLATE_CACHE: Final = 10_000
_NS_MATCHES: Final = 4096  # namespaces kept per ClusterQueue


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
    }
)


def set_condition(
    wl: kt.Workload, ctype: str, status: str, reason: str, message: str, now: datetime
) -> bool:
    """apimeta.SetStatusCondition: the transition time moves only when the status does."""
    st = wl.status
    if st is None:
        st = wl.status = kt.WorkloadStatus()
    conds = st.conditions
    if conds is None:
        conds = st.conditions = []
    for c in conds:
        if c.type == ctype:
            was = c.status
            changed = was != status or c.reason != reason or c.message != message
            if was != status:
                c.last_transition_time = now
            c.status, c.reason, c.message = status, reason, message  # type: ignore[assignment]
            return changed
    conds.append(
        Condition(
            type=ctype,
            status=status,  # type: ignore[arg-type]
            reason=reason,
            message=message,
            last_transition_time=now,
            observed_generation=wl.metadata.generation or None,
        )
    )
    return True


def _deactivate(wl: kt.Workload) -> None:
    """spec.active = False on a new spec: the core never writes to a spec in
    place, so its workloads share the stored (immutable) spec object, and the
    caches keyed by it (requests, resource checks) outlive status writes."""
    wl.spec = _replace(wl.spec, active=False)


def with_condition(
    wl: kt.Workload, ctype: str, status: str, reason: str, message: str, now: datetime
) -> kt.Workload | None:
    """A copy of a stored (shared, never mutated) Workload with the condition
    set as set_condition sets it, or None when that would change nothing. The
    copy shares all but the status, the list of conditions and the condition
    set: a status write sends no more (the store copies the status it is
    given), and a whole clone of the Workload cost a job's every reconcile."""
    st = wl.status
    conds = (st.conditions if st is not None else None) or ()
    for c in conds:
        if c.type == ctype:
            if c.status == status and c.reason == reason and c.message == message:
                return None
            break
    new = _replace(
        wl,
        status=_replace(st, conditions=[_replace(c) if c.type == ctype else c for c in conds])
        if st is not None
        else None,
    )
    set_condition(new, ctype, status, reason, message, now)
    return new


# A workload's first Admitted, PodsReady, Evicted and QuotaReserved conditions.
_TimerConds = tuple[Condition | None, Condition | None, Condition | None, Condition | None]
_NO_TIMER_CONDS: Final[_TimerConds] = (None, None, None, None)


def _timer_conds(wl: kt.Workload) -> _TimerConds:
    """What a workload's timers read of its conditions, in one walk of them
    (the first of each type, as find_condition): each status change asks."""
    st = wl.status
    conds = st.conditions if st is not None else None
    if not conds:
        return _NO_TIMER_CONDS
    adm = ready = evicted = reserved = None
    for c in conds:
        t = c.type
        if t == "Admitted":
            if adm is None:
                adm = c
        elif t == "PodsReady":
            if ready is None:
                ready = c
        elif t == "Evicted":
            if evicted is None:
                evicted = c
        elif t == "QuotaReserved" and reserved is None:
            reserved = c
    return adm, ready, evicted, reserved


def _true(c: Condition | None) -> bool:
    return c is not None and c.status == "True"


def _key(ns: str, name: str) -> str:
    return f"{ns}/{name}"


_MULTIKUEUE: Final = "kueue.x-k8s.io/multikueue"
_PROVISIONING: Final = "kueue.x-k8s.io/provisioning-request"


def _gated_by(wl: kt.Workload) -> str:
    """Who gates the workload's admission (the admission-gated-by annotation), or ""."""
    return (wl.metadata.annotations or {}).get(ADMISSION_GATED_BY, "")


def _flavor_scheduling_changed(old: kt.ResourceFlavor, new: kt.ResourceFlavor) -> bool:
    """Kueue's flavorSchedulingFieldsChanged: the fields the flavor assigner reads."""
    a, b = old.spec, new.spec
    return (
        a.node_taints != b.node_taints
        or a.tolerations != b.tolerations
        or a.node_labels != b.node_labels
    )


class AdmissionCore:
    def __init__(self, config: KueueConfig, now: datetime) -> None:
        self.config = config
        self.now = now
        self.cycle_count = 0
        wfpr = config.wait_for_pods_ready
        # Kueue's Ordering, for queues, cycles and preemption (bits, see workload.py).
        evict_ts = wfpr is None or wfpr.requeuing_strategy.timestamp == "Eviction"
        self.eviction_timestamp = (ORDER_EVICTION_TS if evict_ts else 0) | (
            0 if config.gate("PrioritySortingWithinCohort") else ORDER_NO_PRIORITY_SORTING
        )
        self.ignore_undeclared = (
            config.gate("QuotaCheckStrategy")
            and config.resources.quota_check_strategy == "IgnoreUndeclared"
        )
        self.namespaces: dict[str, kc.Namespace] = {}
        self.flavors: dict[str, kt.ResourceFlavor] = {}
        self.cq_objs: dict[str, kt.ClusterQueue] = {}
        self.cohort_objs: dict[str, kt.Cohort] = {}
        self.lq_objs: dict[str, kt.LocalQueue] = {}
        self.wpcs: dict[str, kt.WorkloadPriorityClass] = {}
        self.pcs: dict[str, kc.PriorityClass] = {}
        self.limit_ranges: dict[str, dict[str, kc.LimitRange]] = {}
        self.runtime_classes: dict[str, kc.RuntimeClass] = {}
        self.checks: dict[str, kt.AdmissionCheck] = {}
        self.workloads: dict[str, kt.Workload] = {}
        self.tree = QuotaTree()
        self.snap = Snapshot(self.tree, {}, self.flavors)
        # The current info of each workload; changes reach the snapshot (its
        # LocalQueue status check, holders_current).
        self.infos: dict[str, WorkloadInfo] = CurrentInfos(self.snap)
        self.queues = QueueManager(config.gate("SchedulingEquivalenceHashing"))
        self.queues.tree_of = self._tree_key
        self.preemptions: list[Preemption] = []
        self.evictions: list[tuple[str, str]] = []
        # Admission fair sharing (config and gate): the LocalQueues' usage
        # ledger, when each LocalQueue samples next, and their weights.
        afs = config.admission_fair_sharing
        self.afs = (
            UsageLedger(afs) if afs is not None and config.gate("AdmissionFairSharing") else None
        )
        self._afs_due: dict[str, datetime] = {}
        self._lq_weights: dict[str, float] = {}
        self._pending_evictions: dict[str, str] = {}  # key -> reason, quota still held
        self._reclaim_gate = config.gate("ReclaimablePods")
        # The gates as a plain dict: the config's gate() is interpreted code,
        # and cycles and workload filing ask for gates all the time.
        self._gates: dict[str, bool] = dict(config.feature_gates)
        self._ns_matches: dict[str, dict[str, tuple[kt.ClusterQueue, kc.Namespace, bool]]] = {}
        # ClusterQueues deleted while workloads still hold quota in them.
        self._terminating: set[str] = set()
        # Evicted (not preempted) since the last cycle: shown as "evicted" until
        # the scheduler has run again.
        self._fresh_evictions: set[str] = set()
        # Workloads whose status may have changed since take_touched(): what a
        # controller writes back to the store.
        self._touched: set[str] = set()
        self._timer_dirty: set[str] = set()  # workloads changed since the timer scan
        self._timed: set[str] = set()  # workloads that may have a timer
        # Their next deadlines, and a heap of (deadline, key) over them (an
        # entry counts while it is the key's deadline): the next timer costs
        # the workloads that changed, not every admitted one.
        self._deadlines: dict[str, datetime] = {}
        self._deadline_heap: list[tuple[datetime, str]] = []
        # resources_invalid's answer per workload, for the spec it was given
        # and the LimitRanges and RuntimeClasses of the time (_ctx_gen counts
        # their changes): a head that keeps waiting is nominated every cycle,
        # and its podSets only change with a new info.
        self._ctx_gen = 0
        self._invalid: dict[str, tuple[kt.WorkloadSpec, int, str | None]] = {}
        # Per namespace, LimitRange/RuntimeClass generation and pod template
        # (its msgpack bytes): one pod's requests and the resource check's
        # verdict (per podSet index, which its message names).
        self._per_pod_requests: dict[tuple[str, int, bytes], dict[str, int]] = {}
        self._encodings: dict[bytes, bytes] = {}
        self._template_checks: dict[tuple[str, int, bytes, int], str | None] = {}
        self._ctxs: dict[str, tuple[int, RequestContext]] = {}

    def _cond(
        self,
        wl: kt.Workload,
        ctype: str,
        status: str,
        reason: str,
        message: str,
        now: datetime,
        *,
        if_changed: bool = False,
    ) -> bool:
        """set_condition, the workload touched (to be written, its timers
        looked at again). ``if_changed``: for a caller that changes nothing
        else of the status, touched only if the condition changed."""
        changed = set_condition(wl, ctype, status, reason, message, now)
        if changed or not if_changed:
            key = _key(wl.metadata.namespace, wl.metadata.name)
            self._touched.add(key)
            self._timer_dirty.add(key)
        return changed

    def take_touched(self) -> set[str]:
        """The workloads whose status may have changed since the last call."""
        out, self._touched = self._touched, set()
        return out

    @property
    def has_pending_evictions(self) -> bool:
        return bool(self._pending_evictions)

    def gate(self, name: str) -> bool:
        """``config.gate(name)``: a feature gate's value."""
        on = self._gates.get(name)
        return self.config.gate(name) if on is None else on  # (unknown: its error)

    def next_timer(self) -> datetime | None:
        """When the core next needs time to pass (timeouts, backoff expiry)."""
        return self._next_timer()

    # ================================================================ objects
    def add(self, obj: Any) -> None:
        self._put(obj, keep_status=False)

    def apply(self, obj: Any) -> None:
        self._put(obj, keep_status=True)

    def _put(self, obj: Any, keep_status: bool) -> None:
        kind = obj.kind
        m = obj.metadata
        if kind in ("LimitRange", "RuntimeClass"):
            self._ctx_gen += 1
        if kind == "Namespace":
            self.namespaces[m.name] = obj
            self._retry_all()
        elif kind == "ResourceFlavor":
            old_rf = self.flavors.get(m.name)
            self.flavors[m.name] = obj
            self._refresh_cqs()
            if old_rf is not None and _flavor_scheduling_changed(old_rf, obj):
                # Kueue's ResourceFlavor controller: the queues stay active but
                # what the flavor admits changed, so the workloads it left
                # inadmissible in the queues that use it are tried again.
                roots: set[str] = set()
                for name, st in self.snap.cqs.items():
                    if any(m.name in rg.flavors for rg in st.resource_groups):
                        roots.update(self._root_cqs(name))
                self._retry(sorted(roots))
        elif kind == "ClusterQueue":
            old = self.cq_objs.get(m.name)
            if keep_status and old is not None:
                obj.status = old.status
            self.cq_objs[m.name] = obj
            self._terminating.discard(m.name)  # (made again: a new one)
            self._refresh_cq(m.name, old)
        elif kind == "Cohort":
            self.cohort_objs[m.name] = obj
            self.queues.settle_wakes()  # the trees change shape
            self.tree.set_cohort(
                m.name,
                obj.spec.parent_name,
                _quotas(obj.spec.resource_groups),
                _weight(obj.spec.fair_sharing),
            )
            self._refresh_cqs()
            self._retry_tree_of_cohort(m.name)
        elif kind == "LocalQueue":
            old_lq = self.lq_objs.get(_key(m.namespace, m.name))
            if keep_status and old_lq is not None:
                obj.status = old_lq.status
            self.lq_objs[_key(m.namespace, m.name)] = obj
            self._refresh_lq(obj, old_lq)
        elif kind == "WorkloadPriorityClass":
            old_wpc = self.wpcs.get(m.name)
            self.wpcs[m.name] = obj
            if old_wpc is None or old_wpc.value != obj.value:
                self._sync_priority_class(m.name, obj.value)
        elif kind == "PriorityClass":
            self.pcs[m.name] = obj
        elif kind == "LimitRange":
            self.limit_ranges.setdefault(m.namespace, {})[m.name] = obj
            self._resync_namespace(m.namespace)
        elif kind == "RuntimeClass":
            self.runtime_classes[m.name] = obj
            self._resync_namespace(None)
        elif kind == "AdmissionCheck":
            self.checks[m.name] = obj
            self._refresh_cqs()
        elif kind == "Workload":
            key = _key(m.namespace, m.name)
            old_wl = self.workloads.get(key)
            if keep_status and old_wl is not None:
                obj.status = old_wl.status
            self._put_workload(obj, old_wl)
        # Other kinds (Nodes, Pods, Jobs) are not the core's business.

    def delete(self, kind: str, namespace: str, name: str) -> bool:
        if kind in ("LimitRange", "RuntimeClass"):
            self._ctx_gen += 1
        if kind == "Workload":
            key = _key(namespace, name)
            wl = self.workloads.pop(key, None)
            if wl is None:
                return False
            self._forget_workload(key)
            if self.afs is not None:
                lq = _key(namespace, wl.spec.queue_name or "")
                self.afs.sub_penalty(lq, key)
                self._afs_reconcile(lq)
            return True
        if kind == "ClusterQueue":
            if name not in self.cq_objs or name in self._terminating:
                return False
            st = self.snap.cqs.get(name)
            if st is not None and st.workloads:
                # Kueue keeps a ClusterQueue whose workloads still hold quota
                # (its resource-in-use finalizer): terminating, inactive, its
                # usage still counted in the cohort, until the last one goes.
                self._terminating.add(name)
                self._refresh_cq(name, self.cq_objs[name], structural=False)
                for k in sorted(st.workloads):
                    self._sync(k)
                self._restamp(self._lqs_of(name))
                return True
            self._remove_cq(name)
            self._restamp(self._lqs_of(name))
            return True
        if kind == "LocalQueue":
            key = _key(namespace, name)
            if self.lq_objs.pop(key, None) is None:
                return False
            self.queues.delete_local_queue(key)
            self._refile_reserving(namespace, name)
            self._restamp({(namespace, name)})
            self._lq_weights.pop(key, None)
            if self.afs is not None:
                self.afs.delete(key)
                self._afs_due.pop(key, None)
            return True
        if kind == "Cohort":
            if self.cohort_objs.pop(name, None) is None:
                return False
            cqs = self._cqs_in_tree_of_cohort(name)
            self.queues.settle_wakes()
            self.tree.delete_cohort(name)
            self._refresh_cqs()
            self._retry(cqs)
            return True
        if kind == "ResourceFlavor":
            if self.flavors.pop(name, None) is None:
                return False
            self._refresh_cqs()
            return True
        table: dict[str, dict[str, Any]] = {
            "Namespace": self.namespaces,
            "WorkloadPriorityClass": self.wpcs,
            "PriorityClass": self.pcs,
            "RuntimeClass": self.runtime_classes,
            "AdmissionCheck": self.checks,
        }
        if kind == "LimitRange":
            found = self.limit_ranges.get(namespace, {}).pop(name, None) is not None
            if found:
                self._resync_namespace(namespace)
            return found
        t = table.get(kind)
        if t is None or t.pop(name, None) is None:
            return False
        if kind == "AdmissionCheck":
            self._refresh_cqs()
        return True

    # ================================================================ queues
    def _refresh_cqs(self) -> None:
        for name in list(self.cq_objs):
            self._refresh_cq(name, self.cq_objs[name], structural=False)

    def _refresh_cq(self, name: str, old: kt.ClusterQueue | None, structural: bool = True) -> None:
        obj = self.cq_objs[name]
        spec = obj.spec
        quotas = _quotas(spec.resource_groups)
        st = self.snap.cqs.get(name)
        created = st is None
        spec_changed = old is None or old.spec != spec or structural is False
        if st is None or (structural and spec_changed):
            self.queues.settle_wakes()
            node = self.tree.set_cluster_queue(
                name, spec.cohort_name, quotas, _weight(spec.fair_sharing)
            )
            if st is None:
                st = self.snap.cqs[name] = ClusterQueueState(name, node)
            st.generation += 1
        st.resource_groups = tuple(
            ResourceGroup(frozenset(rg.covered_resources), tuple(f.name for f in rg.flavors))
            for rg in spec.resource_groups or ()
        )
        st.preemption = spec.preemption
        st.fungibility = spec.flavor_fungibility
        rules_before = st.admission_checks
        st.admission_checks = self._check_rules(spec)
        was = (st.active, st.inactive_reason)
        st.active, st.inactive_reason, st.inactive_message = self._cq_activity(name, st)
        ev_ts = self.eviction_timestamp
        usage = self._lq_usage if self._afs_cq(name) else None
        q = self.queues.set_cluster_queue(
            name, spec.queueing_strategy, st.active, ev_ts, self.now, usage
        )
        q.strategy = spec.queueing_strategy
        stop = spec.stop_policy or "None"
        old_stop = (old.spec.stop_policy or "None") if old is not None else "None"
        if structural and old is not None and stop != old_stop:
            self._on_cq_stop_change(name, old_stop, stop)
        if structural and (
            old is None
            or stop != old_stop
            or old.spec.admission_checks_strategy != spec.admission_checks_strategy
        ):
            self._restamp(self._lqs_of(name))  # Kueue's workloadQueueHandler
        if structural or was[0] != st.active:
            self._retry(self._root_cqs(name))
        if not created and rules_before != st.admission_checks:
            # Kueue's workload controller sees every workload of the queue
            # again: checks no longer required go, new ones start Pending,
            # and a reservation whose checks are now all Ready is admitted.
            for key in sorted(st.workloads):
                self._sync(key)
        if created:
            # Kueue's Cache.AddClusterQueue: workloads that already hold quota
            # in this queue are counted in it from the start.
            for wkey in sorted(self.infos):
                held = self.infos[wkey]
                if held.cluster_queue == name and has_quota_reservation(held.obj):
                    self._sync(wkey, event=False)
        # The LocalQueue controller watches ClusterQueue creation and conditions.
        if created or was != (st.active, st.inactive_reason):
            self._afs_reconcile_cq(name)

    def _check_rules(self, spec: kt.ClusterQueueSpec) -> tuple[tuple[str, frozenset[str]], ...]:
        acs = spec.admission_checks_strategy
        if acs is None:
            return ()
        return tuple((r.name, frozenset(r.on_flavors or ())) for r in acs.admission_checks or ())

    def _cq_activity(self, name: str, st: ClusterQueueState) -> tuple[bool, str, str]:
        """Kueue's updateQueueStatus/inactiveReason: every reason found, in its
        order; the first names the condition, the message lists them all."""
        obj = self.cq_objs[name]
        if name in self._terminating:
            return False, "Terminating", "Can't admit new workloads; clusterQueue is terminating"
        reasons: list[str] = []
        messages: list[str] = []
        if (obj.spec.stop_policy or "None") != "None":
            reasons.append("Stopped")
            messages.append("is stopped")
        missing = [f for rg in st.resource_groups for f in rg.flavors if f not in self.flavors]
        if missing:
            reasons.append("FlavorNotFound")
            messages.append(f"references missing ResourceFlavor(s): {','.join(missing)}")
        absent = sorted(c for c, _ in st.admission_checks if c not in self.checks)
        if absent:
            reasons.append("AdmissionCheckNotFound")
            messages.append(f"references missing AdmissionCheck(s): {','.join(absent)}")
        inactive = sorted(
            c
            for c, _ in st.admission_checks
            if c in self.checks and not condition_true(self.checks[c], "Active")
        )
        if inactive:
            reasons.append("AdmissionCheckInactive")
            messages.append(f"references inactive AdmissionCheck(s): {','.join(inactive)}")
        # MultiKueue's constraints (Kueue's updateWithAdmissionChecks): one
        # MultiKueue check, on every flavor, and never beside a
        # ProvisioningRequest check.
        by_controller: dict[str, list[str]] = {_MULTIKUEUE: [], _PROVISIONING: []}
        per_flavor: list[str] = []
        all_flavors = frozenset(f for rg in st.resource_groups for f in rg.flavors)
        for c, on in sorted(st.admission_checks):
            ac = self.checks.get(c)
            ctrl = ac.spec.controller_name if ac is not None else ""
            if ctrl in by_controller:
                by_controller[ctrl].append(c)
                if ctrl == _MULTIKUEUE and on and on != all_flavors:
                    per_flavor.append(c)
        mk, prov = by_controller[_MULTIKUEUE], by_controller[_PROVISIONING]
        if len(mk) > 1:
            reasons.append("MultipleMultiKueueAdmissionChecks")
            messages.append(
                "Cannot use multiple MultiKueue AdmissionChecks on the same ClusterQueue, "
                f"found: {','.join(mk)}"
            )
        if per_flavor:
            reasons.append("MultiKueueAdmissionCheckAppliedPerFlavor")
            messages.append(
                f"Cannot specify MultiKueue AdmissionCheck per flavor, found: {','.join(per_flavor)}"
            )
        if mk and prov:
            reasons.append("MultiKueueWithProvisioningRequest")
            messages.append(
                "Cannot use both MultiKueue and ProvisioningRequest AdmissionChecks together, "
                f"found: {','.join(mk)}, {','.join(prov)}"
            )
        if reasons:
            return False, reasons[0], f"Can't admit new workloads: {', '.join(messages)}."
        if self.tree.in_cycle(st.node):
            return False, "CohortCycle", "Can't admit new workloads: cohort has a cycle."
        return True, "Ready", "Can admit new workloads"

    def _remove_cq(self, name: str) -> None:
        self.cq_objs.pop(name, None)
        self._terminating.discard(name)
        st = self.snap.cqs.get(name)
        root = self._root_cqs(name)
        self.queues.settle_wakes()
        self.tree.delete_cluster_queue(name)
        self.snap.cqs.pop(name, None)
        self.queues.delete_cluster_queue(name)
        if st is not None:
            for k in list(st.workloads):
                self.snap.holders.pop(k, None)
        self._retry(root)
        self._afs_reconcile_cq(name)

    def _refile_reserving(self, namespace: str, lq_name: str) -> None:
        for wkey, info in sorted(self.infos.items()):
            wl = info.obj
            if (
                wl.metadata.namespace == namespace
                and wl.spec.queue_name == lq_name
                and has_quota_reservation(wl)
            ):
                self._sync(wkey)

    def _queue_state_acts(self, key: str, wl: kt.Workload, cq_name: str) -> bool:
        """Kueue's reconcileOnLocalQueueActiveState and
        reconcileOnClusterQueueActiveState, whenever a reserving workload is
        seen: an admitted one is evicted from a queue stopped with
        HoldAndDrain; one that reserved quota but is not admitted yet (checks
        pending) gives the reservation back when its LocalQueue is missing or
        either queue is stopped. Returns whether it acted."""
        ns, lq_name = wl.metadata.namespace, wl.spec.queue_name or ""
        lq = self.lq_objs.get(_key(ns, lq_name))
        lq_stop = (lq.spec.stop_policy or "None") if lq is not None else "None"
        admitted = is_admitted(wl)
        evicted = condition_true(wl, "Evicted")
        if admitted:
            if lq_stop == "HoldAndDrain" and not evicted:
                self._evict(key, "LocalQueueStopped", "The LocalQueue is stopped")
                return True
        elif lq is None and lq_name:
            # (A workload naming no LocalQueue at all, as Kueue's scheduler
            # tests write their quota holders, keeps what it holds.)
            msg = f"LocalQueue {lq_name} is terminating or missing"
            return self._unset_reservation(key, wl, "Misconfigured", msg)
        elif lq_stop != "None":
            msg = f"LocalQueue {lq_name} is stopped"
            return self._unset_reservation(key, wl, "Suspended", msg)
        cq_ref = (lq.spec.cluster_queue or "") if lq is not None else cq_name
        cq = self.cq_objs.get(cq_ref)
        cq_stop = (cq.spec.stop_policy or "None") if cq is not None else "None"
        if admitted:
            if cq_stop == "HoldAndDrain" and not evicted:
                self._evict(key, "ClusterQueueStopped", "The ClusterQueue is stopped")
                return True
            return False
        if cq is None or cq_ref in self._terminating:
            msg = f"ClusterQueue {cq_ref} is terminating or missing"
            return self._unset_reservation(key, wl, "Misconfigured", msg)
        if cq_stop != "None":
            msg = f"ClusterQueue {cq_ref} is stopped"
            return self._unset_reservation(key, wl, "Suspended", msg)
        return False

    def _unset_reservation(self, key: str, wl: kt.Workload, reason: str, message: str) -> bool:
        """Kueue's UnsetQuotaReservationWithCondition: the reservation goes
        (no eviction) and the workload is filed again as pending. ``reason``
        is the granular one; without UnadmittedWorkloadsObservability Kueue
        writes Inadmissible instead."""
        if not self.gate("UnadmittedWorkloadsObservability"):
            reason = "Inadmissible"
        assert wl.status is not None
        wl.status.admission = None
        self._cond(wl, "QuotaReserved", "False", reason, message, self.now)
        self._sync(key)
        return True

    def _on_cq_stop_change(self, name: str, old: str, new: str) -> None:
        st = self.snap.cqs[name]
        if new in ("Hold", "HoldAndDrain"):
            for key in sorted(st.workloads):
                self._sync(key)  # _queue_state_acts decides
        elif new == "None":
            for key, wl in list(self.workloads.items()):
                info = self.infos.get(key)
                if info is None or info.cluster_queue != name:
                    continue
                c = find_condition(wl, "Evicted")
                if (
                    c is not None
                    and c.status == "True"
                    and c.reason == "ClusterQueueStopped"
                    and not has_quota_reservation(wl)
                ):
                    self._cond(
                        wl,
                        "Requeued",
                        "True",
                        "ClusterQueueRestarted",
                        "The ClusterQueue was restarted after being stopped",
                        self.now,
                    )
                    self._sync(key)

    def _refresh_lq(self, obj: kt.LocalQueue, old: kt.LocalQueue | None) -> None:
        m = obj.metadata
        key = _key(m.namespace, m.name)
        fs = obj.spec.fair_sharing
        self._lq_weights[key] = quantity_weight(fs.weight if fs is not None else None)
        stop = obj.spec.stop_policy or "None"
        old_stop = (old.spec.stop_policy or "None") if old is not None else "None"
        self.queues.set_local_queue(
            m.namespace, m.name, obj.spec.cluster_queue or "", stop != "None", self.now
        )
        if stop != "None" and old_stop != stop:
            self._refile_reserving(m.namespace, m.name)  # _queue_state_acts decides
        if stop == "None" and old_stop != "None":
            for wl in list(self.workloads.values()):
                c = find_condition(wl, "Evicted")
                if (
                    wl.metadata.namespace == m.namespace
                    and wl.spec.queue_name == m.name
                    and c is not None
                    and c.status == "True"
                    and c.reason == "LocalQueueStopped"
                    and not has_quota_reservation(wl)
                ):
                    self._cond(
                        wl,
                        "Requeued",
                        "True",
                        "LocalQueueRestarted",
                        "The LocalQueue was restarted after being stopped",
                        self.now,
                    )
        # (Re)file the workloads that name this queue.
        for wkey, wl in list(self.workloads.items()):
            if wl.metadata.namespace == m.namespace and wl.spec.queue_name == m.name:
                self._sync(wkey, event=False)
        self._afs_reconcile(key)

    def _root_cqs(self, cq_name: str) -> list[str]:
        """The ClusterQueues whose parked workloads a change in cq_name can wake."""
        st = self.snap.cqs.get(cq_name)
        if st is None or st.node.parent is None:
            return [cq_name]
        root = self.tree.root_of(st.node)
        if root is None:
            return []
        assert isinstance(root, Cohort)
        return [c.name for c in root.subtree_cqs()]

    def _cqs_in_tree_of_cohort(self, name: str) -> list[str]:
        c = self.tree.cohorts.get(name)
        if c is None:
            return []
        root = self.tree.root_of(c)
        if root is None:
            return []
        assert isinstance(root, Cohort)
        return [q.name for q in root.subtree_cqs()]

    def _tree_key(self, cq_name: str) -> int | None:
        """The cohort tree a ClusterQueue's wakes go to (the queue manager's
        name for it), None outside any cohort or in a cycle."""
        st = self.snap.cqs.get(cq_name)
        if st is None or st.node.parent is None:
            return None
        root = self.tree.root_of(st.node)
        return id(root) if root is not None else None

    def _retry_tree(self, cq_name: str) -> None:
        """Wake the parked workloads a change in cq_name can help: those of
        its whole cohort tree (see _root_cqs)."""
        st = self.snap.cqs.get(cq_name)
        if st is None or st.node.parent is None:
            self._retry([cq_name])
            return
        root = self.tree.root_of(st.node)
        if root is None:
            return
        assert isinstance(root, Cohort)
        self.queues.wake_tree(
            id(root),
            lambda: [c.name for c in root.subtree_cqs()],
            self.now,
            self.namespace_matches,
        )

    def _retry_tree_of_cohort(self, name: str) -> None:
        self._retry(self._cqs_in_tree_of_cohort(name))

    def _retry(self, cq_names: Iterable[str]) -> None:
        self.queues.retry_inadmissible(list(cq_names), self.now, self.namespace_matches)

    def _retry_all(self) -> None:
        self._retry(list(self.queues.cqs))

    def namespace_matches(self, cq_name: str, namespace: str, keep: bool = True) -> bool:
        """``keep``: remember the answer (not for a look at a workload the
        scheduler may never try: the backlog's memory stays its own)."""
        cq = self.cq_objs.get(cq_name)
        ns = self.namespaces.get(namespace)
        if cq is None or ns is None:
            return False
        if not keep:
            known_ns = self._ns_matches.get(cq_name, {}).get(namespace)
            if known_ns is not None and known_ns[0] is cq and known_ns[1] is ns:
                return known_ns[2]
            return selector_matches(cq.spec.namespace_selector, ns.metadata.labels or {})
        # Kept while both objects are the ones it was worked out for (an
        # update replaces the object): each workload filed or nominated asks.
        by_ns = self._ns_matches.get(cq_name)
        if by_ns is None:
            by_ns = self._ns_matches[cq_name] = {}
        known = by_ns.get(namespace)
        if known is not None and known[0] is cq and known[1] is ns:
            return known[2]
        matches = selector_matches(cq.spec.namespace_selector, ns.metadata.labels or {})
        if len(by_ns) >= _NS_MATCHES:
            by_ns.clear()
        by_ns[namespace] = (cq, ns, matches)
        return matches

    # ================================================================ workloads
    def _ctx(self, namespace: str) -> RequestContext:
        # Kept per namespace until a LimitRange or RuntimeClass changes: every
        # workload filed or nominated needs one, and a kept one also keeps its
        # derived views (the LimitRange summary).
        known = self._ctxs.get(namespace)
        if known is not None and known[0] == self._ctx_gen:
            return known[1]
        lrs = [
            self.limit_ranges[namespace][n] for n in sorted(self.limit_ranges.get(namespace, {}))
        ]
        ctx = RequestContext.from_config(
            self.config.resources, limit_ranges=lrs, runtime_classes=self.runtime_classes
        )
        self._ctxs[namespace] = (self._ctx_gen, ctx)
        return ctx

    def _sync_priority_class(self, name: str, value: int) -> None:
        """Kueue's WorkloadPriorityClass controller: a class created or whose
        value changed sets spec.priority of every Workload that refers to it,
        pending or admitted (a lower priority can make it a preemption
        victim, a higher one lets it preempt)."""
        for key, wl in list(self.workloads.items()):
            ref = wl.spec.priority_class_ref
            if (
                ref is None
                or ref.kind != "WorkloadPriorityClass"
                or ref.group != kt.GROUP
                or ref.name != name
                or wl.spec.priority == value
            ):
                continue
            wl.spec = _replace(wl.spec, priority=value)  # (see _deactivate)
            self._sync(key)

    def _priority(self, wl: kt.Workload) -> int:
        if wl.spec.priority is not None:
            p = wl.spec.priority
        else:
            p = 0
            ref = wl.spec.priority_class_ref
            if ref is not None:
                if ref.kind == "WorkloadPriorityClass" and ref.name in self.wpcs:
                    p = self.wpcs[ref.name].value
                elif ref.kind == "PriorityClass" and ref.name in self.pcs:
                    p = self.pcs[ref.name].value
        if self.gate("PriorityBoost"):
            boost = (wl.metadata.annotations or {}).get("kueue.x-k8s.io/priority-boost")
            if boost:
                p += parse_int32(boost) or 0  # (unparsable: no boost, as Kueue)
        return p

    def _build_info(self, key: str, wl: kt.Workload) -> WorkloadInfo:
        # The requests computed from the spec are kept on the info while its
        # spec object, reclaimable pods and the LimitRanges/RuntimeClasses stay
        # (the store keeps the spec object across status writes, and every
        # status write files the workload again); an admitted info carries
        # them along for the workload's next time in a queue.
        prev = self.infos.get(key)
        known = prev.spec_cache if prev is not None else None
        if has_quota_reservation(wl) and wl.status is not None and wl.status.admission is not None:
            podsets = podsets_from_admission(wl, self._reclaimable(wl))
            return self._admitted_info(key, wl, podsets, known)
        rec = self._reclaimable(wl)
        if (
            known is not None
            and known.spec is wl.spec
            and known.gen == self._ctx_gen
            and known.reclaimable == rec
        ):
            # Shared: neither the list nor its PodSetResources change once made.
            podsets = known.podsets
        else:
            ns = wl.metadata.namespace
            pod_sets = wl.spec.pod_sets
            encs: list[bytes] = []
            per_pod: list[dict[str, int]] = []
            for ps in pod_sets:
                enc = self._encode_template(ps.template)
                encs.append(enc)
                per_pod.append(self._per_pod(ns, ps, enc))
            podsets = podsets_from_spec(wl, self._ctx(ns), rec, per_pod=per_pod)
            kept = encs[0] if len(encs) == 1 else tuple(encs)  # (one podSet: no tuple)
            known = SpecPodSets(wl.spec, self._ctx_gen, rec, podsets, kept)
        info = WorkloadInfo(wl, podsets, self._priority(wl), None, key)
        info.spec_cache = known
        return info

    def _reclaimable(self, wl: kt.Workload) -> Mapping[str, int]:
        """The reclaimable pods that count: none with the ReclaimablePods gate
        off (Kueue's podSetsCountsAfterReclaim)."""
        return reclaimable_counts(wl) if self._reclaim_gate else NO_RECLAIMABLE

    def _admitted_info(
        self, key: str, wl: kt.Workload, podsets: list[PodSetResources], known: SpecPodSets | None
    ) -> WorkloadInfo:
        assert wl.status is not None and wl.status.admission is not None
        info = WorkloadInfo(wl, podsets, self._priority(wl), wl.status.admission.cluster_queue, key)
        info.spec_cache = known
        return info

    def _encode_template(self, template: kt.PodTemplateSpec) -> bytes:
        """The template's encoding, the key of what is kept per distinct
        template (requests, checks): one bytes object per distinct encoding,
        shared by the workloads that keep it."""
        enc = msgspec.msgpack.encode(template, enc_hook=enc_hook)
        shared = self._encodings.get(enc)
        if shared is None:
            if len(self._encodings) >= _TEMPLATE_CACHE:
                self._encodings.clear()
            self._encodings[enc] = shared = enc
        return shared

    def _per_pod(self, namespace: str, ps: kt.PodSet, enc: bytes) -> dict[str, int]:
        """One pod's requests, shared by the podSets of one namespace with the
        same template (a job's copies, a trace's repeated shapes)."""
        key = (namespace, self._ctx_gen, enc)
        cache = self._per_pod_requests
        v = cache.get(key)
        if v is None:
            if len(cache) >= _TEMPLATE_CACHE:
                cache.clear()
            v = cache[key] = podset_requests(ps, self._ctx(namespace))
        return v

    def _put_workload(self, wl: kt.Workload, old: kt.Workload | None) -> None:
        key = _key(wl.metadata.namespace, wl.metadata.name)
        self.workloads[key] = wl
        if not wl.spec.active:
            # Kueue's workload controller, whenever it sees an inactive
            # workload (one created inactive too): evicted once, and its
            # requeue state (backoff, retry count) dropped.
            if not condition_true(wl, "Evicted"):
                # A DeactivationTarget condition names the cause (Kueue's
                # evict with an underlying cause) and goes with the eviction.
                reason, message = "Deactivated", "The workload is deactivated"
                target = find_condition(wl, "DeactivationTarget")
                if target is not None and wl.status is not None:
                    reason = f"Deactivated{'DueTo' + target.reason if target.reason else ''}"
                    message = f"{message} due to {target.message}"
                    wl.status.conditions = [
                        c for c in wl.status.conditions or () if c.type != "DeactivationTarget"
                    ]
                    self._touched.add(key)
                if has_quota_reservation(wl):
                    self._evict(key, reason, message)
                else:
                    self._cond(wl, "Evicted", "True", reason, message, self.now)
                    self.evictions.append((key, reason))
            if wl.status is not None and wl.status.requeue_state is not None:
                wl.status.requeue_state = None
                self._touched.add(key)
        if (
            old is not None
            and not old.spec.active
            and wl.spec.active
            and (find_condition(wl, "Requeued") is not None or find_condition(wl, "Evicted"))
        ):
            self._cond(
                wl, "Requeued", "True", "Reactivated", "The workload was reactivated", self.now
            )
        # A workload as read is not to be written back: what this filing
        # changes of its status touches it by itself (conditions, requeue
        # state, checks), so a write is attempted only for those.
        self._sync(key, touch=False)

    def _sync(self, key: str, event: bool = True, touch: bool = True) -> None:
        """Put a workload where its status says it belongs: the quota cache, a
        queue, or nowhere. ``event``: the change is an update Kueue's workload
        controller sees, which admission fair sharing follows. ``touch``: the
        caller may have changed the status without touching it (a filing
        after the core's own change); not for a workload as read."""
        wl = self.workloads.get(key)
        if wl is None:
            return
        if touch:
            self._touched.add(key)
        self._timer_dirty.add(key)
        prev = self.infos.get(key)
        if self.afs is None or not event:
            self._file(key, wl, prev)
            return
        was_admitted = is_admitted(prev.obj if prev is not None else wl)
        self._file(key, wl, prev)
        self._afs_workload_event(key, wl, prev, was_admitted)

    def _file(self, key: str, wl: kt.Workload, prev: WorkloadInfo | None) -> None:
        if is_finished(wl):
            self._forget_workload(key)
            return
        self._admission_gate_acts(wl)
        self._retry_checks_delay(key, wl)
        info = self._build_info(key, wl)
        if prev is not None:
            info.last_assignment = prev.last_assignment
            info.keep_scheduling_hash(prev)
        if has_quota_reservation(wl) and info.cluster_queue is not None:
            # As Kueue's workload reconcile: checks and the Admitted condition
            # first, then a check's verdict, then what the queues' state asks
            # of a reserving workload.
            self._sync_checks(key, wl, info.cluster_queue)
            self._sync_admitted(wl, info.cluster_queue)
            if self._check_based_eviction(key, wl):
                return  # the eviction filed it again
            if self._queue_state_acts(key, wl, info.cluster_queue):
                return  # evicted or its reservation dropped: filed again
            # Evicted while still holding quota: an eviction in progress, also
            # when it was read back from a store (a restarted control plane).
            reason = evicted_reason(wl)
            if reason is not None and key not in self._pending_evictions:
                self._pending_evictions[key] = reason
            self.queues.delete(key)
            held = self.snap.holders.get(key)
            if held is not None:
                self.snap.remove_workload(self.infos[key])
            self.infos[key] = info
            if info.cluster_queue in self.snap.cqs:
                self.snap.add_workload(info)
                # A priority or reclaimable-pods change of a quota holder can
                # open room for parked workloads (preemption, released pods).
                if prev is not None and (
                    prev.priority != info.priority or prev.usage() != info.usage()
                ):
                    self._retry_tree(info.cluster_queue)
            return
        if key in self.snap.holders and prev is not None:
            self._release(prev)
        self.infos[key] = info
        if self._admissible(wl):
            self.queues.add_or_update(info, self.now)
        else:
            self.queues.delete(key)
        self._stamp_unreserved(wl, info)

    def _stamp_unreserved(self, wl: kt.Workload, info: WorkloadInfo | None) -> None:
        """Kueue's syncQuotaReservedFalseCondition: the workload controller's
        reason for a workload that holds no quota, stamped whenever it sees
        the workload (and each workload of a LocalQueue or ClusterQueue that
        is created, deleted or stopped): what blocks its queue, its
        deactivation, a misconfiguration, an admission gate; a reason the
        scheduler set is kept until the next attempt; any other reason (one
        whose cause went away, or an eviction's Pending) becomes
        PendingEvaluation. A workload with no condition yet gets none
        (UnadmittedWorkloadsExplicitStatus off)."""
        if has_quota_reservation(wl) or is_finished(wl):
            return
        self._stamp_reason(wl, info)
        # SyncAdmittedCondition: once QuotaReserved is there, Admitted says why not.
        if self.gate("UnadmittedWorkloadsObservability") and (
            find_condition(wl, "QuotaReserved") is not None
            or find_condition(wl, "Admitted") is not None
        ):
            self._cond(
                wl,
                "Admitted",
                "False",
                "NoReservation",
                "The workload has no reservation",
                self.now,
                if_changed=True,
            )

    def _stamp_reason(self, wl: kt.Workload, info: WorkloadInfo | None) -> None:
        blocker = self._queue_blocker(wl)
        cond = find_condition(wl, "QuotaReserved")
        if not self.gate("UnadmittedWorkloadsObservability"):
            if blocker is not None:
                self._qr_false(wl, "Inadmissible", blocker[1])
            return
        if not wl.spec.active:
            self._qr_false(wl, "Deactivated", ur.DEACTIVATED)
            return
        if cond is not None and cond.status == "False" and cond.reason == "OnHold":
            return
        if blocker is not None:
            self._qr_false(wl, *blocker)
            return
        if info is not None and info.cluster_queue is not None:
            bad = self.admissibility_error(info, info.cluster_queue, keep=False)
            if bad is not None:
                self._qr_false(wl, "Misconfigured", bad[0])
                return
        gated_by = _gated_by(wl)
        if gated_by:
            self._qr_false(wl, "AdmissionGated", ur.gated(gated_by))
            return
        explicit = self.gate("UnadmittedWorkloadsExplicitStatus")
        if self.gate("SchedulingEquivalenceHashing") and (
            explicit if cond is None else cond.reason in ur.RECHECKED_REASONS
        ):
            key = _key(wl.metadata.namespace, wl.metadata.name)
            no_fit = self.queues.no_fit_reason(key)
            if no_fit is not None:
                self._qr_false(wl, no_fit, ur.BYPASSED)
                return
        if cond is None:
            if explicit:
                self._qr_false(wl, "PendingEvaluation", ur.PENDING_EVALUATION)
            return
        if cond.reason in ur.SCHEDULER_REASONS:
            return  # the scheduler's feedback stays until its next attempt
        self._qr_false(wl, "PendingEvaluation", ur.PENDING_EVALUATION)

    def _qr_false(self, wl: kt.Workload, reason: str, message: str) -> None:
        self._cond(wl, "QuotaReserved", "False", reason, message, self.now, if_changed=True)

    def _queue_blocker(self, wl: kt.Workload) -> tuple[str, str] | None:
        """Kueue's getQueueBlocker: (reason, message) when the workload's
        LocalQueue or ClusterQueue is missing or inactive."""
        lq_name = wl.spec.queue_name or ""
        lq = self.lq_objs.get(_key(wl.metadata.namespace, lq_name))
        if lq is None:
            return "Misconfigured", ur.lq_missing(lq_name)
        if (lq.spec.stop_policy or "None") != "None":
            return "Suspended", ur.lq_inactive(lq_name)
        cq_name = lq.spec.cluster_queue or ""
        st = self.snap.cqs.get(cq_name)
        if cq_name not in self.cq_objs or st is None:
            return "Misconfigured", ur.cq_missing(cq_name)
        if not st.status_active():
            return "Suspended", ur.cq_inactive(cq_name)
        return None

    def admissibility_error(
        self, info: WorkloadInfo, cq_name: str, keep: bool = True
    ) -> tuple[str, str] | None:
        """Kueue's ValidateAdmissibility against the workload's ClusterQueue:
        (message, requeue reason) when it can never be admitted there as it
        is (namespace missing or not selected, resources invalid). ``keep``:
        remember the answers (see namespace_matches)."""
        if info.namespace not in self.namespaces:
            return f'workload namespace "{info.namespace}" does not exist', ""
        if not self.namespace_matches(cq_name, info.namespace, keep):
            return "workload namespace doesn't match ClusterQueue selector", NAMESPACE_MISMATCH
        bad = self.resources_invalid(info, keep)
        if bad is not None:
            return bad, ""
        return None

    def _restamp(self, lqs: set[tuple[str, str]]) -> None:
        """Kueue's workloadQueueHandler: LocalQueues (namespace, name) created,
        deleted or stopped, or those of such a ClusterQueue: their workloads
        are seen again."""
        for key in sorted(self.workloads):
            wl = self.workloads[key]
            if (wl.metadata.namespace, wl.spec.queue_name or "") in lqs:
                self._stamp_unreserved(wl, self.infos.get(key))

    def _lqs_of(self, cq_name: str) -> set[tuple[str, str]]:
        return {
            (lq.metadata.namespace, lq.metadata.name)
            for lq in self.lq_objs.values()
            if lq.spec.cluster_queue == cq_name
        }

    def _admission_gate_acts(self, wl: kt.Workload) -> None:
        """Kueue's mayUpdateConditionForAdmissionGatedBy, first sight of an
        admission-gated-by annotation: a reservation the workload holds is
        given back (QuotaReserved=False AdmissionGated), admitted or not."""
        if not self.gate("AdmissionGatedBy"):
            return
        by = _gated_by(wl)
        if not by:
            return
        qr = find_condition(wl, "QuotaReserved")
        if qr is not None and qr.reason == "AdmissionGated":
            return
        if wl.status is not None:
            wl.status.admission = None
        self._qr_false(wl, "AdmissionGated", ur.gated(by))
        if is_admitted(wl):
            self._no_reservation(wl)

    def _retry_checks_delay(self, key: str, wl: kt.Workload) -> None:
        """Kueue's NeedsRequeueAtUpdate: a check in Retry with
        requeueAfterSeconds holds the workload back until the latest of their
        lastTransitionTime + requeueAfterSeconds (never moving requeueAt
        earlier)."""
        st = wl.status
        if st is None or not st.admission_checks:
            return
        at: datetime | None = None
        for c in st.admission_checks:
            if (
                c.state == "Retry"
                and c.requeue_after_seconds is not None
                and c.last_transition_time is not None
            ):
                t = c.last_transition_time + timedelta(seconds=c.requeue_after_seconds)
                if at is None or t > at:
                    at = t
        if at is None or at <= self.now:
            return
        rs = st.requeue_state
        if rs is not None and rs.requeue_at is not None and rs.requeue_at >= at:
            return
        if rs is None:
            rs = st.requeue_state = kt.RequeueState()
        rs.requeue_at = at
        self._touched.add(key)
        self._timer_dirty.add(key)

    def _check_based_eviction(self, key: str, wl: kt.Workload) -> bool:
        """The workload controller's reaction to a check's verdict: Rejected
        deactivates the workload, Retry evicts it to be queued again."""
        if condition_true(wl, "Evicted") or wl.status is None or not wl.spec.active:
            return False
        checks = wl.status.admission_checks or ()
        rejected = [c for c in checks if c.state == "Rejected"]
        if rejected:
            _deactivate(wl)
            msg = _checks_message(rejected, "Rejected")
            self._evict(
                key, "DeactivatedDueToAdmissionCheck", f"The workload is deactivated due to {msg}"
            )
            return True
        retry = [c for c in checks if c.state == "Retry"]
        if retry:
            self._evict(key, "AdmissionCheck", f"Evicted due to {_checks_message(retry, 'Retry')}")
            return True
        return False

    def _sync_checks(self, key: str, wl: kt.Workload, cq_name: str) -> None:
        """Kueue's reconcileSyncAdmissionChecks for a reserving workload: the
        check states are exactly the checks its ClusterQueue requires for its
        flavors (a new one Pending), in name order."""
        checks = self._required_checks(wl, cq_name)
        if checks is None:
            return
        assert wl.status is not None
        required = set(checks)
        current = list(wl.status.admission_checks or ())
        names = {s.name for s in current}
        if names == required:
            return
        kept = [s for s in current if s.name in required]
        kept += [
            kt.AdmissionCheckState(name=n, state="Pending", last_transition_time=self.now)
            for n in required - names
        ]
        wl.status.admission_checks = sorted(kept, key=lambda s: s.name) or None
        self._touched.add(key)

    def _required_checks(self, wl: kt.Workload, cq_name: str) -> Iterable[str] | None:
        """The admission checks the ClusterQueue requires for the flavors the
        workload holds (None: no such queue, or no admission)."""
        st = self.snap.cqs.get(cq_name)
        if st is None or wl.status is None or wl.status.admission is None:
            return None
        flavors = {
            f for p in wl.status.admission.pod_set_assignments for f in (p.flavors or {}).values()
        }
        return st.checks_for(flavors)

    def _sync_admitted(self, wl: kt.Workload, cq_name: str) -> None:
        """The workload controller's SyncAdmittedCondition: a reservation with
        every required admission check Ready is an admission."""
        if is_admitted(wl) or condition_true(wl, "Evicted"):
            return
        checks = self._required_checks(wl, cq_name)
        if checks is None:
            return
        assert wl.status is not None
        states = {s.name: s.state for s in wl.status.admission_checks or ()}
        if all(states.get(n) == "Ready" for n in checks):
            self._cond(wl, "Admitted", "True", "Admitted", "The workload is admitted", self.now)
        else:
            self._checks_not_ready(wl)

    def _checks_not_ready(self, wl: kt.Workload) -> None:
        """SyncAdmittedCondition for a reservation whose checks are not all
        Ready (with UnadmittedWorkloadsObservability; without it Kueue leaves
        the condition as it is)."""
        if self.gate("UnadmittedWorkloadsObservability"):
            self._cond(
                wl,
                "Admitted",
                "False",
                "UnsatisfiedAdmissionChecks",
                "The workload has not all checks ready",
                self.now,
                if_changed=True,
            )

    def _admissible(self, wl: kt.Workload) -> bool:
        if not wl.spec.active or is_finished(wl) or has_quota_reservation(wl):
            return False
        if _gated_by(wl):
            return False
        # IsOnHold: an integration released the reservation on purpose (a
        # StatefulSet scaled to 0); the workload waits until it says otherwise.
        qr = find_condition(wl, "QuotaReserved")
        if qr is not None and qr.status == "False" and qr.reason == "OnHold":
            return False
        return not condition_true(wl, "WaitingForReplacementPods")

    def _release(self, info: WorkloadInfo) -> None:
        st = self.snap.holders.get(info.key)
        if st is None:
            return
        self.snap.remove_workload(info)
        st.generation += 1
        self._retry_tree(st.name)
        if st.name in self._terminating and not st.workloads:
            self._remove_cq(st.name)  # its last holder gone: deleted for real

    def _forget_workload(self, key: str) -> None:
        self._timer_dirty.add(key)  # its timers go with it
        info = self.infos.pop(key, None)
        self.queues.delete(key)
        self._pending_evictions.pop(key, None)
        self._invalid.pop(key, None)
        if info is not None and key in self.snap.holders:
            self._release(info)

    def finish(self, key: str) -> None:
        wl = self.workloads.get(key)
        if wl is None:
            raise KeyError(f"no workload {key}")
        self._cond(wl, "Finished", "True", "Succeeded", "Job finished successfully", self.now)
        self._sync(key)

    def resources_invalid(self, info: WorkloadInfo, keep: bool = True) -> str | None:
        """Why the workload's requests are invalid, or None; ``keep`` as for
        namespace_matches."""
        known = self._invalid.get(info.key)
        if known is not None and known[0] is info.obj.spec and known[1] == self._ctx_gen:
            return known[2]
        ctx = self._ctx(info.namespace)
        found: str | None = None
        cache = self._template_checks
        spec = info.obj.spec
        kept = info.spec_cache
        encs: bytes | tuple[bytes, ...] | None = None
        if kept is not None and kept.spec is spec:
            encs = kept.encodings  # (computed as the workload was filed)
        for i, ps in enumerate(spec.pod_sets):
            if encs is None:
                enc = self._encode_template(ps.template)
            else:
                enc = encs if isinstance(encs, bytes) else encs[i]
            key = (info.namespace, self._ctx_gen, enc, i)
            if key in cache:
                msg = cache[key]
            else:
                if len(cache) >= _TEMPLATE_CACHE:
                    cache.clear()
                msg = cache[key] = validate_podset_resources(ps, ctx, index=i)
            if msg is not None:
                found = msg
                break
        if keep:
            self._invalid[info.key] = (info.obj.spec, self._ctx_gen, found)
        return found

    # ================================================================ decisions
    def admit(self, info: WorkloadInfo, cq: ClusterQueueState, a: Assignment) -> None:
        wl = info.obj
        self._touched.add(info.key)
        if wl.status is None:
            wl.status = kt.WorkloadStatus()
        psas = []
        # What the workload now holds: podsets_from_admission of the status
        # written here, without parsing back the quantities just made.
        held = []
        rec = self._reclaimable(wl)
        spec_counts = {ps.name: ps.count for ps in wl.spec.pod_sets}
        for ps in a.podsets:
            names = sorted(ps.flavors)
            flavors = {r: ps.flavors[r].name for r in names}
            values = {r: saturate_int64(ps.requests.get(r, 0)) for r in names}
            usage = {r: resource_quantity(r, v) for r, v in values.items()}
            psas.append(
                kt.PodSetAssignment(
                    name=ps.name, flavors=flavors, resource_usage=usage, count=ps.count
                )
            )
            res = PodSetResources(ps.name, ps.count, values, dict(flavors))
            held.append(held_part(res, spec_counts.get(ps.name, 0), rec.get(ps.name, 0)))
        wl.status.admission = kt.Admission(cluster_queue=cq.name, pod_set_assignments=psas)
        self._cond(
            wl,
            "QuotaReserved",
            "True",
            "QuotaReserved",
            f"Quota reserved in ClusterQueue {cq.name}",
            self.now,
        )
        for ctype in ("Evicted", "Preempted", "BlockedOnPreemptionGates"):
            c = find_condition(wl, ctype)
            if c is not None and c.status == "True":
                self._cond(
                    wl, ctype, "False", "QuotaReserved", "Previously: " + c.message, self.now
                )
        used = {f.name for ps in a.podsets for f in ps.flavors.values()}
        checks = cq.checks_for(used)
        states = {s.name: s for s in (wl.status.admission_checks or ())}
        for name in checks:
            if name not in states:
                states[name] = kt.AdmissionCheckState(
                    name=name, state="Pending", last_transition_time=self.now
                )
        wl.status.admission_checks = [states[n] for n in sorted(states)] or None
        if all(states[n].state == "Ready" for n in checks):
            self._cond(wl, "Admitted", "True", "Admitted", "The workload is admitted", self.now)
        else:
            self._checks_not_ready(wl)
        info.last_assignment = None
        self.queues.delete(info.key)
        # The cycle held the assignment's usage in the tree for the rest of the
        # cycle; the workload now holds it for real.
        prev = self.infos.get(info.key)
        new = self._admitted_info(info.key, wl, held, prev.spec_cache if prev is not None else None)
        self.infos[info.key] = new
        self.snap.add_workload(new)
        if self.afs is not None:
            self._afs_assumed(info, cq, wl)

    def replace_slice(self, old_key: str, new: WorkloadInfo) -> None:
        """Kueue's replaceWorkloadSlice: once a new workload slice is admitted,
        the slice it replaces is finished and gives its quota back."""
        wl = self.workloads.get(old_key)
        if wl is None or is_finished(wl):
            return
        job_uid = (new.obj.metadata.labels or {}).get("kueue.x-k8s.io/job-uid", "")
        msg = (
            f"Replaced to accommodate a workload (UID: {new.uid}, JobUID: {job_uid}) "
            "due to workload slice aggregation"
        )
        self._cond(wl, "Finished", "True", "WorkloadSliceReplaced", msg, self.now)
        self._sync(old_key)

    def issue_preemptions(
        self,
        preemptor: WorkloadInfo,
        cq: ClusterQueueState,
        targets: list[Target],
        result: CycleResult,
    ) -> int:
        n = 0
        for t in targets:
            wl = t.info.obj
            n += 1
            if condition_true(wl, "Evicted"):
                continue
            msg = preemption_message(preemptor, t.reason, cq, t.cq)
            self._cond(wl, "Preempted", "True", t.reason, msg, self.now)
            self._evict(t.info.key, "Preempted", msg)
            p = Preemption(t.info.key, t.reason, preemptor.key, msg)
            self.preemptions.append(p)
            result.preempted.append(p)
        return n

    def _evict(self, key: str, reason: str, message: str) -> None:
        wl = self.workloads[key]
        self._cond(wl, "Evicted", "True", reason, message, self.now)
        self.evictions.append((key, reason))
        # Admission checks go back to Pending on eviction.
        if wl.status is not None and wl.status.admission_checks:
            for s in wl.status.admission_checks:
                s.state = "Pending"
        # Kueue's prepareForEviction: the preemption-gate signal is withdrawn
        # and every gate closes again.
        if condition_true(wl, "BlockedOnPreemptionGates"):
            self._cond(wl, "BlockedOnPreemptionGates", "False", reason, message, self.now)
        assert wl.status is not None
        for g in wl.status.preemption_gates or ():
            g.position, g.last_transition_time = "Closed", self.now
        if reason == "FlavorMigration":
            self._pending_evictions[key] = reason  # its job stops as a preempted one's does
            return
        if reason == "Preempted":
            self._pending_evictions[key] = reason
            if self.afs is not None:
                self._afs_reconcile(_key(wl.metadata.namespace, wl.spec.queue_name or ""))
        else:
            self._fresh_evictions.add(key)
            self._complete_eviction(key, reason)

    def evict_for_migration(self, key: str, to: WorkloadInfo) -> None:
        """Kueue's issueMigration: a ConcurrentAdmission variant on a less
        preferred flavor is evicted for its sibling ``to``."""
        self._evict(
            key,
            "FlavorMigration",
            f"Evicted to accommodate a workload (UID: {to.obj.metadata.uid}) due to migration "
            "to more favorable resource flavor",
        )

    def complete_evictions(self) -> None:
        for key, reason in list(self._pending_evictions.items()):
            self._complete_eviction(key, reason)

    def _complete_eviction(self, key: str, reason: str) -> None:
        """The job stopped: the workload releases its quota and is requeued."""
        self._pending_evictions.pop(key, None)
        wl = self.workloads.get(key)
        if wl is None:
            return
        c = find_condition(wl, "Evicted")
        msg = c.message if c is not None else ""
        if wl.status is not None:
            wl.status.admission = None
        self._cond(wl, "QuotaReserved", "False", "Pending", msg, self.now)
        self._no_reservation(wl)
        if reason in ("Preempted", "NodeFailures"):
            self._cond(wl, "Requeued", "True", reason, msg, self.now)
        else:
            self._cond(wl, "Requeued", "False", reason, msg, self.now)
            rs = wl.status.requeue_state if wl.status is not None else None
            if reason == "AdmissionCheck" and (rs is None or rs.requeue_at is None):
                # No backoff to wait for: the workload controller requeues it at once.
                self._cond(
                    wl,
                    "Requeued",
                    "True",
                    "BackoffFinished",
                    "The workload backoff was finished",
                    self.now,
                )
        self._sync(key)

    def _no_reservation(self, wl: kt.Workload) -> None:
        """The Admitted condition of a workload that lost its reservation
        (SyncAdmittedCondition)."""
        adm = find_condition(wl, "Admitted")
        if adm is None:
            return
        if adm.status == "True" and adm.last_transition_time is not None and wl.status:
            # Kueue accumulates whole admitted seconds (truncated) for
            # maximumExecutionTimeSeconds each time Admitted turns False.
            ran = int((self.now - adm.last_transition_time).total_seconds())
            past = wl.status.accumulated_past_execution_time_seconds or 0
            wl.status.accumulated_past_execution_time_seconds = past + ran
        self._cond(
            wl, "Admitted", "False", "NoReservation", "The workload has no reservation", self.now
        )

    def requeue(
        self,
        info: WorkloadInfo,
        reason: str,
        qr_reason: str,
        message: str,
        skip_status: bool,
        *,
        blocked_on_gates: bool = False,
    ) -> None:
        """Kueue's requeueAndUpdate; ``blocked_on_gates``: the workload needed a
        preemption a closed preemption gate held back."""
        key = info.key
        wl = self.workloads.get(key)
        if wl is None or not self._admissible(wl):
            q = self.queues.cluster_queue_of(key)
            if q is not None:
                q.inflight.pop(key, None)
            return
        la = info.last_assignment
        pending = isinstance(la, Assignment) and la.pending_flavors()
        self.queues.requeue(info, reason, self.now, pending, qr_reason)
        if skip_status:
            return
        # Touched only when a condition changed, as Kueue patches the status
        # only then: a head left waiting with the same reason, cycle after
        # cycle, is not written again.
        if (
            self._cond(
                wl,
                "QuotaReserved",
                "False",
                qr_reason or "Pending",
                message,
                self.now,
                if_changed=True,
            )
            and self.afs is not None
        ):
            self._afs_reconcile(_key(info.namespace, info.queue_name))
        if blocked_on_gates:
            self._cond(
                wl,
                "BlockedOnPreemptionGates",
                "True",
                "PreemptionGated",
                message,
                self.now,
                if_changed=True,
            )

    def blocked_by_pods_ready(self) -> bool:
        w = self.config.wait_for_pods_ready
        if w is None or not w.block_admission:
            return False
        for info in self._timed_infos():  # every admitted workload, with waitForPodsReady
            wl = info.obj
            if is_admitted(wl) and not condition_true(wl, "PodsReady"):
                return True
        return False

    # ================================================================ admission fair sharing
    # Kueue keeps the LocalQueues' usage in a ledger shared by the scheduler
    # (entry penalties), the workload controller (settling them on admission)
    # and the LocalQueue controller (a sampling tick every usageSamplingInterval).
    # kuota runs those controllers' reactions synchronously, at the virtual time
    # of the event that triggers them.
    def _afs_cq(self, name: str) -> bool:
        """The ClusterQueue orders and charges by LocalQueue usage (ResourceWeights)."""
        cq = self.cq_objs.get(name)
        scope = cq.spec.admission_scope if cq is not None else None
        return (
            self.afs is not None
            and scope is not None
            and scope.admission_mode == "UsageBasedAdmissionFairSharing"
        )

    def _lq_usage(self, lq: str) -> float:
        assert self.afs is not None
        return self.afs.usage(lq, self._lq_weights.get(lq, 1.0))

    def afs_usage_snapshot(self) -> Callable[[WorkloadInfo], float | None] | None:
        """Each quota holder's LocalQueue usage for preemption ordering, as the
        cycle's snapshot takes it (snapshotClusterQueue): None outside
        usage-based ClusterQueues; as it was when the cycle started."""
        afs = self.afs
        if afs is None:
            return None

        def of(info: WorkloadInfo) -> float | None:
            if not self._afs_cq(info.cluster_queue or ""):
                return None
            lq = _key(info.namespace, info.queue_name)
            return afs.snapshot_usage(lq, self._lq_weights.get(lq, 1.0))

        return of

    def _lq_admitted_usage(self, lq: str, st: ClusterQueueState) -> Amounts:
        """GetAdmittedUsage: the admitted workloads of the LocalQueue in the
        ClusterQueue, flavors summed per resource."""
        ns, name = lq.split("/", 1)
        acc: dict[str, int] = {}
        for info in st.workloads.values():
            if info.namespace == ns and info.queue_name == name and is_admitted(info.obj):
                for (_, r), v in info.usage().items():
                    acc[r] = acc.get(r, 0) + v
        return {r: from_units(r, v) for r, v in acc.items()}

    def _afs_assumed(self, info: WorkloadInfo, cq: ClusterQueueState, wl: kt.Workload) -> None:
        """The scheduler's entry penalty (assumeWorkload): the requests of the
        pending workload, before partial admission, times one sampling alpha."""
        assert self.afs is not None
        lq = _key(info.namespace, info.queue_name)
        if self._afs_cq(cq.name):
            total: dict[str, int] = {}
            covered = {r for rg in cq.resource_groups for r in rg.covered}
            for ps in info.podsets:
                for r, v in ps.requests.items():
                    if not self.ignore_undeclared or r in covered:
                        total[r] = total.get(r, 0) + v
            penalty = self.afs.entry_penalty({r: from_units(r, v) for r, v in total.items()})
            self.afs.push_penalty(lq, info.key, penalty, self.now)
            if is_admitted(wl):
                self._afs_settle(info.key, wl)
        self._afs_reconcile(lq)

    def _afs_settle(self, key: str, wl: kt.Workload) -> None:
        """updateAfsConsumedUsage, on a transition into Admitted."""
        assert self.afs is not None
        adm = wl.status.admission if wl.status is not None else None
        if adm is None or not self._afs_cq(adm.cluster_queue):
            return
        lq = _key(wl.metadata.namespace, wl.spec.queue_name or "")
        lq_obj = self.lq_objs.get(lq)
        st = self.snap.cqs.get(adm.cluster_queue)
        # The cache's LocalQueue is filed under the ClusterQueue its spec names.
        if lq_obj is None or st is None or lq_obj.spec.cluster_queue != adm.cluster_queue:
            return
        self.afs.settle(lq, key, self._lq_admitted_usage(lq, st), self.now)

    def _afs_workload_event(
        self, key: str, wl: kt.Workload, prev: WorkloadInfo | None, was_admitted: bool
    ) -> None:
        """reconcileAfsPenaltiesOnUpdate, then the LocalQueue controller, which
        every workload update notifies."""
        assert self.afs is not None
        lq = _key(wl.metadata.namespace, wl.spec.queue_name or "")
        moved_from = None
        if prev is not None and prev.queue_name != (wl.spec.queue_name or ""):
            moved_from = _key(wl.metadata.namespace, prev.queue_name)
            self.afs.sub_penalty(moved_from, key)
        if is_finished(wl) or (not wl.spec.active and not has_quota_reservation(wl)):
            self.afs.sub_penalty(lq, key)
        elif wl.spec.active and is_admitted(wl) and not was_admitted:
            self._afs_settle(key, wl)
        self._afs_reconcile(lq)
        if moved_from is not None:
            self._afs_reconcile(moved_from)

    def _afs_reconcile_cq(self, name: str) -> None:
        if self.afs is None:
            return
        for lq, obj in list(self.lq_objs.items()):
            if obj.spec.cluster_queue == name:
                self._afs_reconcile(lq)

    def _afs_reconcile(self, lq: str) -> None:
        """The LocalQueue controller's admission fair sharing part: sample when
        the interval has passed or a penalty waits, else wait for the tick."""
        afs = self.afs
        if afs is None:
            return
        obj = self.lq_objs.get(lq)
        cq_name = (obj.spec.cluster_queue or "") if obj is not None else ""
        st = self.snap.cqs.get(cq_name)
        if obj is None or (obj.spec.stop_policy or "None") != "None" or st is None or not st.active:
            self._afs_due.pop(lq, None)  # Kueue returns before requeueing it
            return
        entry = afs.get(lq)
        if entry is None or not entry.status_accounted:
            had, entry = afs.initialize(lq, _persisted_consumed(obj), self.now)
        else:
            had = True
        if had and self.now - entry.last_update < afs.interval and not entry.has_pending_penalty():
            self._afs_due[lq] = entry.last_update + afs.interval
            return
        afs.sample(lq, self._lq_admitted_usage(lq, st), self.now)
        self._afs_due[lq] = self.now + afs.interval

    # ================================================================ cycles and time
    def cycle(self) -> CycleResult:
        from kuota.scheduler.cycle import Cycle

        self._fresh_evictions.clear()
        if self.afs is None:
            return Cycle(self).run()
        self.afs.freeze()
        try:
            return Cycle(self).run()
        finally:
            self.afs.thaw()

    def settle(self, max_cycles: int = 1000) -> list[CycleResult]:
        """Cycles until nothing more can happen at this instant: as Kueue's
        loop, keep taking heads while some were not yet tried since the last
        change (each one tried and left waiting is parked, so the cycles reach
        every pending workload); heads tried again and again (a StrictFIFO head
        that stays in front, one iterating its flavors) rest after a few."""
        results = []
        quiet = 0
        tried: set[str] = set()
        for _ in range(max_cycles):
            self.complete_evictions()
            r = self.cycle()
            results.append(r)
            if r.changed or self._pending_evictions:
                quiet = 0
                tried.clear()
                continue
            if not self.queues.any_heads():
                break
            if not r.waiting.keys() - tried:
                quiet += 1
                if quiet >= 3:
                    break
            tried.update(r.waiting)
        return results

    def advance(self, to: datetime) -> None:
        while True:
            due = self._next_timer()
            if due is None or due > to:
                break
            self.now = max(self.now, due)
            self._fire_timers()
        self.now = max(self.now, to)

    def _may_have_timer(self, wl: kt.Workload, c: _TimerConds) -> bool:
        """Could the workload need time to pass (a superset of the timers
        _next_timer finds)? ``c``: its _timer_conds."""
        st = wl.status
        if st is not None and st.requeue_state is not None:
            return True
        if not _true(c[0]):
            return False
        if wl.spec.maximum_execution_time_seconds is not None:
            return True
        # A PodsReady timer runs only while PodsReady is not True; any change
        # of it is a status change, which puts the workload back in _timer_dirty.
        return self.config.wait_for_pods_ready is not None and not _true(c[1])

    def _refresh_timers(self) -> None:
        """Re-examine the workloads changed since the last look: whether they
        may have a timer, and their next deadline."""
        deadlines = self._deadlines
        for key in self._timer_dirty:
            info = self.infos.get(key)
            t: datetime | None = None
            c = _timer_conds(info.obj) if info is not None else _NO_TIMER_CONDS
            if info is not None and self._may_have_timer(info.obj, c):
                self._timed.add(key)
                t = self._deadline(info.obj, c)
            else:
                self._timed.discard(key)
            if t is None:
                deadlines.pop(key, None)
            elif deadlines.get(key) != t:
                deadlines[key] = t
                heappush(self._deadline_heap, (t, key))
        self._timer_dirty.clear()

    def _timed_infos(self) -> list[WorkloadInfo]:
        """The workloads that may have a timer, by key."""
        self._refresh_timers()
        out = []
        for key in sorted(self._timed):
            info = self.infos.get(key)
            if info is None:
                self._timed.discard(key)
            else:
                out.append(info)
        return out

    def _deadline(self, wl: kt.Workload, c: _TimerConds) -> datetime | None:
        """The workload's next timer: PodsReady timeout, maximum execution
        time or the end of its requeue backoff, whichever comes first."""
        w = self.config.wait_for_pods_ready
        t: datetime | None = None
        if w is not None and _true(c[0]) and not _true(c[1]):
            t = self._pods_ready_deadline(wl, c)
        m = self._max_execution_deadline(wl, c[0])
        if m is not None and (t is None or m < t):
            t = m
        rs = wl.status.requeue_state if wl.status is not None else None
        if rs is not None and rs.requeue_at is not None and not _true(c[3]):
            t = rs.requeue_at if t is None else min(t, rs.requeue_at)
        return t

    def _next_deadline(self) -> tuple[datetime, str] | None:
        self._refresh_timers()
        heap, deadlines = self._deadline_heap, self._deadlines
        while heap:
            t, key = heap[0]
            if deadlines.get(key) == t and key in self.infos:
                return heap[0]
            heappop(heap)  # superseded, or the workload is gone
        return None

    def _next_timer(self) -> datetime | None:
        nd = self._next_deadline()
        best = nd[0] if nd is not None else None
        if self._afs_due:
            t = min(self._afs_due.values())
            if best is None or t < best:
                best = t
        return best

    @staticmethod
    def _max_execution_deadline(wl: kt.Workload, adm: Condition | None) -> datetime | None:
        """When an admitted workload exhausts maximumExecutionTimeSeconds: the
        limit less the seconds of earlier admissions, from this admission.
        ``adm``: its (first) Admitted condition."""
        limit = wl.spec.maximum_execution_time_seconds
        if limit is None or wl.status is None or not wl.spec.active:
            return None
        if adm is None or adm.status != "True" or adm.last_transition_time is None:
            return None
        past = wl.status.accumulated_past_execution_time_seconds or 0
        return adm.last_transition_time + timedelta(seconds=limit - past)

    def _pods_ready_deadline(self, wl: kt.Workload, c: _TimerConds) -> datetime | None:
        w = self.config.wait_for_pods_ready
        if w is None or not wl.spec.active or _true(c[2]):
            # Kueue's reconcileNotReadyTimeout: an evicted (still releasing its
            # quota) or deactivated workload is not timed out again.
            return None
        pr = c[1]
        if pr is not None and pr.reason == "WaitForRecovery":
            if not w.recovery_timeout or pr.last_transition_time is None:
                return None
            return pr.last_transition_time + w.recovery_timeout
        adm = c[0]
        if adm is None or adm.last_transition_time is None:
            return None
        return adm.last_transition_time + w.timeout

    def _fire_timers(self) -> None:
        w = self.config.wait_for_pods_ready
        now = self.now
        due: list[WorkloadInfo] = []
        while (nd := self._next_deadline()) is not None and nd[0] <= now:
            heappop(self._deadline_heap)
            del self._deadlines[nd[1]]
            due.append(self.infos[nd[1]])
        due.sort(key=lambda i: i.key)  # in key order, as every timer of an instant
        for info in due:
            key = info.key
            if self.infos.get(key) is not info:
                continue  # changed by an earlier timer of this instant
            wl = info.obj
            c = _timer_conds(wl)
            m = self._max_execution_deadline(wl, c[0])
            if m is not None and m <= now:
                _deactivate(wl)
                assert wl.status is not None
                wl.status.accumulated_past_execution_time_seconds = None
                wl.status.requeue_state = None
                self._evict(
                    key,
                    "DeactivatedDueToMaximumExecutionTimeExceeded",
                    "The workload is deactivated due to exceeding the maximum execution time",
                )
                continue
            if w is not None and _true(c[0]) and not _true(c[1]):
                d = self._pods_ready_deadline(wl, c)
                if d is not None and d <= now:
                    self._pods_ready_timeout(key, wl)
                    continue
            rs = wl.status.requeue_state if wl.status is not None else None
            if (
                rs is not None
                and rs.requeue_at is not None
                and rs.requeue_at <= now
                and not _true(c[3])
            ):
                rs.requeue_at = None
                rq = find_condition(wl, "Requeued")
                if (
                    rq is not None
                    and rq.status == "False"
                    and rq.reason in ("PodsReadyTimeout", "AdmissionCheck")
                ):
                    self._cond(
                        wl,
                        "Requeued",
                        "True",
                        "BackoffFinished",
                        "The workload backoff was finished",
                        now,
                    )
                self._sync(key)
        # LocalQueue sampling ticks, after the workload timers of the same instant.
        for lq in sorted(k for k, t in self._afs_due.items() if t <= now):
            self._afs_reconcile(lq)

    def _pods_ready_timeout(self, key: str, wl: kt.Workload) -> None:
        w = self.config.wait_for_pods_ready
        assert w is not None
        rs = w.requeuing_strategy
        if wl.status is None:
            wl.status = kt.WorkloadStatus()
        state = wl.status.requeue_state or kt.RequeueState()
        count = (state.count or 0) + 1
        if rs.backoff_limit_count is not None and count > rs.backoff_limit_count:
            _deactivate(wl)
            wl.status.requeue_state = None
            self._evict(
                key,
                "DeactivatedDueToRequeuingLimitExceeded",
                "The workload is deactivated due to exceeding the maximum number of "
                "re-queuing retries",
            )
            return
        base, cap = rs.backoff_base_seconds, rs.backoff_max_seconds
        # Kueue jitters by up to 0.01 %; kuota uses none so runs are repeatable.
        delay = base if count == 1 else min(base * 2 ** (count - 1), cap)
        at = self.now + timedelta(seconds=delay)
        if state.requeue_at is not None and state.requeue_at > at:
            at = state.requeue_at
        wl.status.requeue_state = kt.RequeueState(count=count, requeue_at=at)
        self._evict(key, "PodsReadyTimeout", f"Exceeded the PodsReady timeout {key}")

    # ================================================================ views
    def workload(self, key: str) -> WorkloadView | None:
        wl = self.workloads.get(key)
        if wl is None:
            return None
        st = wl.status
        flavors = count = None
        reason, message = "", ""
        if is_finished(wl):
            state = "finished"
        elif has_quota_reservation(wl) and st is not None and st.admission is not None:
            flavors = {p.name: dict(p.flavors or {}) for p in st.admission.pod_set_assignments}
            count = {
                p.name: p.count if p.count is not None else 0
                for p in st.admission.pod_set_assignments
            }
            ev = find_condition(wl, "Evicted")
            if ev is not None and ev.status == "True":
                if ev.reason == "Preempted":
                    state = "preempted"
                    pc = find_condition(wl, "Preempted")
                    reason, message = (pc.reason, pc.message) if pc else (ev.reason, ev.message)
                else:
                    state, reason, message = "evicted", ev.reason, ev.message
            elif is_admitted(wl):
                state = "admitted"
            else:
                state = "reserved"
        else:
            ev = find_condition(wl, "Evicted")
            queued = self.queues.queued(key)
            if ev is not None and ev.status == "True" and key in self._fresh_evictions:
                state, reason, message = "evicted", ev.reason, ev.message
            elif queued in ("active", "inflight"):
                state = "pending"
            elif queued == "inadmissible":
                state = "inadmissible"
            else:
                state = "unqueued"
            if state != "evicted":
                qr = find_condition(wl, "QuotaReserved")
                if qr is not None and qr.status == "False":
                    reason, message = qr.reason, qr.message
        rs = st.requeue_state if st is not None else None
        explanation = self.explain(key) if state in ("pending", "inadmissible", "unqueued") else ""
        return WorkloadView(
            key=key,
            state=state,  # type: ignore[arg-type]
            reason=reason,
            message=message,
            flavors=flavors,
            count=count,
            active=wl.spec.active,
            requeue_count=(rs.count or 0) if rs is not None else None,
            has_requeue_at=rs is not None and rs.requeue_at is not None,
            requeue_state_set=rs is not None,
            explanation=explanation,
        )

    def explain(self, key: str) -> str:
        """Why the workload waits, in one line with numbers."""
        from kuota.scheduler.explain import explain

        return explain(self, key)

    def cluster_queue(self, name: str) -> ClusterQueueView | None:
        st = self.snap.cqs.get(name)
        if st is None or name not in self.cq_objs:
            return None
        holders = st.workloads
        reserving = [i for i in st.unadmitted.values() if not is_admitted(i.obj)]
        q = self.queues.cqs.get(name)
        return ClusterQueueView(
            name=name,
            usage=_flavor_usage(st.held_usage),
            admitted_usage=_flavor_usage(_less(st.held_usage, reserving)),
            pending_workloads=(q.pending_count() + len(q.inflight)) if q else 0,
            reserving_workloads=len(holders),
            admitted_workloads=len(holders) - len(reserving),
            active=st.status_active(),
            reason="Ready" if st.status_active() else st.inactive_reason,
            message="Can admit new workloads" if st.status_active() else st.inactive_message,
        )

    def local_queue(self, key: str) -> LocalQueueView | None:
        obj = self.lq_objs.get(key)
        if obj is None:
            return None
        held = self.snap.by_lq.get(key)
        # The kept sum holds by_lq's infos; it stands for the holders when
        # each is the current info of its workload (always, but for a moment
        # inside a refile), else the sum is taken afresh. The check costs what
        # changed since the last (a LocalQueue may hold thousands, and its
        # status is written every instant it changes).
        infos = self.infos
        if held and self.snap.holders_current(key, infos):
            total = self.snap.lq_usage.get(key, {})
            waiting = self.snap.lq_unadmitted.get(key, {}).values()
            reserving = [i for i in waiting if not is_admitted(i.obj)]
        else:
            holders = [infos.get(k, i) for k, i in held.items()] if held else []
            total = _sum_usage(holders)
            reserving = [i for i in holders if not is_admitted(i.obj)]
        lq = self.queues.lqs.get(key)
        pending = 0
        if lq is not None and (lq.stopped or lq.cluster_queue in self.queues.cqs):
            # Kueue's PendingWorkloads: the LocalQueue's items (while it runs,
            # each is queued in its ClusterQueue, active or parked).
            pending = len(lq.items)
        stopped = (obj.spec.stop_policy or "None") != "None"
        cq_ok = (obj.spec.cluster_queue or "") in self.cq_objs
        active = cq_ok and not stopped
        if stopped:
            reason = "Stopped"
        elif not cq_ok:
            reason = "ClusterQueueDoesNotExist"
        else:
            st = self.snap.cqs.get(obj.spec.cluster_queue or "")
            up = st is not None and st.status_active()
            reason = "Ready" if up else "ClusterQueueIsInactive"
            active = active and up
        entry = self.afs.get(key) if self.afs is not None else None
        written = entry.status if entry is not None else None
        return LocalQueueView(
            key=key,
            usage=_flavor_usage(total),
            admitted_usage=_flavor_usage(_less(total, reserving)),
            pending_workloads=pending,
            reserving_workloads=len(held) if held else 0,
            admitted_workloads=(len(held) if held else 0) - len(reserving),
            active=active,
            reason=reason,
            consumed_resources={r: str(to_quantity(v)) for r, v in sorted(written[0].items())}
            if written is not None
            else None,
            last_update=written[1] if written is not None else None,
        )

    # ================================================================ helpers
    def _resync_namespace(self, namespace: str | None) -> None:
        """LimitRange/RuntimeClass changes resize waiting workloads."""
        for key, wl in list(self.workloads.items()):
            if namespace is not None and wl.metadata.namespace != namespace:
                continue
            if not has_quota_reservation(wl):
                self._sync(key, event=False)


def _sum_usage(infos: Iterable[WorkloadInfo]) -> dict[FR, int]:
    acc: dict[FR, int] = {}
    for info in infos:
        sum_into(acc, info.usage())
    return acc


def _less(total: dict[FR, int], infos: list[WorkloadInfo]) -> dict[FR, int]:
    """``total`` without the usage of ``infos`` (all among the summed);
    exact integers, so the same as summing the others."""
    if not infos:
        return total
    acc = dict(total)
    for info in infos:
        take_from(acc, info.usage())
    return acc


# The text of resource_quantity(r, v), a pure function: queue statuses are
# rebuilt every instant from the same few totals. Bounded, as the decoder's
# quantity cache is.
_QUANTITY_TEXT: Final[dict[tuple[str, int], str]] = {}


def _flavor_usage(acc: dict[FR, int]) -> FlavorUsage:
    out: FlavorUsage = {}
    for (f, r), v in sorted(acc.items()):
        text = _QUANTITY_TEXT.get((r, v))
        if text is None:
            text = str(resource_quantity(r, v))
            if len(_QUANTITY_TEXT) < 4096:
                _QUANTITY_TEXT[(r, v)] = text
        out.setdefault(f, {})[r] = text
    return out


def _quotas(groups: list[kt.ResourceGroup] | None) -> dict[FR, Quota]:
    out: dict[FR, Quota] = {}
    for rg in groups or ():
        for f in rg.flavors:
            for r in f.resources:
                out[(f.name, r.name)] = Quota(
                    resource_value(r.name, r.nominal_quota),
                    resource_value(r.name, r.borrowing_limit)
                    if r.borrowing_limit is not None
                    else None,
                    resource_value(r.name, r.lending_limit)
                    if r.lending_limit is not None
                    else None,
                )
    return out


def _persisted_consumed(lq: kt.LocalQueue) -> Amounts:
    """status.fairSharing.admissionFairSharingStatus.consumedResources: the usage
    a LocalQueue had when the world was stored."""
    fs = lq.status.fair_sharing if lq.status is not None else None
    afs = fs.admission_fair_sharing_status if fs is not None else None
    if afs is None:
        return {}
    return {r: decimal_of(q) for r, q in (afs.consumed_resources or {}).items()}


def _weight(fs: kt.FairSharing | None) -> float:
    if fs is None or fs.weight is None:
        return 1.0
    w = fs.weight
    assert isinstance(w, Quantity)
    return w.nanos / 1e9


def _checks_message(checks: list[kt.AdmissionCheckState], state: str) -> str:
    """Kueue's buildAdmissionChecksMessage: the checks in a state, by name."""
    parts = [
        f'"{c.name}" ({c.message})' if c.message else f'"{c.name}"'
        for c in sorted(checks, key=lambda c: c.name)
    ]
    noun = "AdmissionChecks" if len(checks) > 1 else "AdmissionCheck"
    return f"{noun} in {state} state: {'; '.join(parts)}"
