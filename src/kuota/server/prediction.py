"""Would this job be admitted now, and if not, when? (``kuota predict``)

The job is created in a fork of the current state (``embedded.fork``): the
fork's present says whether it is admitted now and in which flavors, or its
one-line reason and its positions in its queues as Kueue's visibility API
gives them (0-based); the fork run forward in virtual time says when it
would be admitted (``estimated_start``; None when it never is).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from kuota.api.conditions import find_condition
from kuota.embedded.fork import ExpectedEnd, Fork, forward, settle
from kuota.server.visibility import pending_workloads
from kuota.store import NotFound, StoreError
from kuota.store.kinds import rtype_of
from kuota.store.resources import LOCAL_QUEUE, WORKLOAD


class CannotPredict(Exception):
    """The job cannot be tried (refused, not managed by Kueue)."""


@dataclass
class Prediction:
    workload: str  # namespace/name of the job's Workload
    now: datetime
    admitted_now: bool
    flavors: dict[str, dict[str, str]]  # podSet -> resource -> flavor
    reason: str | None
    cluster_queue: str | None
    local_queue: str | None
    position_in_cluster_queue: int | None
    position_in_local_queue: int | None
    estimated_start: datetime | None
    ends: list[ExpectedEnd] = field(default_factory=list)

    @property
    def flavor(self) -> str | None:
        """The flavor it is admitted in (several joined by ",")."""
        names = sorted({f for fl in self.flavors.values() for f in fl.values()})
        return ",".join(names) or None

    def basis(self) -> dict[str, int]:
        """How many workloads' expected ends each rule gave (the estimate
        rests on them): declared duration, maximum execution time, median of
        finished, unknown."""
        out: dict[str, int] = {}
        for e in self.ends:
            out[e.source] = out.get(e.source, 0) + 1
        return out

    def to_json(self) -> dict[str, Any]:
        def stamp(t: datetime | None) -> str | None:
            return t.isoformat().replace("+00:00", "Z") if t is not None else None

        return {
            "workload": self.workload,
            "now": stamp(self.now),
            "admitted_now": self.admitted_now,
            "flavor": self.flavor,
            "flavors": self.flavors,
            "reason": self.reason,
            "cluster_queue": self.cluster_queue,
            "local_queue": self.local_queue,
            "position_in_cluster_queue": self.position_in_cluster_queue,
            "position_in_local_queue": self.position_in_local_queue,
            "estimated_start": stamp(self.estimated_start),
            "basis": self.basis(),
            "expected_ends": [
                {"workload": e.workload, "source": e.source, "seconds": e.seconds}
                | ({"samples": e.samples} if e.samples else {})
                for e in self.ends
            ],
        }


def _admitted_at(wl: Any) -> datetime | None:
    c = find_condition(wl, "Admitted")
    return c.last_transition_time if c is not None and c.status == "True" else None


def _workload_of(fork: Fork, job: Any) -> Any:
    cp = fork.cp
    m = job.metadata
    try:
        stored = cp.store.get(rtype_of(job), m.namespace, m.name)
    except NotFound:
        raise CannotPredict(f"{job.kind} {m.namespace}/{m.name} was not created") from None
    uid = stored.metadata.uid
    # A pod's Workload is owned by the pod; a Job's by the Job.
    for wl in cp.store.list(WORKLOAD, m.namespace).items:
        if any(r.uid == uid for r in wl.metadata.owner_references or []):
            return wl
    raise CannotPredict(
        f"{job.kind} {m.namespace}/{m.name}: Kueue makes no Workload for it"
        " (no kueue.x-k8s.io/queue-name label, and no default LocalQueue in its namespace)"
    )


def _flavors(wl: Any) -> dict[str, dict[str, str]]:
    adm = wl.status.admission if wl.status is not None else None
    if adm is None:
        return {}
    return {a.name: dict(a.flavors or {}) for a in adm.pod_set_assignments}


def _positions(fork: Fork, wl: Any) -> tuple[str | None, int | None, int | None]:
    cp, m = fork.cp, wl.metadata
    try:
        lq = cp.store.get(LOCAL_QUEUE, m.namespace, wl.spec.queue_name or "")
    except NotFound:
        return None, None, None
    cq = lq.spec.cluster_queue or ""
    if cq not in cp.kueue.core.state.cq_objs:
        return cq, None, None
    summary = pending_workloads(
        cp, "v1beta1", "clusterqueues", "", cq, "pendingworkloads", {"limit": "1000000"}
    )
    for item in summary["items"]:
        if item["metadata"]["name"] == m.name and item["metadata"]["namespace"] == m.namespace:
            return cq, item["positionInClusterQueue"], item["positionInLocalQueue"]
    return cq, None, None


def predict(fork: Fork, job: Any, horizon: timedelta | None = None) -> Prediction:
    """Create ``job`` (a decoded object, e.g. a batch/v1 Job) in the fork now
    and predict its admission. The fork is used up."""
    cp = fork.cp
    settle(cp)
    now = cp.clock.now()
    job.metadata.creation_timestamp = None  # created now, whatever the file says
    m = job.metadata
    if m.name:
        try:
            cp.store.get(rtype_of(job), m.namespace or "", m.name)
        except NotFound:
            pass
        else:
            # Submitting it would fail as a create does (the fork's submit
            # would keep the existing one and predict that instead).
            raise CannotPredict(
                f"{job.kind} {m.namespace}/{m.name} already exists: submitting it would fail;"
                " give it another name (or metadata.generateName)"
            )
    before = len(cp.refused)
    try:
        cp.submit([job])
    except StoreError as err:
        raise CannotPredict(str(err)) from None
    if len(cp.refused) > before:
        raise CannotPredict(str(cp.refused[-1].error))
    settle(cp)
    wl = _workload_of(fork, job)
    key = f"{wl.metadata.namespace}/{wl.metadata.name}"
    wl = cp.store.get(WORKLOAD, wl.metadata.namespace, wl.metadata.name)
    at = _admitted_at(wl)
    if at is not None:
        return Prediction(
            key,
            now,
            True,
            _flavors(wl),
            None,
            *_positions_none(fork, wl),
            None,
            None,
            at,
            fork.ends,
        )
    reason = cp.kueue.core.explain(key)
    cq, pos_cq, pos_lq = _positions(fork, wl)

    def admitted() -> bool:
        cur = cp.store.get(WORKLOAD, wl.metadata.namespace, wl.metadata.name)
        return _admitted_at(cur) is not None

    forward(cp, admitted, horizon)
    try:
        cur = cp.store.get(WORKLOAD, wl.metadata.namespace, wl.metadata.name)
    except NotFound:
        cur = None
    start = _admitted_at(cur) if cur is not None else None
    return Prediction(
        key, now, False, {}, reason, cq, wl.spec.queue_name, pos_cq, pos_lq, start, fork.ends
    )


def _positions_none(fork: Fork, wl: Any) -> tuple[str | None, str | None]:
    """An admitted workload's queues (it has no position: nothing is pending)."""
    adm = wl.status.admission if wl.status is not None else None
    return (adm.cluster_queue if adm is not None else None), wl.spec.queue_name
