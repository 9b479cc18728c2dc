"""What the admission core holds: Kueue's objects by kind, the cohort tree
and quota holders, the queues, and the bookkeeping of what changed (the
workloads to write back, those whose timers to look at again). Every part of
the core shares this one state."""

from __future__ import annotations

from datetime import datetime

from kuota.api import k8s as kc
from kuota.api.conditions import set_condition
from kuota.api.k8s.resource import DeviceClass, ResourceClaimTemplate, ResourceSlice
from kuota.api.kueue import types as kt
from kuota.api.kueue.config import KueueConfig
from kuota.queueing.queue_manager import QueueManager
from kuota.quota.afs import UsageLedger
from kuota.quota.dra import (
    device_class_capacities,
    device_class_counters,
    device_class_resources,
    dra_binary_resources,
)
from kuota.quota.tree import QuotaTree
from kuota.quota.workload import ORDER_EVICTION_TS, ORDER_NO_PRIORITY_SORTING, WorkloadInfo
from kuota.scheduler.cache import CurrentInfos, Snapshot
from kuota.scheduler.tas.assign import TASInputs
from kuota.scheduler.views import Preemption


def key_of(ns: str, name: str) -> str:
    return f"{ns}/{name}"


class CoreState:
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
        # The object tables, one per kind the core reads.
        self.namespaces: dict[str, kc.Namespace] = {}
        self.flavors: dict[str, kt.ResourceFlavor] = {}
        self.cq_objs: dict[str, kt.ClusterQueue] = {}
        self.cohort_objs: dict[str, kt.Cohort] = {}
        self.lq_objs: dict[str, kt.LocalQueue] = {}
        self.wpcs: dict[str, kt.WorkloadPriorityClass] = {}
        self.pcs: dict[str, kc.PriorityClass] = {}
        self.limit_ranges: dict[str, dict[str, kc.LimitRange]] = {}
        self.runtime_classes: dict[str, kc.RuntimeClass] = {}
        # DRA: the ResourceClaimTemplates per namespace (what a pod's claims ask).
        self.claim_templates: dict[str, dict[str, ResourceClaimTemplate]] = {}
        self.device_classes = device_class_resources(config.resources.device_class_mappings)
        self.device_counters = device_class_counters(config.resources.device_class_mappings)
        self.device_capacities = device_class_capacities(config.resources.device_class_mappings)
        # The quota resources charged from counters or capacity: byte-valued,
        # printed BinarySI (main.go's RegisterBinaryFormattedResource).
        self.binary_resources = dra_binary_resources(
            config.resources.device_class_mappings, self.device_classes
        )
        # ... and the cluster's devices: ResourceSlices and DeviceClasses by name.
        self.resource_slices: dict[str, ResourceSlice] = {}
        self.device_class_objs: dict[str, DeviceClass] = {}
        self.checks: dict[str, kt.AdmissionCheck] = {}
        self.workloads: dict[str, kt.Workload] = {}
        # Topology-aware scheduling: the Topologies, and the nodes and the
        # usage of pods Kueue did not place, as the controller last gave them.
        self.tas = TASInputs()
        self.tas.least_free_profile = config.gate("TASProfileMixed")
        self.tas.balanced = config.gate("TASBalancedPlacement")
        self.tas.overlapping = config.gate("TASHandleOverlappingFlavors")
        # LimitRange, RuntimeClass and ResourceClaimTemplate changes, counted: what is worked out of
        # them (requests, resource checks) is kept per generation.
        self.ctx_gen = 0
        self.tree = QuotaTree()
        self.snap = Snapshot(self.tree, {}, self.flavors)
        # The current info of each workload; changes reach the snapshot (its
        # LocalQueue status check, holders_current).
        self.infos: dict[str, WorkloadInfo] = CurrentInfos(self.snap)
        self.queues = QueueManager(config.gate("SchedulingEquivalenceHashing"))
        self.preemptions: list[Preemption] = []
        self.evictions: list[tuple[str, str]] = []
        # Admission fair sharing (config and gate): the LocalQueues' usage ledger.
        afs = config.admission_fair_sharing
        self.afs = (
            UsageLedger(afs) if afs is not None and config.gate("AdmissionFairSharing") else None
        )
        self.pending_evictions: dict[str, str] = {}  # key -> reason, quota still held
        self.reclaim_gate = config.gate("ReclaimablePods")
        # The gates as a plain dict: the config's gate() is interpreted code,
        # and cycles and workload filing ask for gates all the time.
        self.gates: dict[str, bool] = dict(config.feature_gates)
        # ClusterQueues deleted while workloads still hold quota in them.
        self.terminating: set[str] = set()
        # Evicted (not preempted) since the last cycle: shown as "evicted" until
        # the scheduler has run again.
        self.fresh_evictions: set[str] = set()
        # Workloads whose status may have changed since take_touched(): what a
        # controller writes back to the store.
        self.touched: set[str] = set()
        self.timer_dirty: set[str] = set()  # workloads changed since the timer scan
        # Workloads whose status names unhealthy nodes (TASFailedNodeReplacement).
        self.unhealthy: set[str] = set()
        # Workloads with a delayed topology request Pending (a second pass
        # assigns it once their checks are Ready).
        self.delayed_topology: set[str] = set()
        # ... those whose second pass failed: when to try again (Kueue's
        # second-pass queue backoff), and how many times it failed.
        self.second_pass_at: dict[str, datetime] = {}
        self.second_pass_failures: dict[str, int] = {}
        # Events only the scheduler knows of (no status change to read them
        # off): (workload key, type, reason, message), taken by the
        # controller that records them (take_events).
        self.events: list[tuple[str, str, str, str]] = []

    def gate(self, name: str) -> bool:
        """``config.gate(name)``: a feature gate's value."""
        on = self.gates.get(name)
        return self.config.gate(name) if on is None else on  # (unknown: its error)

    def cond(
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
            key = key_of(wl.metadata.namespace, wl.metadata.name)
            self.touched.add(key)
            self.timer_dirty.add(key)
            if changed and (ctype == "Evicted" or ctype == "QuotaReserved"):
                # A quota holder's place among the preemption candidates
                # reads these (search.py's base_key).
                self.snap.rekey(key)
        return changed

    def no_reservation(self, wl: kt.Workload, *, if_changed: bool = False) -> bool:
        """``Admitted=False NoReservation``, as Kueue writes it for a workload
        that holds no quota (SyncAdmittedCondition, UnsetQuotaReservationWithCondition)."""
        return self.cond(
            wl,
            "Admitted",
            "False",
            "NoReservation",
            "The workload has no reservation",
            self.now,
            if_changed=if_changed,
        )
