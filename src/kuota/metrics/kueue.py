"""Kueue's metrics over a store.

Kueue's scheduler and controllers update its metrics as they decide. kuota's
core is pure (no I/O, no globals), so this edge derives the same series from
what the decisions leave in the store:

* counters and histograms (admitted, quota reserved, finished, evicted,
  preempted, wait times) from the Workload transitions the store's watch
  reports: a condition turning True is the decision Kueue counts;
* gauges (pending, active, quotas, usage, statuses) at scrape time from the
  ClusterQueues, LocalQueues, Cohorts and Workloads themselves.

Every series carries ``replica_role`` last, as Kueue's do.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from kuota.api.conditions import find_condition
from kuota.metrics.bizrq import BizrqCollector
from kuota.metrics.buckets import E14, E16
from kuota.store import Gone
from kuota.store.protocol import ObjectStore
from kuota.store.resources import CLUSTER_QUEUE, COHORT, LOCAL_QUEUE, WORKLOAD

CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"
_ROLE: Final = "replica_role"
_PREEMPTOR_UID: Final = re.compile(r"Preempted to accommodate a workload \(UID: ([^,)]+)")
# Queued → the queue manager's answer for a workload key ("ns/name"):
# 'active', 'inadmissible', 'inflight' or None.
Queued = Callable[[str], str | None]


@dataclass(slots=True)
class _Seen:
    """What was last counted of one Workload (by uid)."""

    reserved: bool = False
    admitted: bool = False
    finished: bool = False
    evicted_at: datetime | None = None
    preempted_at: datetime | None = None


def _true_at(wl: Any, ctype: str) -> datetime | None:
    c = find_condition(wl, ctype)
    if c is None or c.status != "True":
        return None
    return c.last_transition_time or wl.metadata.creation_timestamp


def _priority_class(wl: Any) -> str:
    ref = wl.spec.priority_class_ref
    return ref.name if ref is not None else ""


def _cluster_queue(wl: Any) -> str:
    adm = wl.status.admission if wl.status is not None else None
    return adm.cluster_queue if adm is not None else ""


def _queued_since(wl: Any) -> datetime | None:
    """Kueue's QueuedWaitTime start: the last requeue, else creation."""
    requeued = find_condition(wl, "Requeued")
    if requeued is not None and requeued.status == "True" and requeued.last_transition_time:
        return requeued.last_transition_time
    return wl.metadata.creation_timestamp


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None:
        return None
    return max(0.0, (end - start).total_seconds())


class KueueMetrics:
    """Kueue's registry for one store. ``observe()`` folds the Workload
    changes since the last call into the counters (call it often: at every
    scrape and periodically); ``render()`` is the /metrics body."""

    def __init__(
        self,
        store: ObjectStore,
        *,
        role: str = "standalone",
        queued: Queued | None = None,
    ) -> None:
        self.store = store
        self.role = role
        self.queued = queued
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        # First in the registry: every exposition (render, or a server's
        # generate_latest) folds the watch's news into the counters first.
        r.register(_Observer(self))
        cq_pc = ["cluster_queue", "priority_class", _ROLE]
        lq_pc = ["name", "namespace", "priority_class", _ROLE]
        self.quota_reserved = Counter(
            "kueue_quota_reserved_workloads", "Workloads that reserved quota", cq_pc, registry=r
        )
        self.admitted = Counter("kueue_admitted_workloads", "Workloads admitted", cq_pc, registry=r)
        self.finished = Counter("kueue_finished_workloads", "Workloads finished", cq_pc, registry=r)
        self.evicted = Counter(
            "kueue_evicted_workloads",
            "Workloads evicted",
            ["cluster_queue", "reason", "underlying_cause", "priority_class", _ROLE],
            registry=r,
        )
        self.preempted = Counter(
            "kueue_preempted_workloads",
            "Workloads preempted",
            ["preempting_cluster_queue", "reason", _ROLE],
            registry=r,
        )
        self.quota_reserved_wait = Histogram(
            "kueue_quota_reserved_wait_time_seconds",
            "Time from creation or requeue to quota reservation",
            cq_pc,
            buckets=E14,
            registry=r,
        )
        self.admission_wait = Histogram(
            "kueue_admission_wait_time_seconds",
            "Time from creation or requeue to admission",
            cq_pc,
            buckets=E16,
            registry=r,
        )
        self.checks_wait = Histogram(
            "kueue_admission_checks_wait_time_seconds",
            "Time from quota reservation to admission",
            cq_pc,
            buckets=E14,
            registry=r,
        )
        self.execution = Histogram(
            "kueue_execution_time_seconds",
            "Time from admission to finish",
            cq_pc,
            buckets=E16,
            registry=r,
        )
        self.lq_quota_reserved = Counter(
            "kueue_local_queue_quota_reserved_workloads",
            "Workloads that reserved quota",
            lq_pc,
            registry=r,
        )
        self.lq_admitted = Counter(
            "kueue_local_queue_admitted_workloads", "Workloads admitted", lq_pc, registry=r
        )
        self.lq_finished = Counter(
            "kueue_local_queue_finished_workloads", "Workloads finished", lq_pc, registry=r
        )
        self.lq_admission_wait = Histogram(
            "kueue_local_queue_admission_wait_time_seconds",
            "Time from creation or requeue to admission",
            lq_pc,
            buckets=E16,
            registry=r,
        )
        r.register(_StateCollector(self))
        r.register(BizrqCollector(store, role))  # kuota's own trees' budgets
        self._seen: dict[str, _Seen] = {}
        self._uid_cq: dict[str, str] = {}
        self._watch: Any = None
        self._relist()

    # ------------------------------------------------------------ counters
    def _relist(self) -> None:
        """Start (or restart after Gone) the watch; what exists is taken as
        counted, as a restarted Kueue does not count admissions it did not
        make."""
        if self._watch is not None:
            self._watch.close()
        listed = self.store.list(WORKLOAD)
        for wl in listed.items:
            self._remember(wl)
        self._watch = self.store.watch(WORKLOAD, listed.resource_version)

    def _remember(self, wl: Any) -> _Seen:
        uid = wl.metadata.uid or ""
        seen = self._seen.get(uid)
        if seen is None:
            seen = self._seen[uid] = _Seen()
        seen.reserved = _true_at(wl, "QuotaReserved") is not None
        seen.admitted = _true_at(wl, "Admitted") is not None
        seen.finished = _true_at(wl, "Finished") is not None
        seen.evicted_at = _true_at(wl, "Evicted")
        seen.preempted_at = _true_at(wl, "Preempted")
        if _cluster_queue(wl):
            self._uid_cq[uid] = _cluster_queue(wl)
        return seen

    def observe(self) -> None:
        try:
            events = self._watch.poll()
        except Gone:
            self._relist()
            return
        for ev in events:
            wl = ev.object
            if ev.type == "DELETED":
                self._seen.pop(wl.metadata.uid or "", None)
                continue
            if ev.type in ("ADDED", "MODIFIED"):
                self._count(wl)

    def _count(self, wl: Any) -> None:
        uid = wl.metadata.uid or ""
        known = self._seen.get(uid)
        before = dataclasses.replace(known) if known is not None else _Seen()
        after = self._remember(wl)
        cq = _cluster_queue(wl) or self._uid_cq.get(uid, "")
        pc = _priority_class(wl)
        lq = (wl.spec.queue_name or "", wl.metadata.namespace or "", pc, self.role)
        labels = (cq, pc, self.role)
        start = _queued_since(wl)
        if after.reserved and not before.reserved:
            at = _true_at(wl, "QuotaReserved")
            self.quota_reserved.labels(*labels).inc()
            self.lq_quota_reserved.labels(*lq).inc()
            waited = _seconds(start, at)
            if waited is not None:
                self.quota_reserved_wait.labels(*labels).observe(waited)
        if after.admitted and not before.admitted:
            at = _true_at(wl, "Admitted")
            self.admitted.labels(*labels).inc()
            self.lq_admitted.labels(*lq).inc()
            waited = _seconds(start, at)
            if waited is not None:
                self.admission_wait.labels(*labels).observe(waited)
                self.lq_admission_wait.labels(*lq).observe(waited)
            checks = _seconds(_true_at(wl, "QuotaReserved"), at)
            if checks is not None:
                self.checks_wait.labels(*labels).observe(checks)
        if after.finished and not before.finished:
            self.finished.labels(*labels).inc()
            self.lq_finished.labels(*lq).inc()
            ran = _seconds(_true_at(wl, "Admitted"), _true_at(wl, "Finished"))
            if ran is not None:
                self.execution.labels(*labels).observe(ran)
        if after.evicted_at is not None and after.evicted_at != before.evicted_at:
            c = find_condition(wl, "Evicted")
            reason = c.reason if c is not None else ""
            self.evicted.labels(cq, reason, "", pc, self.role).inc()
        if after.preempted_at is not None and after.preempted_at != before.preempted_at:
            c = find_condition(wl, "Preempted")
            if c is not None:
                self.preempted.labels(self._preemptor_cq(c.message, cq), c.reason, self.role).inc()

    def _preemptor_cq(self, message: str, victim_cq: str) -> str:
        m = _PREEMPTOR_UID.search(message)
        if m is not None and m.group(1) in self._uid_cq:
            return self._uid_cq[m.group(1)]
        return victim_cq  # within the ClusterQueue the preemptor's is the victim's

    def render(self) -> bytes:
        return generate_latest(self.registry)


def _quantity(q: Any) -> float:
    return float(q.milli_value()) / 1000.0 if q is not None else 0.0


class _Observer(Collector):
    """Yields nothing: brings the counters up to date before they are read."""

    def __init__(self, metrics: KueueMetrics) -> None:
        self.m = metrics

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        self.m.observe()
        return iter(())


class _StateCollector(Collector):
    """The gauges, read from the objects at scrape time."""

    def __init__(self, metrics: KueueMetrics) -> None:
        self.m = metrics

    def describe(self) -> list[Metric]:
        return []  # computed at scrape time only

    def collect(self) -> Iterator[Metric]:
        store, role = self.m.store, self.m.role
        cqs = store.list(CLUSTER_QUEUE).items
        lqs = store.list(LOCAL_QUEUE).items
        cohorts = store.list(COHORT).items
        workloads = store.list(WORKLOAD).items
        yield from self._cluster_queues(cqs, role)
        yield from self._pending(cqs, lqs, workloads, role)
        yield from self._cohorts(cqs, cohorts, role)
        yield from self._local_queues(lqs, role)

    def _cluster_queues(self, cqs: list[Any], role: str) -> Iterator[Metric]:
        labels = ["cohort", "cluster_queue", "flavor", "resource", _ROLE]
        nominal = GaugeMetricFamily(
            "kueue_cluster_queue_nominal_quota", "Nominal quota", labels=labels
        )
        borrowing = GaugeMetricFamily(
            "kueue_cluster_queue_borrowing_limit", "Borrowing limit", labels=labels
        )
        lending = GaugeMetricFamily(
            "kueue_cluster_queue_lending_limit", "Lending limit", labels=labels
        )
        usage = GaugeMetricFamily(
            "kueue_cluster_queue_resource_usage", "Admitted usage", labels=labels
        )
        reservation = GaugeMetricFamily(
            "kueue_cluster_queue_resource_reservation", "Reserved quota", labels=labels
        )
        status = GaugeMetricFamily(
            "kueue_cluster_queue_status",
            "ClusterQueue status",
            labels=["cluster_queue", "status", _ROLE],
        )
        info = GaugeMetricFamily(
            "kueue_cluster_queue_info",
            "ClusterQueue's cohorts",
            labels=["cluster_queue", "parent_cohort", "root_cohort", _ROLE],
        )
        reserving = GaugeMetricFamily(
            "kueue_reserving_active_workloads",
            "Workloads holding quota",
            labels=["cluster_queue", _ROLE],
        )
        admitted = GaugeMetricFamily(
            "kueue_admitted_active_workloads", "Admitted workloads", labels=["cluster_queue", _ROLE]
        )
        roots = _cohort_roots(self.m.store)
        for cq in cqs:
            name = cq.metadata.name
            cohort = cq.spec.cohort_name or ""
            for rg in cq.spec.resource_groups or []:
                for fq in rg.flavors:
                    for rq in fq.resources:
                        key = [cohort, name, fq.name, rq.name, role]
                        nominal.add_metric(key, _quantity(rq.nominal_quota))
                        # Kueue reports +Inf for no limit.
                        borrowing.add_metric(
                            key,
                            _quantity(rq.borrowing_limit)
                            if rq.borrowing_limit is not None
                            else math.inf,
                        )
                        lending.add_metric(
                            key,
                            _quantity(rq.lending_limit)
                            if rq.lending_limit is not None
                            else math.inf,
                        )
            st = cq.status
            for fam, flavors in (
                (usage, st.flavors_usage if st is not None else None),
                (reservation, st.flavors_reservation if st is not None else None),
            ):
                for fu in flavors or []:
                    for ru in fu.resources:
                        fam.add_metric([cohort, name, fu.name, ru.name, role], _quantity(ru.total))
            current = _cq_status(cq)
            for s in ("pending", "active", "terminating"):
                status.add_metric([name, s, role], 1.0 if s == current else 0.0)
            info.add_metric([name, cohort, roots.get(cohort, cohort), role], 1.0)
            reserving.add_metric([name, role], float(st.reserving_workloads if st else 0))
            admitted.add_metric([name, role], float(st.admitted_workloads if st else 0))
        yield from (
            nominal,
            borrowing,
            lending,
            usage,
            reservation,
            status,
            info,
            reserving,
            admitted,
        )

    def _pending(
        self, cqs: list[Any], lqs: list[Any], workloads: list[Any], role: str
    ) -> Iterator[Metric]:
        fam = GaugeMetricFamily(
            "kueue_pending_workloads",
            "Pending workloads",
            labels=["cluster_queue", "status", _ROLE],
        )
        lq_cq = {(lq.metadata.namespace, lq.metadata.name): lq.spec.cluster_queue for lq in lqs}
        counts = {(cq.metadata.name, s): 0 for cq in cqs for s in ("active", "inadmissible")}
        for wl in workloads:
            if _true_at(wl, "QuotaReserved") or _true_at(wl, "Finished"):
                continue
            if wl.metadata.deletion_timestamp is not None:
                continue
            cq = lq_cq.get((wl.metadata.namespace, wl.spec.queue_name or ""))
            if cq is None or (cq, "active") not in counts:
                continue
            key = f"{wl.metadata.namespace}/{wl.metadata.name}"
            where = self.m.queued(key) if self.m.queued is not None else _pending_kind(wl)
            if where in ("active", "inadmissible"):
                counts[(cq, where)] += 1
        for (cq, s), n in counts.items():
            fam.add_metric([cq, s, role], float(n))
        yield fam

    def _cohorts(self, cqs: list[Any], cohorts: list[Any], role: str) -> Iterator[Metric]:
        info = GaugeMetricFamily(
            "kueue_cohort_info",
            "Cohort's parents",
            labels=["cohort", "parent_cohort", "root_cohort", _ROLE],
        )
        roots = _cohort_roots(self.m.store)
        parents = {c.metadata.name: c.spec.parent_name or "" for c in cohorts}
        names = set(parents) | {cq.spec.cohort_name for cq in cqs if cq.spec.cohort_name}
        for name in sorted(names):
            info.add_metric([name, parents.get(name, ""), roots.get(name, name), role], 1.0)
        yield info

    def _local_queues(self, lqs: list[Any], role: str) -> Iterator[Metric]:
        pending = GaugeMetricFamily(
            "kueue_local_queue_pending_workloads",
            "Pending workloads",
            labels=["name", "namespace", "status", _ROLE],
        )
        reserving = GaugeMetricFamily(
            "kueue_local_queue_reserving_active_workloads",
            "Workloads holding quota",
            labels=["name", "namespace", _ROLE],
        )
        admitted = GaugeMetricFamily(
            "kueue_local_queue_admitted_active_workloads",
            "Admitted workloads",
            labels=["name", "namespace", _ROLE],
        )
        for lq in lqs:
            st = lq.status
            key = [lq.metadata.name, lq.metadata.namespace]
            pending.add_metric([*key, "active", role], float(st.pending_workloads if st else 0))
            reserving.add_metric([*key, role], float(st.reserving_workloads if st else 0))
            admitted.add_metric([*key, role], float(st.admitted_workloads if st else 0))
        yield from (pending, reserving, admitted)


def _pending_kind(wl: Any) -> str:
    """Without the queue manager (a scraper of the objects alone): a workload
    the scheduler tried and could not fit is inadmissible, as Kueue parks it."""
    c = find_condition(wl, "QuotaReserved")
    return "inadmissible" if c is not None and c.status == "False" and c.message else "active"


def _cq_status(cq: Any) -> str:
    if cq.metadata.deletion_timestamp is not None:
        return "terminating"
    active = find_condition(cq, "Active")
    return "active" if active is not None and active.status == "True" else "pending"


def _cohort_roots(store: ObjectStore) -> dict[str, str]:
    parents = {c.metadata.name: c.spec.parent_name or "" for c in store.list(COHORT).items}
    roots: dict[str, str] = {}
    for name in parents:
        seen, cur = {name}, name
        while parents.get(cur) and parents[cur] not in seen:
            cur = parents[cur]
            seen.add(cur)
        roots[name] = cur
    return roots
