"""A Workload as the admission core sees it: what each podSet requests (exact
integers in Kueue's units), the flavors it holds once reserved, its priority
and its place in the queue. Kueue's pkg/workload Info, restated."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any, Final

import msgspec

from kuota.api.conditions import condition_true, find_condition
from kuota.api.hooks import enc_hook
from kuota.api.kueue.types import Workload, WorkloadSpec
from kuota.quota.requests import RequestContext, podset_requests, resource_value
from kuota.quota.tree import FR, Usage

EPOCH: Final = datetime(1970, 1, 1).astimezone()


def has_closed_preemption_gate(wl: Workload) -> bool:
    """Kueue's HasClosedPreemptionGate: a gate of the spec that the status has
    no position for yet (so a workload can be created gated) or holds Closed."""
    gates = wl.spec.preemption_gates
    if not gates:
        return False
    st = wl.status
    positions = {g.name: g.position for g in (st.preemption_gates if st else None) or ()}
    return any(positions.get(g.name, "Closed") == "Closed" for g in gates)


def has_quota_reservation(wl: Workload) -> bool:
    return condition_true(wl, "QuotaReserved")


def is_admitted(wl: Workload) -> bool:
    return condition_true(wl, "Admitted")


def is_finished(wl: Workload) -> bool:
    return condition_true(wl, "Finished")


def is_evicted(wl: Workload) -> bool:
    return condition_true(wl, "Evicted")


def evicted_reason(wl: Workload) -> str | None:
    c = find_condition(wl, "Evicted")
    return c.reason if c is not None and c.status == "True" else None


@dataclass(slots=True, init=False)
class PodSetResources:
    name: str
    count: int
    requests: dict[str, int]  # total for the podSet: per pod × count
    flavors: dict[str, str] | None  # resource -> flavor, once assigned

    # A hand-written __init__ (init=False): compiled (mypyc), the one dataclasses
    # generates stays interpreted, and these are made in every cycle.
    def __init__(
        self,
        name: str,
        count: int,
        requests: dict[str, int],
        flavors: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.count = count
        self.requests = requests
        self.flavors = flavors

    def scaled_to(self, count: int) -> PodSetResources:
        if self.count == count:
            return PodSetResources(self.name, count, dict(self.requests), self.flavors)
        if self.count == 0:
            return PodSetResources(self.name, count, dict(self.requests), self.flavors)
        per = {r: v // self.count for r, v in self.requests.items()}
        return PodSetResources(
            self.name, count, {r: v * count for r, v in per.items()}, self.flavors
        )


class SpecPodSets:
    """What a workload's effective podSets were computed from (kept on its
    info by the admission core, see ``WorkloadInfo.spec_cache``). Read-only
    once made: the infos of one spec share it."""

    __slots__ = ("encodings", "gen", "podsets", "reclaimable", "spec")

    def __init__(
        self,
        spec: WorkloadSpec,
        gen: int,
        reclaimable: Mapping[str, int],
        podsets: list[PodSetResources],
        encodings: bytes | tuple[bytes, ...],
    ) -> None:
        self.spec = spec
        self.gen = gen  # the LimitRange/RuntimeClass generation
        self.reclaimable = reclaimable
        self.podsets = podsets
        # Its podSets' templates encoded: one, or one per podSet; the same
        # bytes object for the same encoding (what is kept per template keys
        # by it).
        self.encodings = encodings


# Scheduling hashes by _hash_key (a world has a few job shapes; forgotten at once).
_HASHES: Final[dict[tuple[Any, ...], bytes]] = {}
_HASHES_KEPT: Final = 10_000


class WorkloadInfo:
    """The admission core's record of one Workload."""

    __slots__ = (
        "_flavored",
        "_order",
        "_order_ev",
        "_scheduling_hash",
        "_usage",
        "cluster_queue",
        "held_from",
        "key",
        "last_assignment",
        "namespace",
        "obj",
        "podsets",
        "priority",
        "signature",
        "spec_cache",
    )

    def __init__(
        self,
        obj: Workload,
        podsets: list[PodSetResources],
        priority: int,
        cluster_queue: str | None = None,
        key: str | None = None,
    ) -> None:
        # ``key``: the caller's "namespace/name" string, shared, not rebuilt.
        m = obj.metadata
        self.key = key or f"{m.namespace}/{m.name}"
        # Read at every filing, queueing and nomination; a workload's
        # namespace never changes (a plain attribute: compiled, a struct
        # field read is a generic attribute lookup).
        self.namespace: str = m.namespace
        self.obj = obj
        self.podsets = podsets
        self.priority = priority
        self.cluster_queue = cluster_queue
        self.last_assignment: object | None = None
        self.signature = _signature(obj)
        self._scheduling_hash: bytes | None = None
        self._order: tuple[int, datetime, str] | None = None
        self._order_ev = -1  # the ordering ``_order`` was made for
        self._usage: Usage | None = None
        self._flavored: frozenset[FR] | None = None
        # Whoever computed ``podsets`` from the spec may keep what they were
        # computed from here, to reuse them for the next info of the same spec
        # (a field, not a side table: nothing to forget, no per-key entry).
        self.spec_cache: SpecPodSets | None = None
        # An admitted info's podSets were worked out of these objects (the
        # admission, spec and reclaimable pods): kept so that the next info
        # of the same ones shares them (InfoFactory.build_info).
        self.held_from: tuple[object, object, object] | None = None

    @property
    def min_counts(self) -> list[int | None]:
        return [ps.min_count for ps in self.obj.spec.pod_sets]

    def order_key(self, ordering: int) -> tuple[int, datetime, str]:
        """Where the workload ranks in its queue: (-priority, queue-order
        timestamp, UID). Kept: a queued workload is re-pushed at every wake,
        and what the key reads (priority, the Evicted condition, creation) only
        changes with the workload's object, which the core then files again
        as a new info."""
        o = self._order
        if o is None or self._order_ev != ordering:
            o = (-self.priority, queue_order_timestamp(self.obj, ordering), self.uid)
            self._order, self._order_ev = o, ordering
        return o

    def keep_scheduling_hash(self, prev: WorkloadInfo) -> None:
        """Take ``prev``'s scheduling hash if it is sure to be this one's: the
        same spec object, the same podSets list and priority (a workload is
        filed again as a new info at every status write)."""
        if (
            prev._scheduling_hash is not None
            and prev.obj.spec is self.obj.spec
            and prev.podsets is self.podsets
            and prev.priority == self.priority
        ):
            self._scheduling_hash = prev._scheduling_hash

    @property
    def scheduling_hash(self) -> bytes:
        """Kueue's scheduling equivalence class (computeSchedulingHash): the
        effective priority and, per podSet, its name, the pod spec's shape
        (requests and ports of every container, nodeSelector, affinity,
        tolerations, runtimeClass, priority, spread constraints, overhead,
        claims, pod-level requests), the effective count and requests,
        minCount and topology request. Two workloads with the same one fail
        to fit alike."""
        h = self._scheduling_hash
        if h is None:
            key = self._hash_key()
            if key is not None:
                h = _HASHES.get(key)
            if h is None:
                h = self._compute_scheduling_hash()
                if key is not None:
                    if len(_HASHES) >= _HASHES_KEPT:
                        _HASHES.clear()
                    _HASHES[key] = h
            self._scheduling_hash = h
        return h

    def _hash_key(self) -> tuple[Any, ...] | None:
        """Every input of the scheduling hash, with each podSet's template
        as the encoding its spec cache keeps (its pod spec: the hash reads
        nothing else of the template): the workloads of one job shape share
        a hash, worked out once. None
        when there is no such encoding for this very spec and podSets, or a
        podSet has a topology request."""
        sc = self.spec_cache
        if sc is None or sc.spec is not self.obj.spec or sc.podsets is not self.podsets:
            return None
        pod_sets = sc.spec.pod_sets
        encs = sc.encodings
        if type(encs) is bytes:
            if len(pod_sets) != 1:
                return None
            encs = (encs,)
        if len(encs) != len(pod_sets) or len(self.podsets) != len(pod_sets):
            return None
        parts: list[Any] = [self.priority]
        for i, ps in enumerate(pod_sets):
            if ps.topology_request is not None:
                return None
            eff = self.podsets[i]
            parts.append(
                (ps.name, encs[i], eff.count, tuple(sorted(eff.requests.items())), ps.min_count)
            )
        return tuple(parts)

    def _compute_scheduling_hash(self) -> bytes:
        shapes = []
        for i, ps in enumerate(self.obj.spec.pod_sets):
            eff = self.podsets[i] if i < len(self.podsets) else None
            spec = ps.template.spec
            shapes.append(
                (
                    ps.name,
                    _spec_shape(spec) if spec is not None else None,
                    eff.count if eff is not None else ps.count,
                    sorted(eff.requests.items()) if eff is not None else None,
                    ps.min_count,
                    ps.topology_request,
                )
            )
        # A 128-bit digest of it: kept per queued workload, the encoded
        # shape itself runs to hundreds of bytes.
        enc = msgspec.json.encode((self.priority, shapes), enc_hook=enc_hook)
        return hashlib.blake2b(enc, digest_size=16).digest()

    @property
    def uid(self) -> str:
        return self.obj.metadata.uid

    @property
    def creation(self) -> datetime:
        return self.obj.metadata.creation_timestamp or EPOCH

    @property
    def queue_name(self) -> str:
        return self.obj.spec.queue_name or ""

    def usage(self) -> Usage:
        """What a quota-reserving workload holds, per (flavor, resource).
        Computed once (an info's podSets never change; the quota bookkeeping
        asks at every add, removal and simulated removal): read it, never
        change it."""
        if self._usage is not None:
            return self._usage
        out: Usage = {}
        for ps in self.podsets:
            if not ps.flavors:
                continue
            for r, v in ps.requests.items():
                f = ps.flavors.get(r)
                if f is None or not v:
                    continue
                fr: FR = (f, r)
                out[fr] = out.get(fr, 0) + v
        self._usage = out
        return out

    def uses_any(self, frs: frozenset[FR] | set[FR]) -> bool:
        """Kueue's workloadUsesResources: a flavor assigned to any of frs
        (a zero request counts). Asked of every holder a preemption search
        meets: the assigned pairs are kept (podSets never change)."""
        mine = self._flavored
        if mine is None:
            mine = self._flavored = frozenset(
                (f, r) for ps in self.podsets if ps.flavors for r, f in ps.flavors.items()
            )
        return not mine.isdisjoint(frs)

    def can_be_partially_admitted(self) -> bool:
        return any(
            mc is not None and mc < ps.count
            for mc, ps in zip(self.min_counts, self.obj.spec.pod_sets, strict=False)
        )

    def __repr__(self) -> str:
        return f"WorkloadInfo({self.key})"


def _signature(wl: Workload) -> tuple[object, ...]:
    """What decides whether an update lets a parked workload compete again
    (Kueue's PushOrUpdate), captured when the record is built: the workload
    object is updated in place, so it cannot be compared later."""
    st = wl.status
    gated = has_closed_preemption_gate(wl)  # (opening a gate lets it compete again)
    active = wl.spec.active
    if st is None:
        return (None, None, (), active, gated)
    evicted = requeued = None
    for c in st.conditions or ():
        t = c.type
        if t == "Evicted" and evicted is None:
            evicted = (c.status, c.reason, c.message, c.last_transition_time)
        elif t == "Requeued" and requeued is None:
            requeued = (c.status, c.reason, c.message, c.last_transition_time)
    pods = st.reclaimable_pods
    rec = tuple((r.name, r.count) for r in pods) if pods else ()
    return (evicted, requeued, rec, active, gated)


NO_RECLAIMABLE: Final[Mapping[str, int]] = MappingProxyType({})


def reclaimable_counts(wl: Workload) -> Mapping[str, int]:
    st = wl.status
    if st is None or not st.reclaimable_pods:
        return NO_RECLAIMABLE  # shared: kept per workload by the core
    return {rp.name: rp.count for rp in st.reclaimable_pods}


def podsets_from_spec(
    wl: Workload,
    ctx: RequestContext,
    reclaimable: Mapping[str, int] | None = None,
    per_pod: Sequence[Mapping[str, int]] | None = None,
) -> list[PodSetResources]:
    """The podSets' total requests; ``per_pod`` (one pod's requests of each
    podSet, in order) may stand in for podset_requests with ctx, e.g. from a
    cache of it."""
    out = []
    rec = reclaimable or {}
    for i, ps in enumerate(wl.spec.pod_sets):
        per_pod_req = per_pod[i] if per_pod is not None else podset_requests(ps, ctx)
        count = max(0, ps.count - rec.get(ps.name, 0))
        if count == 1 and isinstance(per_pod_req, dict):
            total = per_pod_req  # shared (with a cache of it): requests are never changed in place
        else:
            total = {r: v * count for r, v in per_pod_req.items()}
        out.append(PodSetResources(ps.name, count, total))
    return out


def podsets_from_admission(wl: Workload, rec: Mapping[str, int]) -> list[PodSetResources]:
    """``rec``: the reclaimable pods in force (reclaimable_counts, or none
    with the ReclaimablePods gate off)."""
    assert wl.status is not None and wl.status.admission is not None
    spec_counts = {ps.name: ps.count for ps in wl.spec.pod_sets}
    out = []
    for psa in wl.status.admission.pod_set_assignments:
        count = psa.count if psa.count is not None else spec_counts.get(psa.name, 0)
        reqs = {r: resource_value(r, q) for r, q in (psa.resource_usage or {}).items()}
        res = PodSetResources(psa.name, count, reqs, dict(psa.flavors or {}))
        out.append(held_part(res, spec_counts.get(psa.name, 0), rec.get(psa.name, 0)))
    return out


def held_part(res: PodSetResources, spec_count: int, reclaimable: int) -> PodSetResources:
    """What an admitted podSet holds (Kueue's totalRequestsFromAdmission): the
    admitted pods, but no more than the spec's count less its reclaimable pods
    (a scale-down in place, pods that finished); a partially admitted podSet
    keeps its admitted count."""
    after = spec_count - min(reclaimable, spec_count)
    return res.scaled_to(after) if after < res.count else res


# How queues order workloads (Kueue's Ordering), as bits of one int that is
# passed along and compared: the PodsReady requeuing timestamp is the
# eviction's; PrioritySortingWithinCohort is off.
ORDER_EVICTION_TS: Final = 1
ORDER_NO_PRIORITY_SORTING: Final = 2
_ONE_MS: Final = timedelta(milliseconds=1)


def queue_order_timestamp(wl: Workload, ordering: int) -> datetime:
    """Kueue's Ordering.GetQueueOrderTimestamp."""
    c = find_condition(wl, "Evicted")
    if c is not None and c.status == "True" and c.last_transition_time is not None:
        if c.reason == "PodsReadyTimeout" and ordering & ORDER_EVICTION_TS:
            return c.last_transition_time
        if c.reason == "AdmissionCheck":
            return c.last_transition_time
    if ordering & ORDER_NO_PRIORITY_SORTING:
        # Reclaimed while borrowing: behind the workload that reclaimed it.
        p = find_condition(wl, "Preempted")
        if (
            p is not None
            and p.status == "True"
            and p.reason == "InCohortReclaimWhileBorrowing"
            and p.last_transition_time is not None
        ):
            return p.last_transition_time + _ONE_MS
    return wl.metadata.creation_timestamp or EPOCH


def quota_reservation_time(wl: Workload, now: datetime) -> datetime:
    c = find_condition(wl, "QuotaReserved")
    if c is None or c.status != "True" or c.last_transition_time is None:
        return now
    return c.last_transition_time


def _spec_shape(spec: Any) -> tuple[Any, ...]:
    """Kueue's utilpod.SpecShape: what of a pod spec decides where it may run."""

    def containers(cs: Any) -> list[Any]:
        return [
            (c.resources.requests if c.resources is not None else None, c.ports) for c in cs or ()
        ]

    return (
        containers(spec.init_containers),
        containers(spec.containers),
        spec.node_selector,
        spec.affinity,
        spec.tolerations,
        spec.runtime_class_name,
        spec.priority,
        spec.topology_spread_constraints,
        spec.overhead,
        spec.resource_claims,
        spec.resources.requests if spec.resources is not None else None,
    )
