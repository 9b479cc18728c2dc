"""A run that only repeats itself: found, so that it stops and says why.

A workload whose pods can never all be placed, under waitForPodsReady with
unlimited requeues (Kueue's default ``backoffLimitCount``), is admitted,
evicted at its PodsReady timeout, requeued after its backoff and admitted
again, for ever, as it would be in a cluster. Timers never run out, so a
virtual-time run would never end. The decisions stay Kueue's; this watches
for a run in which nothing new happens any more.

"New state", precisely: the run's *progress* is the set of Workloads that
exist, the set of those Finished, and the set of those admitted that were
never evicted. A Workload *cycles* when it was evicted at least twice within
the horizon. The run repeats itself when, for a whole horizon of virtual
time, its progress has not changed, some Workload cycles, no object of the
world is still to arrive, and no pod outside the cycling Workloads' is
running towards an end (a long job still to finish is progress to come).
The horizon is a day, or ten of the longest PodsReady rounds (timeout plus
the maximum requeue backoff) when that is longer: many requeue periods.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from kuota.api.conditions import find as find_condition
from kuota.api.kueue.config import KueueConfig
from kuota.runtime.informer import key_of
from kuota.runtime.manager import Manager
from kuota.store.resources import NODE, POD, WORKLOAD

MIN_HORIZON = timedelta(days=1)
ROUNDS = 10  # PodsReady rounds (timeout + maximum backoff) in a horizon


def horizon_of(config: KueueConfig) -> timedelta:
    w = config.wait_for_pods_ready
    if w is None:
        return MIN_HORIZON
    rnd = w.timeout + timedelta(seconds=w.requeuing_strategy.backoff_max_seconds)
    return max(MIN_HORIZON, ROUNDS * rnd)


@dataclass
class Cycler:
    """A workload seen evicted again and again, and what it was told."""

    key: str
    evictions: list[datetime] = field(default_factory=list)
    reason: str = ""
    message: str = ""
    unplaced: dict[str, str] = field(default_factory=dict)  # why -> the last pod told so


class RepetitionDetector:
    """Fed by the Workload and Pod informers; asked at every settled instant."""

    def __init__(
        self,
        mgr: Manager,
        horizon: timedelta,
        arrivals_pending: Callable[[], bool],
        pod_end: Callable[[Any], datetime | None],
    ) -> None:
        self.mgr = mgr
        self.horizon = horizon
        self._arrivals_pending = arrivals_pending
        self._pod_end = pod_end  # when a running pod's run ends (None: never)
        self._wls = mgr.informer(WORKLOAD)
        self._pods = mgr.informer(POD)
        self._nodes = mgr.informer(NODE)
        self._wls.on_change(self._on_workload)
        self._pods.on_change(self._on_pod)
        self._seen: dict[str, Cycler] = {}
        self._owner: dict[str, str] = {}  # owner (job) uid -> workload key
        self._since: datetime | None = None  # when the progress last changed
        self._evicted_once: set[str] = set()

    # ------------------------------------------------------------ watching
    def _on_workload(self, etype: str, wl: Any, old: Any | None) -> None:
        key = key_of(wl)
        now = self.mgr.clock.now()
        if etype == "DELETED" or old is None:
            self._since = now  # a Workload more or less: progress
            if etype == "DELETED":
                return
        for ref in wl.metadata.owner_references or ():
            self._owner[ref.uid] = key
        conds = wl.status.conditions if wl.status else None
        before = old.status.conditions if old is not None and old.status else None
        if _became_true(conds, before, "Finished"):
            self._since = now
        if key not in self._evicted_once and _became_true(conds, before, "Admitted"):
            self._since = now  # admitted, never evicted before
        ev = find_condition(conds, "Evicted")
        if ev is None or ev.status != "True":
            return
        was = find_condition(before, "Evicted")
        if (
            was is not None
            and was.status == "True"
            and was.last_transition_time == ev.last_transition_time
        ):
            return  # the same eviction, seen again
        if key not in self._evicted_once:
            self._evicted_once.add(key)
            self._since = now  # an admitted one is no longer progress
        c = self._seen.setdefault(key, Cycler(key))
        c.evictions.append(now)
        c.reason, c.message = ev.reason or "", ev.message or ""

    def _on_pod(self, etype: str, pod: Any, old: Any | None) -> None:
        if etype == "DELETED":
            return
        sched = find_condition(pod.status.conditions if pod.status else None, "PodScheduled")
        if sched is None or sched.status != "False" or sched.reason != "Unschedulable":
            return
        for ref in pod.metadata.owner_references or ():
            key = self._owner.get(ref.uid)
            if key is not None:
                c = self._seen.setdefault(key, Cycler(key))
                why = sched.message or "Unschedulable"
                c.unplaced.pop(why, None)  # (the newest last)
                c.unplaced[why] = pod.metadata.name

    # ------------------------------------------------------------ deciding
    def cycling(self) -> list[Cycler]:
        """The workloads evicted at least twice within the horizon."""
        since = self.mgr.clock.now() - self.horizon
        out = []
        for key in sorted(self._seen):
            c = self._seen[key]
            if len([t for t in c.evictions if t >= since]) >= 2 and key in self._wls.objects:
                out.append(c)
        return out

    def repeating(self) -> bool:
        """Called when an instant has settled: True once the run only repeats itself."""
        now = self.mgr.clock.now()
        if self._since is None:
            self._since = now
        if now - self._since < self.horizon or self._arrivals_pending():
            return False  # (the cheap test at every instant; the rest rarely)
        cyclers = self.cycling()
        if not cyclers:
            return False
        owners = {
            ref.uid
            for c in cyclers
            for ref in (self._wls.objects[c.key].metadata.owner_references or ())
        }
        for pod in self._pods.objects.values():
            refs = {r.uid for r in pod.metadata.owner_references or ()}
            if refs & owners or pod.status is None or pod.status.phase != "Running":
                continue
            end = self._pod_end(pod)
            if end is not None and end > now:
                return False  # a run still to end: progress to come
        return True

    def explain(self) -> list[str]:
        """Which workloads cycle and why, one block each."""
        lines = []
        for c in self.cycling():
            n = len([t for t in c.evictions if t >= self.mgr.clock.now() - self.horizon])
            lines.append(
                f"  {c.key}: evicted {n} times in the last {_fmt(self.horizon)}"
                f" ({c.reason}: {c.message})"
            )
            for why, pod in list(c.unplaced.items())[-3:]:
                lines.append(f"    its pods cannot be placed (pod {pod}): {why}")
            if not c.unplaced:
                lines.append("    (no pod of it was reported unschedulable)")
        if lines and not self._nodes.objects:
            # Kueue's getting-started manifests assume a cluster; a world
            # brings its own Nodes, and a new user may not know it yet.
            lines.append(
                "  the world has no Nodes: pods run on the Nodes a world brings, as on a"
                " cluster (examples/quickstart/nodes.yaml has some to copy)"
            )
        return lines


def _became_true(conds: Any, before: Any, ctype: str) -> bool:
    now = find_condition(conds, ctype)
    if now is None or now.status != "True":
        return False
    was = find_condition(before, ctype)
    return was is None or was.status != "True"


def _fmt(d: timedelta) -> str:
    h = d.total_seconds() / 3600
    return f"{h:.0f}h" if h == int(h) else f"{h:.1f}h"
