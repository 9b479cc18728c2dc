"""What a run did, measured as it happens: per team (LocalQueue) admissions,
finishes, waits, borrowed GPU-hours and preemptions, and the cluster's GPU
utilization. Everything is tracked incrementally from informer events and
integrated over (virtual) time at each instant the manager settles."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kuota.api.conditions import true_since
from kuota.quota.requests import resource_value
from kuota.runtime.informer import key_of
from kuota.runtime.manager import Manager
from kuota.scheduler.admission.admission_core import AdmissionCore
from kuota.store.resources import NODE, POD, WORKLOAD

GPU = "nvidia.com/gpu"


@dataclass
class TeamStats:
    workloads: int = 0
    admitted: int = 0
    finished: int = 0
    waits: list[float] = field(default_factory=list)  # seconds, creation -> first admission
    preempted: int = 0
    borrowed_gpu_seconds: float = 0.0

    @property
    def mean_wait(self) -> float | None:
        return sum(self.waits) / len(self.waits) if self.waits else None

    @property
    def p95_wait(self) -> float | None:
        if not self.waits:
            return None
        s = sorted(self.waits)
        return s[min(len(s) - 1, math.ceil(0.95 * len(s)) - 1)]


def _gpus(pod: Any) -> int:
    total = 0
    for c in (pod.spec.containers if pod.spec else None) or ():
        q = ((c.resources.requests if c.resources else None) or {}).get(GPU)
        if q is not None:
            total += resource_value(GPU, q)
    return total


class Recorder:
    def __init__(self, mgr: Manager, core: AdmissionCore) -> None:
        self.mgr = mgr
        self.core = core
        self.teams: dict[str, TeamStats] = {}
        self._admitted: set[str] = set()
        self._finished: set[str] = set()
        self.running_gpus = 0
        self.gpu_capacity = 0
        self.gpu_seconds = 0.0
        self.capacity_seconds = 0.0
        self._borrowed_now: dict[str, int] = {}  # team -> GPUs borrowed right now
        self._running_then = 0  # running_gpus and gpu_capacity at the last sample
        self._capacity_then = 0
        self._last: datetime | None = None
        self.first: datetime | None = None
        mgr.informer(WORKLOAD).on_change(self._workload)
        mgr.informer(POD).on_change(self._pod)
        mgr.informer(NODE).on_change(self._node)

    def team(self, wl: Any) -> str:
        return f"{wl.metadata.namespace}/{wl.spec.queue_name or '-'}"

    def _workload(self, etype: str, wl: Any, old: Any | None) -> None:
        key = key_of(wl)
        t = self.teams.setdefault(self.team(wl), TeamStats())
        if etype == "ADDED":
            t.workloads += 1
        if key not in self._admitted:
            at = true_since(wl, "QuotaReserved")
            if at is not None:
                self._admitted.add(key)
                t.admitted += 1
                created = wl.metadata.creation_timestamp or at
                t.waits.append((at - created).total_seconds())
        if key not in self._finished and true_since(wl, "Finished") is not None:
            self._finished.add(key)
            t.finished += 1
        if etype == "DELETED" and key in self._finished:
            # A finished workload deleted never comes back (its job is done):
            # forget its key, so a long run's bookkeeping follows the live ones.
            self._admitted.discard(key)
            self._finished.discard(key)
        for c in (wl.status.conditions if wl.status else None) or ():
            if c.type == "Preempted" and c.status == "True":
                prev = [
                    x
                    for x in ((old.status.conditions if old and old.status else None) or ())
                    if x.type == "Preempted" and x.status == "True"
                ]
                if not prev or prev[0].last_transition_time != c.last_transition_time:
                    t.preempted += 1

    def _pod(self, etype: str, pod: Any, old: Any | None) -> None:
        was = old is not None and old.status is not None and old.status.phase == "Running"
        now = etype != "DELETED" and pod.status is not None and pod.status.phase == "Running"
        if was:
            self.running_gpus -= _gpus(old)
        if now:
            self.running_gpus += _gpus(pod)

    def _node(self, etype: str, node: Any, old: Any | None) -> None:
        def cap(n: Any) -> int:
            st = n.status
            alloc = (st.allocatable or st.capacity or {}) if st else {}
            q = alloc.get(GPU)
            return resource_value(GPU, q) if q is not None else 0

        if old is not None:
            self.gpu_capacity -= cap(old)
        if etype != "DELETED":
            self.gpu_capacity += cap(node)

    def sample(self) -> None:
        """Integrate the state that held since the last sample; call once per
        settled instant (Manager.run's on_round)."""
        now = self.mgr.clock.now()
        if self._last is not None:
            # What held since the last sample: the counts as they were then
            # (the events of this instant have already changed the live ones).
            dt = (now - self._last).total_seconds()
            self.gpu_seconds += self._running_then * dt
            self.capacity_seconds += self._capacity_then * dt
            for team, n in self._borrowed_now.items():
                self.teams.setdefault(team, TeamStats()).borrowed_gpu_seconds += n * dt
        else:
            self.first = now
        self._last = now
        self._running_then, self._capacity_then = self.running_gpus, self.gpu_capacity
        self._borrowed_now = self._borrowed()

    def _borrowed(self) -> dict[str, int]:
        """GPUs each team holds beyond its ClusterQueue's nominal quota, the
        ClusterQueue's borrowing shared among its teams by their usage."""
        out: dict[str, int] = {}
        tree = self.core.tree
        for name, node in tree.cqs.items():
            borrowed = 0
            for fr, used in node.usage.items():
                if fr[1] == GPU:
                    q = node.quotas.get(fr)
                    borrowed += max(0, used - (q.nominal if q is not None else 0))
            if borrowed <= 0:
                continue
            holders = self.core.snap.cqs[name].workloads.values()
            share: dict[str, int] = {}
            for info in holders:
                share[self.team(info.obj)] = share.get(self.team(info.obj), 0) + sum(
                    v for fr, v in info.usage().items() if fr[1] == GPU
                )
            total = sum(share.values()) or 1
            for team, used in share.items():
                out[team] = out.get(team, 0) + borrowed * used // total
        return out

    @property
    def utilization(self) -> float | None:
        return self.gpu_seconds / self.capacity_seconds if self.capacity_seconds else None
