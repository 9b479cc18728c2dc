"""The quota world a scheduling cycle works on: every ClusterQueue's settings,
the workloads holding quota, and the quota tree.

Kueue copies its cache into a snapshot each cycle. kuota works on the live
tree instead and undoes what a cycle only simulated (reservations for
preemptors, capacity held for unreclaimable preemption) when the cycle ends,
so a cycle costs what its heads touch, not the size of the world.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from operator import is_
from typing import Any, Final, NoReturn

from kuota.api.kueue.types import ClusterQueuePreemption, FlavorFungibility, ResourceFlavor
from kuota.quota.tree import (
    FR,
    ClusterQueueNode,
    QuotaTree,
    Usage,
    add_usage,
    remove_usage,
)
from kuota.quota.workload import WorkloadInfo, is_admitted


@dataclass(frozen=True, slots=True)
class ResourceGroup:
    covered: frozenset[str]
    flavors: tuple[str, ...]


@dataclass(slots=True)
class ClusterQueueState:
    name: str
    node: ClusterQueueNode
    resource_groups: tuple[ResourceGroup, ...] = ()
    preemption: ClusterQueuePreemption = field(default_factory=ClusterQueuePreemption)
    fungibility: FlavorFungibility = field(default_factory=FlavorFungibility)
    workloads: dict[str, WorkloadInfo] = field(default_factory=dict)  # quota holders
    # The summed usage of ``workloads``, kept with it (see Snapshot.lq_usage),
    # and those of them not admitted when they came (reserving only).
    held_usage: dict[FR, int] = field(default_factory=dict)
    unadmitted: dict[str, WorkloadInfo] = field(default_factory=dict)
    generation: int = 0  # Kueue's AllocatableResourceGeneration
    admission_checks: tuple[tuple[str, frozenset[str]], ...] = ()  # (check, onFlavors)
    active: bool = True
    inactive_reason: str = ""
    inactive_message: str = ""
    # The preemption search's ordering of ``workloads`` (search.py's
    # _holders_in_order), kept across cycles: the holders that came and went
    # since (the snapshot's add and remove) and those whose key changed in
    # place (their Evicted or QuotaReserved condition: Snapshot.rekey) are
    # logged in ``cand_log`` (True: joined, False: left; a what-if's take,
    # put and lift too) for the next search to apply, with ``cand_keys`` the
    # key each holder is filed under. ``cand_dups``: two keys are equal, so
    # the dict's order breaks the tie (and a put moves a holder to its end):
    # any change drops the list. ``cand_now``: the instant it read the clock
    # for (a holder without a reservation time): any change drops it.
    cand_order: list[Any] | None = None
    cand_dups: bool = False
    cand_now: Any = None
    cand_log: list[tuple[bool, WorkloadInfo]] = field(default_factory=list)
    cand_keys: dict[str, Any] = field(default_factory=dict)

    def cand_change(self, joined: bool, info: WorkloadInfo) -> None:
        """A holder joined or left ``workloads``: logged for the kept order."""
        order = self.cand_order
        if order is None:
            return
        log = self.cand_log
        if self.cand_dups or self.cand_now is not None or len(log) > len(order) + 64:
            self.cand_order = None  # rebuilt when next asked (as cheap, past that many)
            log.clear()
            return
        log.append((joined, info))

    def status_active(self) -> bool:
        """Active as its status says (Kueue's cache): a queue left out of
        scheduling because its cohort is in a cycle still reads Ready."""
        return self.active or self.inactive_reason == "CohortCycle"

    def rg_for(self, resource: str) -> ResourceGroup | None:
        for rg in self.resource_groups:
            if resource in rg.covered:
                return rg
        return None

    def covers_pods(self) -> bool:
        return self.rg_for("pods") is not None

    def checks_for(self, flavors: Iterable[str]) -> list[str]:
        fl = set(flavors)
        return [name for name, on in self.admission_checks if not on or on & fl]


@dataclass
class Snapshot:
    tree: QuotaTree
    cqs: dict[str, ClusterQueueState]
    flavors: dict[str, ResourceFlavor]
    # The CQ state of every workload holding quota, by workload key.
    holders: dict[str, ClusterQueueState] = field(default_factory=dict)
    # The quota holders of each LocalQueue ("namespace/name"), for its status
    # without a scan of every workload.
    by_lq: dict[str, dict[str, WorkloadInfo]] = field(default_factory=dict)
    _lq_of: dict[str, str] = field(default_factory=dict)
    # The summed usage of each LocalQueue's holders (by_lq), kept as they
    # come and go, so its status costs the not-yet-admitted holders, not all
    # of them (statuses are written after every instant).
    lq_usage: dict[str, dict[FR, int]] = field(default_factory=dict)
    # Per LocalQueue, its holders not admitted when they came. A holder's
    # Admitted condition only changes as the core files it again (removed
    # and added), so the others stay admitted while held.
    lq_unadmitted: dict[str, dict[str, WorkloadInfo]] = field(default_factory=dict)
    # For holders_current, per LocalQueue it has checked: the holders found
    # not current, and the workloads whose holding or current info
    # (AdmissionCore.infos, a CurrentInfos) changed since, so that a status
    # write looks again at what changed only. Off for good once a workload was
    # held in two LocalQueues at once (its queue name changed while held),
    # which the bookkeeping by queue cannot follow.
    _lq_stale: dict[str, set[str]] = field(default_factory=dict)
    _lq_dirty: dict[str, set[str]] = field(default_factory=dict)
    _lq_follow: bool = True

    def _lq_touch(self, lq: str, key: str) -> None:
        dirty = self._lq_dirty.get(lq)
        if dirty is None:
            return  # not checked yet (or forgotten): its next check looks at all
        dirty.add(key)
        if len(dirty) > 2 * len(self.by_lq.get(lq, ())) + 64:
            del self._lq_dirty[lq], self._lq_stale[lq]  # a full look is as cheap

    def info_changed(self, key: str) -> None:
        """The current info of workload ``key`` changed (see CurrentInfos)."""
        lq = self._lq_of.get(key)
        if lq is not None:
            self._lq_touch(lq, key)

    def holders_current(self, lq: str, infos: Mapping[str, WorkloadInfo]) -> bool:
        """Is every quota holder of the LocalQueue the current info of its
        workload (an absent one counts as current)?"""
        held = self.by_lq.get(lq)
        if not held:
            return True
        stale = self._lq_stale.get(lq) if self._lq_follow else None
        if stale is None:
            # Mapped in C: a LocalQueue may hold thousands.
            if all(map(is_, map(infos.get, held, held.values()), held.values())):
                stale = set()
            else:
                stale = {k for k, i in held.items() if infos.get(k, i) is not i}
            self._lq_stale[lq], self._lq_dirty[lq] = stale, set()
            return not stale
        dirty = self._lq_dirty[lq]
        for k in dirty:
            i = held.get(k)
            if i is not None and infos.get(k, i) is not i:
                stale.add(k)
            else:
                stale.discard(k)
        dirty.clear()
        return not stale

    def add_workload(self, info: WorkloadInfo, tree: bool = True) -> None:
        """``tree``: False when the quota tree already holds its usage (a
        holder filed again: remove_workload(..., tree=False) first)."""
        cq = self.cqs[info.cluster_queue or ""]
        old = cq.workloads.get(info.key)
        if old is not None:
            take_from(cq.held_usage, old.usage())
        cq.workloads[info.key] = info
        if old is not None:
            cq.cand_change(False, old)
        cq.cand_change(True, info)
        self.holders[info.key] = cq
        u = info.usage()
        if tree:
            add_usage(cq.node, u)
        sum_into(cq.held_usage, u)
        admitted = is_admitted(info.obj)
        if admitted:
            cq.unadmitted.pop(info.key, None)
        else:
            cq.unadmitted[info.key] = info
        lq = f"{info.namespace}/{info.queue_name}"
        was_in = self._lq_of.get(info.key)
        if was_in is not None and was_in != lq:
            self._lq_follow = False
        self._lq_of[info.key] = lq
        self._lq_touch(lq, info.key)
        held = self.by_lq.setdefault(lq, {})
        prev = held.get(info.key)
        if prev is not None:
            take_from(self.lq_usage.get(lq, {}), prev.usage())
        held[info.key] = info
        sum_into(self.lq_usage.setdefault(lq, {}), u)
        if admitted:
            self.lq_unadmitted.get(lq, {}).pop(info.key, None)
        else:
            self.lq_unadmitted.setdefault(lq, {})[info.key] = info

    def remove_workload(self, info: WorkloadInfo, tree: bool = True) -> None:
        """``tree``: False leaves its usage in the quota tree, for an
        add_workload(..., tree=False) of the same usage in the same queue
        right after (adding back what was removed leaves every node's usage
        as it was: the tree's arithmetic is exact)."""
        cq = self.holders.pop(info.key, None)
        if cq is None:
            return
        stored = cq.workloads.pop(info.key, None)
        if stored is not None:
            cq.cand_change(False, stored)
            take_from(cq.held_usage, stored.usage())
        cq.unadmitted.pop(info.key, None)
        if tree:
            remove_usage(cq.node, info.usage())
        lq = self._lq_of.pop(info.key, None)
        if lq is not None:
            self._lq_touch(lq, info.key)
        held = self.by_lq.get(lq) if lq is not None else None
        if held is not None:
            was = held.pop(info.key, None)
            if was is not None:
                take_from(self.lq_usage.get(lq, {}), was.usage())  # type: ignore[arg-type]
            self.lq_unadmitted.get(lq, {}).pop(info.key, None)  # type: ignore[arg-type]
            if not held:
                del self.by_lq[lq]  # type: ignore[arg-type]
                self.lq_usage.pop(lq, None)  # type: ignore[arg-type]
                self.lq_unadmitted.pop(lq, None)  # type: ignore[arg-type]

    def rekey(self, key: str) -> None:
        """What a quota holder's place among the preemption candidates reads
        (its Evicted or QuotaReserved condition) changed in place."""
        cq = self.holders.get(key)
        if cq is not None:
            info = cq.workloads.get(key)
            if info is not None:
                cq.cand_change(False, info)
                cq.cand_change(True, info)

    def simulate_removal(self, infos: Iterable[WorkloadInfo]) -> Callable[[], None]:
        """Remove the workloads' usage (only); the returned function puts it back."""
        done: list[tuple[ClusterQueueNode, Usage]] = []
        for w in infos:
            cq = self.holders.get(w.key)
            if cq is None:
                continue
            u = w.usage()
            remove_usage(cq.node, u)
            done.append((cq.node, u))

        def revert() -> None:
            for node, u in done:
                add_usage(node, u)

        return revert

    def take(self, info: WorkloadInfo) -> None:
        """remove_workload for a what-if that put() undoes before anything
        reads the status sums (the preemption search): the usage and the
        place among the preemption candidates only."""
        cq = self.holders.pop(info.key, None)
        if cq is None:
            return
        stored = cq.workloads.pop(info.key, None)
        if stored is not None:
            cq.cand_change(False, stored)
        remove_usage(cq.node, info.usage())

    def put(self, info: WorkloadInfo) -> None:
        """Undo take(): back last among its queue's holders, as a re-add."""
        cq = self.cqs[info.cluster_queue or ""]
        cq.workloads[info.key] = info
        cq.cand_change(True, info)
        self.holders[info.key] = cq
        add_usage(cq.node, info.usage())

    def lift(self, infos: Iterable[WorkloadInfo]) -> Callable[[], None]:
        """Take quota holders out for a what-if (Kueue's SimulateWorkloadRemoval):
        their usage and their places among the preemption candidates. The
        returned function puts them back, last among their queue's holders as
        a re-add would. Usage is taken out per queue at once (the tree's
        arithmetic is additive) and the status sums are left alone: nothing
        reads them before the put-back."""
        lifted: list[tuple[WorkloadInfo, ClusterQueueState]] = []
        per_cq: dict[str, tuple[ClusterQueueNode, dict[FR, int]]] = {}
        holders = self.holders
        for w in infos:
            cq = holders.pop(w.key, None)
            if cq is None:
                continue
            stored = cq.workloads.pop(w.key, None)
            if stored is not None:  # (searches run while they are out)
                cq.cand_change(False, stored)
            lifted.append((w, cq))
            acc = per_cq.get(cq.name)
            if acc is None:
                acc = per_cq[cq.name] = (cq.node, {})
            sum_into(acc[1], w.usage())
        for node, u in per_cq.values():
            remove_usage(node, u)

        def put_back() -> None:
            for node, u in per_cq.values():
                add_usage(node, u)
            for w, cq in lifted:
                cq.workloads[w.key] = w
                cq.cand_change(True, w)
                holders[w.key] = cq

        return put_back

    def cq_of(self, info: WorkloadInfo) -> ClusterQueueState | None:
        return self.holders.get(info.key)


def sum_into(acc: dict[FR, int], usage: Usage) -> None:
    for fr, v in usage.items():
        acc[fr] = acc.get(fr, 0) + v


def take_from(acc: dict[FR, int], usage: Usage) -> None:
    for fr, v in usage.items():
        left = acc.get(fr, 0) - v
        if left:
            acc[fr] = left
        else:
            del acc[fr]  # absent, as in a sum over the holders


_ABSENT: Final[Any] = object()


_DICT_SETITEM: Final = dict.__setitem__
_DICT_DELITEM: Final = dict.__delitem__
_DICT_POP: Final = dict.pop


class CurrentInfos(dict[str, WorkloadInfo]):
    """The admission core's current info of each workload (AdmissionCore.infos):
    a dict that tells the snapshot of every change, for holders_current. Only
    the writes the core makes are allowed (others would slip past)."""

    __slots__ = ("_snap",)

    def __init__(self, snap: Snapshot) -> None:
        super().__init__()
        self._snap = snap

    # dict's own methods, bound once: compiled, super() is a builtins lookup,
    # a super object and a method lookup at every write.
    def __setitem__(self, key: str, value: WorkloadInfo) -> None:
        _DICT_SETITEM(self, key, value)
        self._snap.info_changed(key)

    def __delitem__(self, key: str) -> None:
        _DICT_DELITEM(self, key)
        self._snap.info_changed(key)

    def pop(self, key: str, default: Any = _ABSENT) -> Any:  # type: ignore[override]
        self._snap.info_changed(key)
        if default is _ABSENT:
            return _DICT_POP(self, key)
        return _DICT_POP(self, key, default)

    # Methods, not aliases of one: a compiled (mypyc) class ignores aliases.
    def clear(self) -> None:
        _refused()

    def popitem(self) -> Any:
        _refused()

    def setdefault(self, *args: Any) -> Any:  # type: ignore[override]
        _refused()

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        _refused()

    def __ior__(self, other: Any) -> Any:  # type: ignore[override,misc]
        _refused()


def _refused() -> NoReturn:
    raise TypeError("CurrentInfos: only item assignment, del and pop are followed")
