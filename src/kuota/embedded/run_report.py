"""What a run did, measured as it happens: per team (LocalQueue) admissions,
finishes, waits, borrowed GPU-hours and preemptions, and the cluster's GPU
utilization. Everything is tracked incrementally from informer events and
integrated over (virtual) time at each instant the manager settles."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kuota.api.conditions import find_condition, true_since
from kuota.quota.requests import resource_value
from kuota.runtime.informer import key_of
from kuota.runtime.manager import Manager
from kuota.scheduler.admission.admission_core import AdmissionCore
from kuota.store.resources import NODE, POD, WORKLOAD

GPU = "nvidia.com/gpu"
REPORT_META = "run-report"  # what a kept run measured so far, for its resumption


@dataclass
class TeamStats:
    workloads: int = 0
    admitted: int = 0
    finished: int = 0
    waits: list[float] = field(default_factory=list)  # seconds, creation -> first admission
    preempted: int = 0
    borrowed_gpu_seconds: float = 0.0
    evictions: dict[str, int] = field(default_factory=dict)  # Evicted=True reason -> count

    @property
    def mean_wait(self) -> float | None:
        return sum(self.waits) / len(self.waits) if self.waits else None

    @property
    def p95_wait(self) -> float | None:
        if not self.waits:
            return None
        s = sorted(self.waits)
        return s[min(len(s) - 1, math.ceil(0.95 * len(s)) - 1)]


@dataclass
class _Seen:
    """What was counted of one workload: each condition transition is
    counted once, also when a resumed run lists the workload again."""

    team: str
    admitted: bool = False
    finished: bool = False
    reserved_at: str | None = None  # lastTransitionTime of the QuotaReserved=True counted
    evicted_at: str | None = None  # of the Evicted=True counted
    preempted_at: str | None = None  # of the Preempted=True counted


def _gpus(pod: Any) -> int:
    total = 0
    for c in (pod.spec.containers if pod.spec else None) or ():
        q = ((c.resources.requests if c.resources else None) or {}).get(GPU)
        if q is not None:
            total += resource_value(GPU, q)
    return total


def _new_transition(wl: Any, ctype: str, counted: str | None) -> tuple[str, str] | None:
    """(lastTransitionTime, reason) of the condition when it is True and
    that transition was not counted yet."""
    c = find_condition(wl, ctype)
    if c is None or c.status != "True" or c.last_transition_time is None:
        return None
    at = c.last_transition_time.isoformat()
    return None if at == counted else (at, c.reason or "")


class Recorder:
    """``keep``: the store of a kept state; the report's history is saved in
    it (``save``) and a resumed run goes on from it, so the report is the
    run's, not the last segment's."""

    def __init__(self, mgr: Manager, core: AdmissionCore, keep: Any | None = None) -> None:
        self.mgr = mgr
        self.core = core
        self.keep = keep
        self.teams: dict[str, TeamStats] = {}
        self._seen: dict[str, _Seen] = {}
        self.admissions = 0  # quota reservations, re-admissions after an eviction too
        self.running_gpus = 0
        self.gpu_capacity = 0
        self.gpu_seconds = 0.0
        self.capacity_seconds = 0.0
        self._borrowed_now: dict[str, int] = {}  # team -> GPUs borrowed right now
        self._running_then = 0  # running_gpus and gpu_capacity at the last sample
        self._capacity_then = 0
        self._last: datetime | None = None
        self.first: datetime | None = None
        if keep is not None:
            self._restore(keep.get_meta(REPORT_META))
        mgr.informer(WORKLOAD).on_change(self._workload)
        mgr.informer(POD).on_change(self._pod)
        mgr.informer(NODE).on_change(self._node)

    def seed(self) -> None:
        """Count what the informers already hold: a started manager has listed
        a resumed run's kept objects before this recorder was made."""
        for rtype, handler in ((WORKLOAD, self._workload), (POD, self._pod), (NODE, self._node)):
            for obj in list(self.mgr.informer(rtype).objects.values()):
                handler("ADDED", obj, None)

    def team(self, wl: Any) -> str:
        return f"{wl.metadata.namespace}/{wl.spec.queue_name or '-'}"

    @property
    def preemptions(self) -> int:
        return sum(t.preempted for t in self.teams.values())

    @property
    def evictions(self) -> dict[str, int]:
        """Evictions by the Evicted condition's reason, over every team."""
        out: dict[str, int] = {}
        for t in self.teams.values():
            for reason, n in t.evictions.items():
                out[reason] = out.get(reason, 0) + n
        return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))

    def _workload(self, etype: str, wl: Any, old: Any | None) -> None:
        key = key_of(wl)
        seen = self._seen.get(key)
        if seen is None:
            seen = self._seen[key] = _Seen(self.team(wl))
            self.teams.setdefault(seen.team, TeamStats()).workloads += 1
        t = self.teams.setdefault(seen.team, TeamStats())
        reserved = _new_transition(wl, "QuotaReserved", seen.reserved_at)
        if reserved is not None:
            seen.reserved_at = reserved[0]
            self.admissions += 1
            if not seen.admitted:
                seen.admitted = True
                t.admitted += 1
                at = datetime.fromisoformat(reserved[0])
                created = wl.metadata.creation_timestamp or at
                t.waits.append((at - created).total_seconds())
        if not seen.finished and true_since(wl, "Finished") is not None:
            seen.finished = True
            t.finished += 1
        evicted = _new_transition(wl, "Evicted", seen.evicted_at)
        if evicted is not None:
            seen.evicted_at = evicted[0]
            t.evictions[evicted[1]] = t.evictions.get(evicted[1], 0) + 1
        preempted = _new_transition(wl, "Preempted", seen.preempted_at)
        if preempted is not None:
            seen.preempted_at = preempted[0]
            t.preempted += 1
        if etype == "DELETED" and seen.finished:
            # A finished workload deleted never comes back (its job is done):
            # forget it, so a long run's bookkeeping follows the live ones.
            del self._seen[key]

    # ------------------------------------------------------------ keeping
    def save(self) -> None:
        """Keep what was measured with the state (a resumed run goes on
        from it); call when the run stops, after the last ``sample``."""
        if self.keep is None:
            return
        self.keep.set_meta(
            REPORT_META,
            {
                "version": 1,
                "first": self.first.isoformat() if self.first else None,
                "last": self._last.isoformat() if self._last else None,
                "gpuSeconds": self.gpu_seconds,
                "capacitySeconds": self.capacity_seconds,
                "admissions": self.admissions,
                "teams": {
                    name: {
                        "workloads": t.workloads,
                        "admitted": t.admitted,
                        "finished": t.finished,
                        "waits": t.waits,
                        "preempted": t.preempted,
                        "borrowedGPUSeconds": t.borrowed_gpu_seconds,
                        "evictions": t.evictions,
                    }
                    for name, t in sorted(self.teams.items())
                },
                "workloads": {
                    key: [
                        s.team,
                        s.admitted,
                        s.finished,
                        s.reserved_at,
                        s.evicted_at,
                        s.preempted_at,
                    ]
                    for key, s in sorted(self._seen.items())
                },
            },
        )

    def _restore(self, kept: Any) -> None:
        if not isinstance(kept, dict) or kept.get("version") != 1:
            return  # a state kept before reports were: measured from here on
        self.first = datetime.fromisoformat(kept["first"]) if kept["first"] else None
        self._last = datetime.fromisoformat(kept["last"]) if kept["last"] else None
        self.gpu_seconds = kept["gpuSeconds"]
        self.capacity_seconds = kept["capacitySeconds"]
        self.admissions = kept["admissions"]
        for name, t in kept["teams"].items():
            self.teams[name] = TeamStats(
                t["workloads"],
                t["admitted"],
                t["finished"],
                list(t["waits"]),
                t["preempted"],
                t["borrowedGPUSeconds"],
                dict(t["evictions"]),
            )
        for key, (team, admitted, finished, reserved, evicted, preempted) in kept[
            "workloads"
        ].items():
            self._seen[key] = _Seen(team, admitted, finished, reserved, evicted, preempted)

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
