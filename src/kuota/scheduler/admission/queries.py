"""The read-only views of the core: a workload's state and reason, a
ClusterQueue's and a LocalQueue's status as Kueue's controllers write it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from kuota.api.conditions import find_condition
from kuota.api.kueue import types as kt
from kuota.api.kueue.v1beta1 import domains_of
from kuota.quota.afs import to_quantity
from kuota.quota.requests import resource_quantity
from kuota.quota.tree import FR
from kuota.quota.workload import WorkloadInfo, has_quota_reservation, is_admitted, is_finished
from kuota.scheduler.admission.admissibility import Admissibility
from kuota.scheduler.admission.state import CoreState
from kuota.scheduler.cache import sum_into, take_from
from kuota.scheduler.explain import explain
from kuota.scheduler.views import ClusterQueueView, FlavorUsage, LocalQueueView, WorkloadView


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
_QUANTITY_TEXT: Final[dict[tuple[str, int, bool], str]] = {}


def _flavor_usage(acc: dict[FR, int], binary: frozenset[str]) -> FlavorUsage:
    out: FlavorUsage = {}
    for (f, r), v in sorted(acc.items()):
        key = (r, v, r in binary)
        text = _QUANTITY_TEXT.get(key)
        if text is None:
            text = str(resource_quantity(r, v, binary=binary))
            if len(_QUANTITY_TEXT) < 4096:
                _QUANTITY_TEXT[key] = text
        out.setdefault(f, {})[r] = text
    return out


class Queries:
    def __init__(self, state: CoreState, adm: Admissibility) -> None:
        self.state = state
        self.adm = adm

    def workload(self, key: str) -> WorkloadView | None:
        wl = self.state.workloads.get(key)
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
            queued = self.state.queues.queued(key)
            if ev is not None and ev.status == "True" and key in self.state.fresh_evictions:
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
            topology=_topology(st.admission if st is not None else None),
            delayed=_delayed(st.admission if st is not None else None),
        )

    def explain(self, key: str) -> str:
        """Why the workload waits, in one line with numbers."""
        return explain(self.state, self.adm, key)

    def cluster_queue(self, name: str) -> ClusterQueueView | None:
        st = self.state.snap.cqs.get(name)
        if st is None or name not in self.state.cq_objs:
            return None
        holders = st.workloads
        reserving = [i for i in st.unadmitted.values() if not is_admitted(i.obj)]
        q = self.state.queues.cqs.get(name)
        return ClusterQueueView(
            name=name,
            usage=_flavor_usage(st.held_usage, self.state.binary_resources),
            admitted_usage=_flavor_usage(
                _less(st.held_usage, reserving), self.state.binary_resources
            ),
            pending_workloads=(q.pending_count() + len(q.inflight)) if q else 0,
            reserving_workloads=len(holders),
            admitted_workloads=len(holders) - len(reserving),
            active=st.status_active(),
            reason="Ready" if st.status_active() else st.inactive_reason,
            message="Can admit new workloads" if st.status_active() else st.inactive_message,
        )

    def local_queue(self, key: str) -> LocalQueueView | None:
        obj = self.state.lq_objs.get(key)
        if obj is None:
            return None
        held = self.state.snap.by_lq.get(key)
        # The kept sum holds by_lq's infos; it stands for the holders when
        # each is the current info of its workload (always, but for a moment
        # inside a refile), else the sum is taken afresh. The check costs what
        # changed since the last (a LocalQueue may hold thousands, and its
        # status is written every instant it changes).
        infos = self.state.infos
        if held and self.state.snap.holders_current(key, infos):
            total = self.state.snap.lq_usage.get(key, {})
            waiting = self.state.snap.lq_unadmitted.get(key, {}).values()
            reserving = [i for i in waiting if not is_admitted(i.obj)]
        else:
            holders = [infos.get(k, i) for k, i in held.items()] if held else []
            total = _sum_usage(holders)
            reserving = [i for i in holders if not is_admitted(i.obj)]
        lq = self.state.queues.lqs.get(key)
        pending = 0
        if lq is not None and (lq.stopped or lq.cluster_queue in self.state.queues.cqs):
            # Kueue's PendingWorkloads: the LocalQueue's items (while it runs,
            # each is queued in its ClusterQueue, active or parked).
            pending = len(lq.items)
        stopped = (obj.spec.stop_policy or "None") != "None"
        cq_ok = (obj.spec.cluster_queue or "") in self.state.cq_objs
        active = cq_ok and not stopped
        if stopped:
            reason = "Stopped"
        elif not cq_ok:
            reason = "ClusterQueueDoesNotExist"
        else:
            st = self.state.snap.cqs.get(obj.spec.cluster_queue or "")
            up = st is not None and st.status_active()
            reason = "Ready" if up else "ClusterQueueIsInactive"
            active = active and up
        entry = self.state.afs.get(key) if self.state.afs is not None else None
        written = entry.status if entry is not None else None
        return LocalQueueView(
            key=key,
            usage=_flavor_usage(total, self.state.binary_resources),
            admitted_usage=_flavor_usage(_less(total, reserving), self.state.binary_resources),
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


def _delayed(adm: kt.Admission | None) -> dict[str, str] | None:
    """podSet -> delayedTopologyRequest, for the pod sets that have one."""
    if adm is None:
        return None
    out: dict[str, str] = {
        p.name: p.delayed_topology_request
        for p in adm.pod_set_assignments
        if p.delayed_topology_request is not None
    }
    return out or None


def _topology(adm: kt.Admission | None) -> dict[str, dict[str, int]] | None:
    """Each podSet's topology assignment as domain -> pods."""
    if adm is None:
        return None
    return {
        p.name: {",".join(v): c for v, c in domains_of(p.topology_assignment)}
        for p in adm.pod_set_assignments
        if p.topology_assignment is not None
    }
