"""Kueue's own controllers over the store: the admission core fed by watches.

The core (``kuota.scheduler.admission.admission_core.AdmissionCore``) already decides as Kueue's
scheduler, workload controller and queue controllers do; this controller is
the glue that keeps it in step with the store. Objects flow in through the
informers; decisions flow out as status writes (Workload conditions and
admission, ClusterQueue and LocalQueue status). Scheduling cycles run when
the rest of the control plane is idle, so every change at an instant is seen
before a cycle decides, and keep running while they change something.

A Workload's status is shared: Kueue owns admission, requeueState and most
conditions; the job integration writes PodsReady and Finished, check
controllers write admissionChecks. Before writing a status, the controller
makes the core observe the newest stored status, so no one's write is lost.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import datetime, timedelta
from functools import partial
from typing import Any, Final

import msgspec

from kuota.api.base import quantity_of
from kuota.api.conditions import find, transition_time
from kuota.api.kueue import types as kt
from kuota.api.kueue.config import KueueConfig
from kuota.api.kueue.v1beta1 import domains_of
from kuota.api.meta import Condition
from kuota.api.quantity import Quantity
from kuota.controllers.tas.cluster_view import tas_cluster
from kuota.controllers.workload_events import workload_events
from kuota.runtime.informer import key_of
from kuota.runtime.manager import Manager
from kuota.scheduler.admission.admission_core import AdmissionCore
from kuota.scheduler.views import ClusterQueueView, CycleResult, FlavorUsage, LocalQueueView
from kuota.store import Conflict, NotFound, clone
from kuota.store.kinds import kind_info, kind_named
from kuota.store.protocol import ResourceType, StoreError
from kuota.store.resources import (
    ADMISSION_CHECK,
    CLUSTER_QUEUE,
    COHORT,
    DEVICE_CLASS,
    LIMIT_RANGE,
    LOCAL_QUEUE,
    NAMESPACE,
    NODE,
    POD,
    PRIORITY_CLASS,
    RESOURCE_CLAIM_TEMPLATE,
    RESOURCE_FLAVOR,
    RESOURCE_SLICE,
    RUNTIME_CLASS,
    TOPOLOGY,
    WORKLOAD,
    WORKLOAD_PRIORITY_CLASS,
)

_replace: Final = msgspec.structs.replace
G: Final = kt.GROUP
# Everything the admission core reads.
WATCHED: Final[tuple[ResourceType, ...]] = (
    NAMESPACE,
    PRIORITY_CLASS,
    RUNTIME_CLASS,
    LIMIT_RANGE,
    RESOURCE_CLAIM_TEMPLATE,
    DEVICE_CLASS,
    RESOURCE_SLICE,
    RESOURCE_FLAVOR,
    TOPOLOGY,
    ADMISSION_CHECK,
    WORKLOAD_PRIORITY_CLASS,
    COHORT,
    CLUSTER_QUEUE,
    LOCAL_QUEUE,
    WORKLOAD,
)
# Conditions written by others (the job integration); the core only reads them.
EXTERNAL_CONDITIONS: Final = frozenset({"PodsReady", "Finished"})
TIMERS: Final = "@timers"
QUEUE_STATUS: Final = "@queue-status"  # the batched write of the queue statuses
COMPONENT: Final = "kueue-admission"  # the source Kueue's scheduler records events as
RESOURCE_IN_USE: Final = "kueue.x-k8s.io/resource-in-use"
_ON_HOLD: Final = "OnHold"  # QuotaReserved=False reason: released on purpose
# Kueue's UpdatesBatchPeriod: a workload event asks for its queues' status
# reconcile one period later (AddAfter), so the writes come at most about once
# per period; busy in real time, they still come at least that often.
QUEUE_STATUS_PERIOD: Final = timedelta(seconds=1)
QUIET_CYCLES: Final = (
    3  # as AdmissionCore.settle: requeued heads may fit once all flavors are tried
)

_CQ_MESSAGES: Final = {"Ready": "Can admit new workloads"}
_LQ_MESSAGES: Final = {
    "Ready": "Can submit new workloads to localQueue",
    "Stopped": "LocalQueue is stopped",
    "ClusterQueueDoesNotExist": "Can't submit new workloads to clusterQueue",
    "ClusterQueueIsInactive": "Can't submit new workloads to clusterQueue",
}


def _ref(rtype: ResourceType, key: str) -> str:
    return f"{rtype[0]}/{kind_info(rtype).kind}:{key}"


# A Workload's ref is made at every write and observation of one.
_WORKLOAD_REF: Final = _ref(WORKLOAD, "")


def _split(ref: str) -> tuple[ResourceType, str]:
    gk, _, key = ref.partition(":")
    group, _, kind = gk.partition("/")
    return kind_named(group, kind).rtype, key


class KueueController:
    name = "kueue"

    def __init__(self, config: KueueConfig, tas_cluster: bool = True) -> None:
        self.config = config
        # Read nodes and pods for topology-aware scheduling (the embedded
        # plane's informers hold them anyway; cluster mode does not watch them yet).
        self.tas_cluster = tas_cluster
        self.core: AdmissionCore | None = None
        self.mgr: Manager | None = None
        # The resourceVersion of each Workload status the core has seen or
        # written: an event carrying it is our own echo.
        self._seen_rv: dict[str, str] = {}
        # The queue view each ClusterQueue/LocalQueue status was last written from.
        self._written_view: dict[str, Any] = {}
        self._quiet = QUIET_CYCLES  # quiet cycles that tried no new head
        self._tried: set[str] = set()  # heads tried and left waiting since the last change
        self._advanced_to: datetime | None = None
        self._synced = False  # the core has seen every object of the first listing
        self._cqs_dirty: set[str] = set()
        self._lqs_dirty: set[str] = set()
        # workload -> (cq, lq key, lq name): the queues its changes touch
        self._queues_of: dict[str, tuple[str | None, str, str]] = {}
        self._wls_dirty: set[str] = set()  # workloads whose queues are to be marked
        self._queues_flushed: datetime | None = None  # when queue statuses were last written
        self.cycles: list[CycleResult] = []  # kept only when record_cycles
        self.record_cycles = False
        # False: cycles run only when run_cycle() is called (scenario steps).
        self.auto_schedule = True
        self.admissions = 0
        self.cycles_run = 0  # (the replay's per-instant cycle limit reads it)
        self.preemptions = 0
        # When a list: each scheduling cycle's duration in seconds (benchmarks).
        self.cycle_seconds: list[float] | None = None

    # ------------------------------------------------------------ wiring
    def setup(self, mgr: Manager) -> None:
        self.mgr = mgr
        self.core = AdmissionCore(self.config, mgr.clock.now())
        for rtype in WATCHED:
            mgr.informer(rtype).on_change(self._handler(rtype))
        if self.tas_cluster:
            # Read (not watched) for topology-aware scheduling, at cycle time.
            mgr.informer(NODE)
            mgr.informer(POD)
        mgr.on_idle(self._idle)

    def _handler(self, rtype: ResourceType) -> Any:
        prefix = _ref(rtype, "")
        seen = self._seen_rv

        def on_change(etype: str, obj: Any, old: Any | None) -> None:
            ref = prefix + key_of(obj)
            if etype != "DELETED" and seen.get(ref) == obj.metadata.resource_version:
                return  # our own write coming back
            assert self.mgr is not None
            self.mgr.enqueue(self.name, ref)

        return on_change

    # ------------------------------------------------------------ reconcile
    def reconcile(self, ref: str) -> None:
        core, mgr = self._parts()
        self._advance()
        if ref == TIMERS:
            # Something is due now, maybe at the instant already advanced to
            # (a starting world's overdue deadline, learnt after that).
            core.advance(mgr.clock.now())
            self._timers_fired()
            return None
        if ref == QUEUE_STATUS:
            self.flush_queues()
            return None
        rtype, key = _split(ref)
        obj = mgr.informer(rtype).get(key)
        ns, _, name = key.rpartition("/")
        if obj is None:
            core.delete(kind_info(rtype).kind, ns, name)
            self._seen_rv.pop(ref, None)
            if rtype == WORKLOAD:
                self._mark_queues(key)
        elif rtype == WORKLOAD and obj.metadata.deletion_timestamp is not None:
            # Being deleted: release its quota, then let it go (Kueue removes
            # its resource-in-use finalizer once the quota is released).
            core.delete(kind_info(rtype).kind, ns, name)
            self._mark_queues(key)
            self._release_finalizer(obj)
        elif rtype == WORKLOAD:
            self._observe_workload(key, obj)
        else:
            core.apply(clone(obj)) if self._known(rtype, key) else core.add(clone(obj))
            if rtype == CLUSTER_QUEUE:
                self._cqs_dirty.add(key)
            elif rtype == LOCAL_QUEUE:
                self._lqs_dirty.add(key)
            elif rtype in (ADMISSION_CHECK, RESOURCE_FLAVOR, TOPOLOGY):
                # A check turned Active, a flavor or Topology came or went:
                # the queues' Active condition may say otherwise now (Kueue's
                # ClusterQueue reconciler watches these kinds).
                self._cqs_dirty.update(core.cq_objs)
        self.wake()
        self.flush()
        return None

    def _timers_fired(self) -> None:
        """After the core's timers fired: write what they changed and try
        the queues again."""
        core, _ = self._parts()
        if self.config.admission_fair_sharing is not None:
            # Sampling moved the LocalQueues' consumed usage.
            self._lqs_dirty.update(core.lq_objs)
        self.wake()
        self.flush()

    def _release_finalizer(self, wl: kt.Workload) -> None:
        _, mgr = self._parts()
        fins = [f for f in wl.metadata.finalizers or () if f != RESOURCE_IN_USE]
        if len(fins) == len(wl.metadata.finalizers or ()):
            return
        new = clone(wl)
        new.metadata.finalizers = fins or None
        try:
            mgr.store.update(new)
        except NotFound:
            return
        # A Conflict propagates: the manager retries the key.

    def _known(self, rtype: ResourceType, key: str) -> bool:
        core, _ = self._parts()
        kind = kind_info(rtype).kind
        tables: dict[str, Any] = {
            "Namespace": core.namespaces,
            "ResourceFlavor": core.flavors,
            "ClusterQueue": core.cq_objs,
            "Cohort": core.cohort_objs,
            "LocalQueue": core.lq_objs,
            "WorkloadPriorityClass": core.wpcs,
            "PriorityClass": core.pcs,
            "RuntimeClass": core.runtime_classes,
            "AdmissionCheck": core.checks,
            "Topology": core.topologies,
            "ResourceSlice": core.resource_slices,
            "DeviceClass": core.device_class_objs,
        }
        if kind in ("LimitRange", "ResourceClaimTemplate"):
            ns, _, name = key.partition("/")
            by_ns = core.limit_ranges if kind == "LimitRange" else core.claim_templates
            return name in by_ns.get(ns, {})
        return key in tables.get(kind, {})

    def _observe_workload(self, key: str, stored: kt.Workload) -> None:
        """Bring the core in step with the stored Workload: its spec, and the
        status fields others own, over the core's own status."""
        core, _ = self._parts()
        mine = core.workloads.get(key)
        if mine is not None and mine.status is not None:
            # A shallow copy: ``mine`` is the core's private object, replaced by
            # this one (the parts it shares, the core owned alone already).
            status: kt.WorkloadStatus | None = _merged_status(_replace(mine.status), stored.status)
        else:
            status = clone(stored.status)
        # The core writes the status of its copy, nothing else: the rest is
        # shared with the (immutable) stored object (a spec the core changes,
        # spec.active or spec.priority, it replaces).
        obj = _replace(stored, status=status)
        core.add(obj)
        self._seen_rv[_WORKLOAD_REF + key] = stored.metadata.resource_version
        self._mark_queues(key)

    # ------------------------------------------------------------ scheduling
    def wake(self) -> None:
        self._quiet = 0
        self._tried.clear()

    def _idle(self) -> bool:
        """Run one scheduling cycle if anything may have changed since the
        last quiet one; report whether it did."""
        core, _ = self._parts()
        # The first idle moment: everything the store held is in the core.
        self._synced = True
        if self._advance():
            # A timer fired here rather than in reconcile(TIMERS) (the clock
            # passed it before its request came round, and _schedule_timer
            # below replaces that request): do what that reconcile does, or
            # its evictions and requeues wait for the next unrelated event.
            self._timers_fired()
        if not self.auto_schedule or self._quiet >= QUIET_CYCLES:
            self._flush_queues_batched()
            self._schedule_timer()
            return False
        self._flush_queues_if_due()
        core.complete_evictions()
        result = self.run_cycle()
        if result.changed or core.has_pending_evictions:
            self.wake()
        elif not core.queues.any_heads():
            self._quiet = QUIET_CYCLES  # no head left to try: more cycles do nothing
        elif not result.waiting.keys() - self._tried:
            # Only heads already tried since the last change (a StrictFIFO head
            # that stays in front, a head iterating its flavors): rest after a few.
            self._quiet += 1
        # Kueue's scheduler keeps taking heads while its queues have any: each
        # head tried and left waiting is parked, so the cycles reach every
        # pending workload at this instant, not just the first few.
        self._tried.update(result.waiting)
        return True

    def run_cycle(self) -> CycleResult:
        core, mgr = self._parts()
        self._advance()
        if self.tas_cluster and core.uses_tas():
            # Only worlds with TAS flavors pay for reading nodes and pods.
            core.set_tas_cluster(*tas_cluster(mgr))
        if self.cycle_seconds is not None:
            t = time.perf_counter()
            result = core.cycle()
            self.cycle_seconds.append(time.perf_counter() - t)
        else:
            result = core.cycle()
        if self.record_cycles:
            self.cycles.append(result)
        self.cycles_run += 1
        self.admissions += len(result.admitted)
        self.preemptions += len(result.preempted)
        self.flush()
        return result

    def _schedule_timer(self) -> None:
        core, mgr = self._parts()
        at = core.next_timer()
        # The core's next timer replaces any earlier request (a timeout that
        # no longer applies, a workload gone).
        mgr.cancel_timer(self.name, TIMERS)
        if at is not None:
            mgr.enqueue_at(self.name, TIMERS, at)

    # ------------------------------------------------------------ status out
    def _advance(self) -> bool:
        """Let the core's timers fire up to now (True when any did); only when time moved (the
        core's timer scan is not free), and not before the core has learnt
        what the store held when the run started: a restarted run's timers
        due at its first instant (its clock stopped at them) fire then, with
        every workload known, before any cycle, as in a run that never
        stopped."""
        core, mgr = self._parts()
        if not self._synced:
            return False
        now = mgr.clock.now()
        if now == self._advanced_to:
            return False
        self._advanced_to = now
        return core.advance(now)

    def flush(self) -> None:
        """Write the workloads whose status changed. Queue statuses wait for
        flush_queues(): counters need no more than one write per period."""
        core, mgr = self._parts()
        self._record_core_events()
        keys = sorted(core.take_touched())
        at_once = getattr(mgr.store, "update_status_all", None)
        if at_once is not None and len(keys) > 1:
            # (a store over an API server: the writes in flight together)
            for key in self._write_workloads_at_once(keys, at_once):
                self._write_workload(key)
            for key in keys:
                self._mark_queues(key)
            return
        for key in keys:
            self._write_workload(key)
            self._mark_queues(key)

    def _record_core_events(self) -> None:
        """The Events the scheduler asked for (those no status change shows,
        SecondPassFailed), recorded on the stored workload."""
        core, mgr = self._parts()
        events = core.take_events()
        if not events or not mgr.recorder.enabled:
            return
        inf = mgr.informer(WORKLOAD)
        for key, etype, reason, message in events:
            stored = inf.get(key)
            if stored is not None:
                mgr.recorder.event(stored, etype, reason, message, COMPONENT)  # type: ignore[arg-type]

    def _queues_due_at(self) -> datetime | None:
        """When the queue statuses may be written next, a period after their
        last write (None: now)."""
        last = self._queues_flushed
        if last is None:
            return None
        at = last + QUEUE_STATUS_PERIOD
        _, mgr = self._parts()
        return None if mgr.clock.now() >= at else at

    def _flush_queues_if_due(self) -> None:
        """In real time a busy scheduler may not settle for a long while: the
        queue statuses are still written every period (a virtual instant
        always settles, and _flush_queues_batched writes them)."""
        _, mgr = self._parts()
        if not mgr.clock.virtual and self._queues_due_at() is None:
            self.flush_queues()

    def _flush_queues_batched(self) -> None:
        """At a settled instant: write the queue statuses now if the last
        write is a period old, else when it will be (Kueue batches them the
        same way: one reconcile per queue per UpdatesBatchPeriod)."""
        if not (self._cqs_dirty or self._lqs_dirty or self._wls_dirty):
            return
        at = self._queues_due_at()
        if at is None:
            self.flush_queues()
        else:
            _, mgr = self._parts()
            mgr.enqueue_at(self.name, QUEUE_STATUS, at)

    def flush_queues(self) -> None:
        _, mgr = self._parts()
        mgr.cancel_timer(self.name, QUEUE_STATUS)
        self._queues_flushed = mgr.clock.now()
        self._resolve_marks()
        at_once = getattr(mgr.store, "update_status_all", None)
        if at_once is not None:
            # (a store over an API server: the writes in flight together, as
            # Kueue's queue reconcilers write beside its scheduler)
            self._write_queues_at_once(at_once)
            return
        for name in sorted(self._cqs_dirty):
            self._write_queue(CLUSTER_QUEUE, name)
        self._cqs_dirty.clear()
        for key in sorted(self._lqs_dirty):
            self._write_queue(LOCAL_QUEUE, key)
        self._lqs_dirty.clear()

    def _write_queues_at_once(self, at_once: Any) -> None:
        """What ``_write_queue`` does for every dirty queue, the writes sent
        together; a Conflict is retried one by one from the re-read object."""
        _, mgr = self._parts()
        todo = [(CLUSTER_QUEUE, name) for name in sorted(self._cqs_dirty)]
        todo += [(LOCAL_QUEUE, key) for key in sorted(self._lqs_dirty)]
        sent: list[tuple[ResourceType, str, Any, Any]] = []
        objs: list[Any] = []
        for rtype, key in todo:
            what = self._queue_status(rtype, key)
            if what is None:
                continue
            view, build = what
            stored = mgr.informer(rtype).get(key)
            new = self._status_to_write(_ref(rtype, key), stored, view, build)
            if new is not None:
                sent.append((rtype, key, view, build))
                objs.append(new)
        answers = at_once(objs) if objs else []
        # (cleared only once the writes have answered: an error on the way
        # leaves every queue to the next flush)
        self._cqs_dirty.clear()
        self._lqs_dirty.clear()
        retry: list[tuple[ResourceType, str, Any, Any]] = []
        failed: StoreError | None = None
        for (rtype, key, view, build), written in zip(sent, answers, strict=True):
            if isinstance(written, Conflict):
                retry.append((rtype, key, view, build))
            elif isinstance(written, StoreError):
                if not isinstance(written, NotFound):
                    (self._cqs_dirty if rtype == CLUSTER_QUEUE else self._lqs_dirty).add(key)
                    failed = failed or written
            else:
                ref = _ref(rtype, key)
                self._seen_rv[ref] = written.metadata.resource_version
                self._written_view[ref] = view
        if retry:
            mgr.pump()
            for rtype, key, view, build in retry:
                self._write_status(rtype, key, view, build)
        if failed is not None:
            raise failed  # (the queue is written again at the next flush)

    def _mark_queues(self, key: str) -> None:
        """The queues a workload is counted in need their status written
        again; which ones is worked out when they are (a busy workload is
        marked many times between two writes)."""
        self._wls_dirty.add(key)

    def _resolve_marks(self) -> None:
        """Mark the queues each marked workload was counted in at the last
        status write and the ones it is counted in now."""
        core, _ = self._parts()
        for key in self._wls_dirty:
            prev = self._queues_of.get(key)
            if prev is not None:
                self._mark(prev)
            wl = core.workloads.get(key)
            if wl is None:
                self._queues_of.pop(key, None)
                continue
            info = core.infos.get(key)
            cq = info.cluster_queue if info is not None else None
            name = wl.spec.queue_name or ""
            if prev is None or prev[0] != cq or prev[2] != name:  # (a namespace stays)
                self._queues_of[key] = now = (cq, f"{wl.metadata.namespace}/{name}", name)
                self._mark(now)
        self._wls_dirty.clear()

    def _mark(self, queues: tuple[str | None, str, str]) -> None:
        core, _ = self._parts()
        cq, lq_key, _ = queues
        if cq:
            self._cqs_dirty.add(cq)
        self._lqs_dirty.add(lq_key)
        lq = core.lq_objs.get(lq_key)
        if lq is not None and lq.spec.cluster_queue:
            self._cqs_dirty.add(lq.spec.cluster_queue)

    def _write_workload(self, key: str) -> None:
        core, mgr = self._parts()
        mine = core.workloads.get(key)
        if mine is None:
            return
        inf = mgr.informer(WORKLOAD)
        ref = _WORKLOAD_REF + key
        for _ in range(5):
            stored = inf.get(key)
            if stored is None:
                return
            if self._seen_rv.get(ref) != stored.metadata.resource_version:
                self._observe_workload(key, stored)
                mine = core.workloads[key]
            try:
                ms, ss = mine.spec, stored.spec
                if ms is not ss and (ms.active != ss.active or ms.priority != ss.priority):
                    # Kueue deactivated it (requeuing limit) or its
                    # WorkloadPriorityClass changed value: a spec write.
                    spec = _replace(ss, active=ms.active, priority=ms.priority)
                    stored = mgr.store.update(_replace(stored, spec=spec))
                    self._seen_rv[ref] = stored.metadata.resource_version
                if mine.status == stored.status:
                    return
                # The store copies the status it is given: no copy of ours.
                written = mgr.store.update_status(_replace(stored, status=mine.status))
            except Conflict:
                mgr.pump()
                continue
            except NotFound:
                return
            self._workload_written(key, stored, written)
            return

    def _workload_written(self, key: str, stored: kt.Workload, written: kt.Workload) -> None:
        """After a workload's status write: its version is ours, and the
        Events of what changed."""
        core, mgr = self._parts()
        self._seen_rv[_WORKLOAD_REF + key] = written.metadata.resource_version
        if mgr.recorder.enabled:
            for etype, reason, message in workload_events(
                written, stored.status, written.status, core.now
            ):
                mgr.recorder.event(written, etype, reason, message, COMPONENT)  # type: ignore[arg-type]

    def _write_workloads_at_once(self, keys: list[str], at_once: Any) -> list[str]:
        """The status writes of ``keys`` sent together: what
        ``_write_workload`` does for each, for the common case of a status
        write alone. Returns the keys left to it (a spec to write too, or a
        Conflict to retry from the re-read object)."""
        core, mgr = self._parts()
        inf = mgr.informer(WORKLOAD)
        rest: list[str] = []
        sent: list[tuple[str, Any]] = []
        for key in keys:
            mine = core.workloads.get(key)
            stored = inf.get(key) if mine is not None else None
            if mine is None or stored is None:
                continue
            ref = _WORKLOAD_REF + key
            if self._seen_rv.get(ref) != stored.metadata.resource_version:
                self._observe_workload(key, stored)
                mine = core.workloads[key]
            ms, ss = mine.spec, stored.spec
            if ms is not ss and (ms.active != ss.active or ms.priority != ss.priority):
                rest.append(key)
            elif mine.status != stored.status:
                sent.append((key, stored))
        if not sent:
            return rest
        objs = [_replace(st, status=core.workloads[key].status) for key, st in sent]
        failed: list[tuple[str, StoreError]] = []
        for (key, stored), written in zip(sent, at_once(objs), strict=True):
            if isinstance(written, Conflict):
                rest.append(key)
                continue
            if isinstance(written, NotFound):
                continue
            if isinstance(written, StoreError):
                failed.append((key, written))
                continue
            self._workload_written(key, stored, written)
        if rest:
            mgr.pump()  # (the re-read objects, for _write_workload's retry)
        if failed:
            # Written at the next flush (the reconcile that raises is retried).
            core.state.touched.update(key for key, _ in failed)
            core.state.touched.update(rest)
            raise failed[0][1]
        return sorted(rest)

    def _write_queue(self, rtype: ResourceType, key: str) -> None:
        what = self._queue_status(rtype, key)
        if what is not None:
            self._write_status(rtype, key, *what)

    def _queue_status(self, rtype: ResourceType, key: str) -> tuple[Any, Any] | None:
        """A queue's view in the core and how its status is built from the
        stored one (None: the core has no such queue)."""
        core, _ = self._parts()
        if rtype == CLUSTER_QUEUE:
            cq = core.cluster_queue(key)
            return None if cq is None else (cq, partial(_cq_status, cq, now=core.now))
        lq = core.local_queue(key)
        if lq is None:
            return None
        cqs = self._parts()[1].informer(CLUSTER_QUEUE)
        return lq, partial(_lq_status, lq, now=core.now, cluster_queues=cqs)

    def _write_status(self, rtype: ResourceType, key: str, view: Any, build: Any) -> None:
        _, mgr = self._parts()
        inf = mgr.informer(rtype)
        ref = _ref(rtype, key)
        for _ in range(5):
            new = self._status_to_write(ref, inf.get(key), view, build)
            if new is None:
                return
            try:
                written = mgr.store.update_status(new)
            except Conflict:
                mgr.pump()
                continue
            except NotFound:
                return
            self._seen_rv[ref] = written.metadata.resource_version
            self._written_view[ref] = view
            return

    def _status_to_write(self, ref: str, stored: Any, view: Any, build: Any) -> Any:
        """The queue object to write for ``view``, or None: gone, or its
        stored status already says what the view does."""
        if stored is None:
            return None
        rv = stored.metadata.resource_version
        if self._written_view.get(ref) == view and self._seen_rv.get(ref) == rv:
            return None  # the stored status is ours, from this same view
        status = build(stored)
        if status == stored.status:
            self._seen_rv[ref] = rv
            self._written_view[ref] = view
            return None
        return _replace(stored, status=status)

    def _parts(self) -> tuple[AdmissionCore, Manager]:
        assert self.core is not None and self.mgr is not None, "setup() first"
        return self.core, self.mgr


# ---------------------------------------------------------------- helpers
def _merged_status(mine: kt.WorkloadStatus, theirs: kt.WorkloadStatus | None) -> kt.WorkloadStatus:
    """The core's status with what other writers own taken from the store."""
    if theirs is None:
        return mine
    conds = {c.type: c for c in mine.conditions or ()}
    for c in theirs.conditions or ():
        if c.type in EXTERNAL_CONDITIONS:
            conds[c.type] = _replace(c)  # a shallow copy is whole: its fields are immutable
    mine.conditions = list(conds.values()) or None
    if theirs.admission_checks is not None:
        states = {s.name: s for s in mine.admission_checks or ()}
        for s in theirs.admission_checks:
            cur = states.get(s.name)
            # A check controller's verdict moves a check out of Pending; the
            # core's own reset to Pending (on eviction) is newer otherwise.
            if cur is None or (cur.state == "Pending" and s.state != "Pending"):
                states[s.name] = clone(s)
            elif (
                cur.state == s.state == "Pending"
                and cur.message != s.message
                and (s.retry_count or 0) >= (cur.retry_count or 0)
            ):
                # A check controller's word on a pending check (the
                # autoscaler's "capacity is not found"): kept.
                states[s.name] = clone(s)
        mine.admission_checks = [states[n] for n in sorted(states)] or None
    mine.reclaimable_pods = clone(theirs.reclaimable_pods) if theirs.reclaimable_pods else None
    # The TAS node controller's word on failed nodes, for the assignment the
    # core holds (the core clears it on replacement, admission, eviction).
    mine.unhealthy_nodes = _unhealthy_on(mine, theirs)
    if mine.admission is not None and not any(
        c.type == "Evicted" and c.status == "True" for c in mine.conditions or ()
    ):
        # MultiKueue's nomination, while the reservation holds (an eviction
        # resets it: the core's word then).
        mine.cluster_name = theirs.cluster_name
        mine.nominated_cluster_names = clone(theirs.nominated_cluster_names)
        if theirs.admission is not None:
            # MultiKueue's updateDelayedTopologyRequest: the worker assigned
            # the topology the core delayed.
            mine.admission = _delayed_ready(mine.admission, theirs.admission)
    if _hold_moved(mine, theirs):
        # An integration put its workload on hold (a StatefulSet scaled to 0:
        # its reservation released, UnsetQuotaReservationWithCondition) or
        # took it off hold: that write is the newest word on the reservation.
        held = {c.type: c for c in theirs.conditions or () if c.type in _HOLD_CONDITIONS}
        conds = {c.type: c for c in mine.conditions or ()}
        conds.update((t, _replace(c)) for t, c in held.items())
        mine.conditions = list(conds.values())
        mine.admission = clone(theirs.admission)
        mine.accumulated_past_execution_time_seconds = (
            theirs.accumulated_past_execution_time_seconds
        )
    return mine


def _delayed_ready(mine: kt.Admission, theirs: kt.Admission) -> kt.Admission:
    """The core's admission with the delayedTopologyRequests another writer
    turned from Pending to Ready (the same reservation); else itself."""
    if mine.cluster_queue != theirs.cluster_queue:
        return mine
    ready = {p.name for p in theirs.pod_set_assignments if p.delayed_topology_request == "Ready"}
    if not ready or not any(
        p.delayed_topology_request == "Pending" and p.name in ready
        for p in mine.pod_set_assignments
    ):
        return mine
    # (new objects: the core's may be shared with a stored one)
    return _replace(
        mine,
        pod_set_assignments=[
            _replace(p, delayed_topology_request="Ready")
            if p.delayed_topology_request == "Pending" and p.name in ready
            else p
            for p in mine.pod_set_assignments
        ],
    )


def _unhealthy_on(mine: kt.WorkloadStatus, theirs: kt.WorkloadStatus) -> Any:
    """The stored unhealthyNodes that the core's topology assignment names."""
    if not theirs.unhealthy_nodes or mine.admission is None:
        return None
    assigned = {
        values[-1]
        for psa in mine.admission.pod_set_assignments
        if psa.topology_assignment is not None
        for values, _ in domains_of(psa.topology_assignment)
        if values
    }
    kept = [n for n in theirs.unhealthy_nodes if n.name in assigned]
    return clone(kept) if kept else None


_HOLD_CONDITIONS: Final = ("QuotaReserved", "Admitted")


def _hold_moved(mine: kt.WorkloadStatus, theirs: kt.WorkloadStatus) -> bool:
    """Whether the stored status puts the workload on hold (QuotaReserved
    False, reason OnHold) or lifts the hold, and the core's does not yet."""
    ours = find(mine.conditions, "QuotaReserved")
    stored = find(theirs.conditions, "QuotaReserved")
    if stored is None or stored.status != "False":
        return False
    mine_held = ours is not None and ours.status == "False" and ours.reason == _ON_HOLD
    return (stored.reason == _ON_HOLD) != mine_held


_ZERO: Final = quantity_of("0")


def _usage_list(usage: FlavorUsage, cq: Any, lq: bool) -> list[Any] | None:
    """Kueue's getUsage (a ClusterQueue's) and filterLocalQueueUsage (a
    LocalQueue's, over its ClusterQueue ``cq``): every flavor of the
    ClusterQueue's resource groups in their order, each with every covered
    resource (sorted), 0 when unused; a ClusterQueue in a cohort also says
    what it borrows beyond its nominal quota. Without the ClusterQueue's
    groups: what is used, by name."""
    groups = (cq.spec.resource_groups if cq is not None and cq.spec is not None else None) or ()
    out: list[Any] = []
    if not groups:
        for flavor in sorted(usage):
            res = [
                kt.ResourceUsage(name=r, total=quantity_of(q))
                for r, q in sorted(usage[flavor].items())
            ]
            out.append(_flavor_usage(flavor, res, lq))
        return out or None
    in_cohort = not lq and bool(cq.spec.cohort_name)
    for rg in groups:
        for fq in rg.flavors:
            used = usage.get(fq.name) or {}
            nominal = {r.name: r.nominal_quota for r in fq.resources}
            res = []
            for r in sorted(rg.covered_resources):
                text = used.get(r)
                total = quantity_of(text) if text is not None else _ZERO
                borrowed = None
                if in_cohort:
                    over = total - nominal.get(r, _ZERO)
                    borrowed = over if over.sign() > 0 else None
                res.append(kt.ResourceUsage(name=r, total=total, borrowed=borrowed))
            out.append(_flavor_usage(fq.name, res, lq))
    return out or None


def _flavor_usage(flavor: str, res: list[kt.ResourceUsage], lq: bool) -> Any:
    if lq:
        return kt.LocalQueueFlavorUsage(name=flavor, resources=res)
    return kt.FlavorUsage(name=flavor, resources=res)


def _condition(
    old: Iterable[Condition] | None, status: str, reason: str, message: str, now: datetime
) -> list[Condition]:
    at = transition_time(find(old, "Active"), status, now)
    return [
        Condition(
            type="Active",
            status=status,  # type: ignore[arg-type]
            reason=reason,
            message=message,
            last_transition_time=at,
        )
    ]


def _cq_status(v: ClusterQueueView, cq: Any, now: datetime) -> kt.ClusterQueueStatus:
    old: kt.ClusterQueueStatus | None = cq.status
    reason = v.reason or ("Ready" if v.active else "Unknown")
    message = v.message or _CQ_MESSAGES.get(reason) or f"Can't admit new workloads: {reason}."
    # Every field written below is new; the store copies what is written.
    st = _replace(old) if old is not None else kt.ClusterQueueStatus()
    st.conditions = _condition(
        old.conditions if old else None, "True" if v.active else "False", reason, message, now
    )
    st.flavors_reservation = _usage_list(v.usage, cq, lq=False)
    st.flavors_usage = _usage_list(v.admitted_usage, cq, lq=False)
    st.pending_workloads = v.pending_workloads
    st.reserving_workloads = v.reserving_workloads
    st.admitted_workloads = v.admitted_workloads
    return st


def _lq_status(
    v: LocalQueueView, lq: Any, now: datetime, cluster_queues: Any
) -> kt.LocalQueueStatus:
    old: kt.LocalQueueStatus | None = lq.status
    cq = cluster_queues.get(lq.spec.cluster_queue) if lq.spec is not None else None
    st = _replace(old) if old is not None else kt.LocalQueueStatus()
    st.conditions = _condition(
        old.conditions if old else None,
        "True" if v.active else "False",
        v.reason,
        _LQ_MESSAGES.get(v.reason, v.reason),
        now,
    )
    st.flavors_reservation = _usage_list(v.usage, cq, lq=True)
    st.flavors_usage = _usage_list(v.admitted_usage, cq, lq=True)
    st.pending_workloads = v.pending_workloads
    st.reserving_workloads = v.reserving_workloads
    st.admitted_workloads = v.admitted_workloads
    if v.consumed_resources is not None and v.last_update is not None:
        # Admission fair sharing: the LocalQueue's decayed usage.
        st.fair_sharing = kt.LocalQueueFairSharingStatus(
            admission_fair_sharing_status=kt.AdmissionFairSharingStatus(
                consumed_resources={
                    r: Quantity.from_value(q) for r, q in sorted(v.consumed_resources.items())
                },
                last_update=v.last_update,
            )
        )
    return st
