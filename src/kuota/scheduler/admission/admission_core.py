"""The admission core: Kueue's objects in, admission decisions out.

It holds what Kueue's caches hold (flavors, queues, cohorts, the workloads
holding quota and the pending ones), applies object changes the way Kueue's
controllers react to them, and runs scheduling cycles. Pure and synchronous:
time is passed in (``advance``), nothing is read from a clock or a disk, so
the same core serves scenarios, simulations and the controllers of a cluster.

This is the facade: the parts (one concept each, in this package) share one
``CoreState`` and are wired here; each object kind has its handler
(``handlers``), and a cycle's decisions are applied in one place
(``applier``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from kuota.api.kueue.config import KueueConfig
from kuota.quota.workload import WorkloadInfo
from kuota.scheduler.admission.admissibility import Admissibility
from kuota.scheduler.admission.admission_checks import AdmissionChecks
from kuota.scheduler.admission.admission_fair_sharing import AdmissionFairSharing
from kuota.scheduler.admission.applier import DecisionApplier
from kuota.scheduler.admission.cluster_queues import QueueController
from kuota.scheduler.admission.delayed_topology import DelayedTopology
from kuota.scheduler.admission.handlers import KindHandler, handlers
from kuota.scheduler.admission.infos import InfoFactory
from kuota.scheduler.admission.node_replacement import NodeReplacement
from kuota.scheduler.admission.queries import Queries
from kuota.scheduler.admission.state import CoreState
from kuota.scheduler.admission.timeouts import Timeouts
from kuota.scheduler.admission.timers import TimerIndex
from kuota.scheduler.admission.unreserved import UnreservedReasons
from kuota.scheduler.admission.wakes import Wakes
from kuota.scheduler.admission.workloads import WorkloadController
from kuota.scheduler.cycle import Cycle
from kuota.scheduler.tas.snapshot import TASNode
from kuota.scheduler.views import ClusterQueueView, CycleResult, LocalQueueView, WorkloadView


class AdmissionCore:
    def __init__(self, config: KueueConfig, now: datetime) -> None:
        self.state = st = CoreState(config, now)
        self.factory = InfoFactory(st)
        self.adm = Admissibility(st, self.factory)
        self.fair = AdmissionFairSharing(st)
        self.timers = TimerIndex(st, self.fair)
        self.wakes = Wakes(st, self.adm)
        st.queues.tree_of = self.wakes.tree_key
        self.acs = AdmissionChecks(st)
        self.reasons = UnreservedReasons(st, self.acs, self.adm)
        self.wlc = WorkloadController(
            st, self.acs, self.adm, self.factory, self.fair, self.reasons, self.wakes
        )
        self.qc = QueueController(st, self.fair, self.reasons, self.wakes, self.wlc)
        self.applier = DecisionApplier(st, self.acs, self.factory, self.fair, self.wlc)
        self.timeouts = Timeouts(st, self.fair, self.timers, self.wlc)
        self.node_replacement = NodeReplacement(st, self.wlc)
        self.delayed_topology = DelayedTopology(st, self.wlc)
        self.queries = Queries(st, self.adm)
        self.handlers: dict[str, KindHandler] = handlers(
            st, self.qc, self.wlc, self.wakes, self.reasons, self.fair
        )
        # The state's tables and parts, under the names callers read.
        self.config = config
        self.namespaces = st.namespaces
        self.flavors = st.flavors
        self.cq_objs = st.cq_objs
        self.cohort_objs = st.cohort_objs
        self.lq_objs = st.lq_objs
        self.wpcs = st.wpcs
        self.pcs = st.pcs
        self.limit_ranges = st.limit_ranges
        self.runtime_classes = st.runtime_classes
        self.claim_templates = st.claim_templates
        self.resource_slices = st.resource_slices
        self.device_class_objs = st.device_class_objs
        self.checks = st.checks
        self.topologies = st.tas.topologies
        self.workloads = st.workloads
        self.tree = st.tree
        self.snap = st.snap
        self.infos = st.infos
        self.queues = st.queues
        self.preemptions = st.preemptions
        self.evictions = st.evictions
        self.afs = st.afs
        self.eviction_timestamp = st.eviction_timestamp
        self.ignore_undeclared = st.ignore_undeclared

    @property
    def now(self) -> datetime:
        return self.state.now

    @now.setter
    def now(self, value: datetime) -> None:
        self.state.now = value

    @property
    def cycle_count(self) -> int:
        return self.state.cycle_count

    def take_touched(self) -> set[str]:
        """The workloads whose status may have changed since the last call."""
        st = self.state
        out, st.touched = st.touched, set()
        return out

    def take_events(self) -> list[tuple[str, str, str, str]]:
        """The Events the scheduler asked for since the last call:
        (workload key, type, reason, message)."""
        st = self.state
        out, st.events = st.events, []
        return out

    @property
    def has_pending_evictions(self) -> bool:
        return bool(self.state.pending_evictions)

    def gate(self, name: str) -> bool:
        """``config.gate(name)``: a feature gate's value."""
        return self.state.gate(name)

    def next_timer(self) -> datetime | None:
        """When the core next needs time to pass (timeouts, backoff expiry)."""
        return self.timers.next_timer()

    # ================================================================ objects
    def add(self, obj: Any) -> None:
        h = self.handlers.get(obj.kind)
        if h is not None:
            h.put(obj, False)

    def apply(self, obj: Any) -> None:
        h = self.handlers.get(obj.kind)
        if h is not None:
            h.put(obj, True)

    def delete(self, kind: str, namespace: str, name: str) -> bool:
        h = self.handlers.get(kind)
        return h is not None and h.delete(namespace, name)

    def set_tas_cluster(
        self, nodes: dict[str, TASNode], pods: dict[str, tuple[str, dict[str, int]]]
    ) -> None:
        """The nodes and the pods Kueue did not place (node, requests), for
        topology-aware scheduling (read by the next cycles)."""
        self.state.tas.nodes = nodes
        self.state.tas.pods = pods

    def uses_tas(self) -> bool:
        """Whether any ResourceFlavor names a Topology."""
        return any(rf.spec.topology_name is not None for rf in self.state.flavors.values())

    def finish(self, key: str) -> None:
        self.wlc.finish(key)

    # ================================================================ admissibility
    def namespace_matches(self, cq_name: str, namespace: str, keep: bool = True) -> bool:
        return self.adm.namespace_matches(cq_name, namespace, keep)

    def resources_invalid(self, info: WorkloadInfo, keep: bool = True) -> str | None:
        return self.adm.resources_invalid(info, keep)

    def admissibility_error(
        self, info: WorkloadInfo, cq_name: str, keep: bool = True
    ) -> tuple[str, str] | None:
        return self.adm.admissibility_error(info, cq_name, keep)

    def afs_usage_snapshot(self) -> Callable[[WorkloadInfo], float | None] | None:
        return self.fair.usage_snapshot()

    def _lq_usage(self, lq: str) -> float:
        return self.fair.lq_usage(lq)

    def _evict(self, key: str, reason: str, message: str) -> None:
        self.wlc.evict(key, reason, message)

    # ================================================================ cycles and time
    def complete_evictions(self) -> None:
        self.wlc.complete_evictions()

    def cycle(self) -> CycleResult:
        st = self.state
        st.fresh_evictions.clear()
        if st.afs is None:
            return self._cycle()
        st.afs.freeze()
        try:
            return self._cycle()
        finally:
            st.afs.thaw()

    def _cycle(self) -> CycleResult:
        """One cycle: its decisions applied here, each before the next is made."""
        self.state.cycle_count += 1
        if self.state.unhealthy:
            self.node_replacement.run()  # (second passes: before the heads)
        if self.state.delayed_topology:
            self.delayed_topology.run()
        heads = self.state.queues.heads()
        if not heads:
            # Nothing to decide: no cycle object (its preemptor, its
            # generator) for the many cycles that find no head. The heads
            # were taken first; nothing a Cycle is made of reads them.
            result = CycleResult()
        else:
            c = Cycle(self.state, self.adm, self.fair, self.timers)
            applier, result = self.applier, c.result
            for d in c.decide(heads):
                applier.apply(d, result)
        self.state.tas.replaced.clear()
        self.state.tas.usage_cache.clear()
        return result

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
            if r.changed or self.state.pending_evictions:
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

    def advance(self, to: datetime) -> bool:
        """Let time pass to ``to``; True when a timer fired on the way."""
        return self.timeouts.advance(to)

    # ================================================================ views
    def workload(self, key: str) -> WorkloadView | None:
        return self.queries.workload(key)

    def explain(self, key: str) -> str:
        """Why the workload waits, in one line with numbers."""
        return self.queries.explain(key)

    def cluster_queue(self, name: str) -> ClusterQueueView | None:
        return self.queries.cluster_queue(name)

    def local_queue(self, key: str) -> LocalQueueView | None:
        return self.queries.local_queue(key)
