"""``kuota bench``: a Kueue scheduler-performance world run in the embedded
control plane, with the figures Kueue's runner reports.

Kueue's runner creates the generator's Workloads over time and plays their
jobs: an admitted workload finishes ``runtimeMs`` after its admission, an
evicted one gives its quota back at once. kuota does the same through the
same store, informers and admission core that ``kuota run`` uses, in virtual
time (as fast as the CPU allows) or in real time.
"""

from __future__ import annotations

import contextlib
import math
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import kuota
from kuota.api.conditions import with_condition
from kuota.api.kueue.config import KueueConfig, load_config
from kuota.api.meta import Condition
from kuota.embedded.controlplane import ControlPlane
from kuota.quota.workload import evicted_reason, find_condition
from kuota.runtime.clock import RealClock, VirtualClock
from kuota.runtime.informer import key_of
from kuota.runtime.manager import Manager
from kuota.sim.benchgen import RUNNING_LABEL, BenchWorld, GeneratorConfig, generate, workload
from kuota.store import NotFound
from kuota.store.resources import WORKLOAD

T0: Final = datetime(2026, 1, 1, tzinfo=UTC)


class Runner:
    """Kueue's performance runner: finishes each admitted workload after the
    running time in its label, counted from its admission."""

    name = "bench-runner"

    def __init__(self, recorder: Recorder | None = None) -> None:
        self.mgr: Manager | None = None
        # Told of every Workload event by this runner's handler: one pass
        # over the conditions serves both.
        self.recorder = recorder

    def setup(self, mgr: Manager) -> None:
        self.mgr = mgr
        mgr.informer(WORKLOAD).on_change(self._changed)

    def _changed(self, etype: str, wl: Any, old: Any | None) -> None:
        admitted, finished = _admitted_finished(wl)
        if self.recorder is not None:
            self.recorder.observe(etype, wl, admitted, finished)
        if etype == "DELETED":
            return
        admitted = _running(admitted, finished)
        if admitted is None:
            return
        assert self.mgr is not None
        at = self._due(wl, admitted)
        if at is not None:
            self.mgr.enqueue_at(self.name, key_of(wl), at)

    @staticmethod
    def _due(wl: Any, c: Condition | None = None) -> datetime | None:
        """When the workload finishes (``c``: its Admitted condition, if known)."""
        if c is None:
            c = find_condition(wl, "Admitted")
        if c is None or c.last_transition_time is None:
            return None
        return c.last_transition_time + _running_time((wl.metadata.labels or {}).get(RUNNING_LABEL))

    def reconcile(self, key: str) -> None:
        assert self.mgr is not None
        wl = self.mgr.informer(WORKLOAD).get(key)
        admitted = _running(*_admitted_finished(wl)) if wl is not None else None
        if wl is None or admitted is None:
            return None
        at = self._due(wl, admitted)
        now = self.mgr.clock.now()
        if at is not None and at > now:
            self.mgr.enqueue_at(self.name, key, at)
            return None
        new = with_condition(wl, "Finished", "True", "ByTest", "By test runner", now)
        if new is None:
            return None
        with contextlib.suppress(NotFound):  # deleted meanwhile
            self.mgr.store.update_status(new)
        return None


def _eviction_reason(wl: Any) -> str:
    """Why an admission ended without finishing: the Preempted condition's
    reason (InClusterQueue, InCohortReclamation, ...), else the Evicted one's."""
    p = find_condition(wl, "Preempted")
    if p is not None and p.status == "True":
        return str(p.reason)
    return evicted_reason(wl) or "Evicted"


_RUNNING_TIMES: Final[dict[str | None, timedelta]] = {}


def _running_time(label: str | None) -> timedelta:
    """The running time a workload's label gives (a world has a few values;
    each Workload event of an admitted workload asks)."""
    t = _RUNNING_TIMES.get(label)
    if t is None:
        if len(_RUNNING_TIMES) > 4096:
            _RUNNING_TIMES.clear()
        t = _RUNNING_TIMES[label] = timedelta(milliseconds=int(label or 0))
    return t


def _admitted_finished(wl: Any) -> tuple[Condition | None, Condition | None]:
    """The Admitted condition and the Finished one if True, in one pass over
    the conditions (the runner and the recorder see every Workload event)."""
    st = wl.status
    admitted = finished = None
    for c in (st.conditions if st is not None else None) or ():
        t = c.type
        if t == "Admitted":
            if admitted is None:
                admitted = c
        elif t == "Finished" and finished is None:
            finished = c
    return admitted, finished if finished is not None and finished.status == "True" else None


def _running(admitted: Condition | None, finished: Condition | None) -> Condition | None:
    """Of _admitted_finished's pair: the Admitted condition of an admitted
    workload not yet finished, else None."""
    if finished is not None or admitted is None or admitted.status != "True":
        return None
    return admitted


@dataclass
class _WlStats:
    cls: str
    created: datetime
    milli: int
    cq: str = ""
    admitted_at: datetime | None = None
    to_admission_ms: float | None = None
    finished_at: datetime | None = None
    evictions: int = 0


@dataclass
class Recorder:
    """What Kueue's recorder measures, from the Workload events."""

    wls: dict[str, _WlStats] = field(default_factory=dict)
    cpu_used: float = 0.0  # admitted milli-cpu x seconds, over all queues
    # milli-cpu x seconds of admissions that ended in an eviction (work done
    # again), by the reason of the eviction: Preempted's, else Evicted's.
    lost: dict[str, float] = field(default_factory=dict)
    lost_by_class: dict[str, float] = field(default_factory=dict)  # the evicted's class
    # Each admission an eviction ended: (ClusterQueue, admitted, ended, milli-cpu).
    evicted: list[tuple[str, datetime, datetime, int]] = field(default_factory=list)
    admissions: int = 0
    finished: int = 0  # workloads finished so far (the progress bar's count)
    first_created: datetime | None = None
    last_finished: datetime | None = None

    def observe(
        self, etype: str, wl: Any, admitted: Condition | None, finished: Condition | None
    ) -> None:
        """A Workload event, with its Admitted condition and its Finished
        condition if True (_admitted_finished)."""
        key = wl.metadata.uid  # (a name may be used again; a uid is not)
        st = self.wls.get(key)
        if st is None:
            labels = wl.metadata.labels or {}
            milli = 0
            for ps in wl.spec.pod_sets:
                req = ps.template.spec.containers[0].resources.requests or {}
                cpu = req.get("cpu")
                milli += (math.ceil(cpu.nanos / 1_000_000) if cpu is not None else 0) * ps.count
            created = wl.metadata.creation_timestamp or T0
            st = self.wls[key] = _WlStats(
                labels.get("kueue.x-k8s.io/performance-scheduler-class", ""), created, milli
            )
            if self.first_created is None or created < self.first_created:
                self.first_created = created
        if etype == "DELETED":
            return
        was = st.admitted_at is not None
        now_admitted = _running(admitted, finished) is not None
        if now_admitted and not was:
            assert admitted is not None
            at = admitted.last_transition_time or st.created
            st.admitted_at = at
            st.cq = wl.status.admission.cluster_queue if wl.status and wl.status.admission else ""
            st.to_admission_ms = (at - st.created).total_seconds() * 1000
            self.admissions += 1
        elif was and not now_admitted:
            end = finished.last_transition_time if finished is not None else None
            if end is None:
                end = admitted.last_transition_time if admitted is not None else None
            assert st.admitted_at is not None
            end = end or st.admitted_at
            began = st.admitted_at
            ran = st.milli * (end - began).total_seconds()
            self.cpu_used += ran
            st.admitted_at = None
            if finished is not None:
                st.finished_at = end
                self.finished += 1
                if self.last_finished is None or end > self.last_finished:
                    self.last_finished = end
            else:
                st.evictions += 1
                why = _eviction_reason(wl)
                self.lost[why] = self.lost.get(why, 0.0) + ran
                self.lost_by_class[st.cls] = self.lost_by_class.get(st.cls, 0.0) + ran
                self.evicted.append((st.cq, began, end, st.milli))


@dataclass
class BenchResult:
    config: str
    mode: str
    workloads: int
    finished: int
    wall_s: float  # first creation to last finish, on the run's clock
    elapsed_s: float  # real seconds the run took
    cpu_s: float
    mean_cq_usage: float
    lower_bound_s: float
    admissions: int
    evictions: int
    cycles: int
    cycle_ms: dict[str, float]
    time_to_admission_ms: dict[str, dict[str, float]]
    peak_rss_mib: float
    # Seconds of all the world's quota spent on admissions that ended in an
    # eviction, by its reason: work that had to be done again.
    work_lost_s: dict[str, float] = field(default_factory=dict)
    # The same work by the class of the workload evicted.
    work_lost_by_class_s: dict[str, float] = field(default_factory=dict)
    # The bound with arrivals (BenchWorld.arrival_bound_s): no schedule of
    # this world ends sooner, as work cannot run before it is created.
    lower_bound_with_arrivals_s: float = 0.0
    # That bound had the lost work been part of the world's, each piece when
    # it was done: what no schedule with these evictions can beat.
    lower_bound_with_lost_work_s: float = 0.0

    @property
    def ratio_to_bound(self) -> float:
        return self.wall_s / self.lower_bound_s if self.lower_bound_s else math.inf

    @property
    def admissions_per_s(self) -> float:
        return self.admissions / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "config": self.config,
            "mode": self.mode,
            "workloads": self.workloads,
            "finished": self.finished,
            "wall_s": round(self.wall_s, 3),
            "elapsed_s": round(self.elapsed_s, 3),
            "cpu_s": round(self.cpu_s, 3),
            "mean_cq_usage": round(self.mean_cq_usage, 4),
            "lower_bound_s": round(self.lower_bound_s, 3),
            "ratio_to_bound": round(self.ratio_to_bound, 3),
            "admissions": self.admissions,
            "admissions_per_s": round(self.admissions_per_s, 1),
            "evictions": self.evictions,
            "cycles": self.cycles,
            "cycle_ms": {k: round(v, 3) for k, v in self.cycle_ms.items()},
            "time_to_admission_ms": {
                c: {k: round(v, 1) for k, v in d.items()}
                for c, d in self.time_to_admission_ms.items()
            },
            "peak_rss_mib": round(self.peak_rss_mib, 1),
            "work_lost_to_evictions_s": {k: round(v, 3) for k, v in self.work_lost_s.items()},
            "work_lost_by_class_s": {k: round(v, 3) for k, v in self.work_lost_by_class_s.items()},
            "lower_bound_with_arrivals_s": round(self.lower_bound_with_arrivals_s, 3),
            "lower_bound_with_lost_work_s": round(self.lower_bound_with_lost_work_s, 3),
            "build": kuota.build(),
            "python": kuota.interpreter(),
        }


def _ms(at: datetime) -> float:
    """Milliseconds since the world's start (benchgen's arrival times)."""
    return (at - T0).total_seconds() * 1000


def nearest_rank(values: list[float], p: float) -> float:
    """The p-th percentile by the nearest-rank method (0 for no values)."""
    if not values:
        return 0.0
    s = sorted(values)
    k = max(1, math.ceil(p / 100 * len(s)))
    return s[k - 1]


def default_config() -> KueueConfig:
    cfg, errs = load_config(
        {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}
    )
    assert cfg is not None, errs
    return cfg


def run_bench(
    gen: GeneratorConfig,
    *,
    name: str = "bench",
    real_time: bool = False,
    config: KueueConfig | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> BenchResult:
    world: BenchWorld = generate(gen, T0)
    # Built before the clocks start, as the world is: Kueue's generator makes
    # its objects outside the control plane whose cost the run measures.
    arrivals = [workload(a, T0) for a in world.arrivals]
    # The configuration is read before, too: an input, as the world is.
    config = config or default_config()
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    clock = RealClock(T0) if real_time else VirtualClock(T0)
    cp = ControlPlane(config, T0, clock=clock, cluster=False)
    # The runner's world has no Jobs; events are not what a benchmark measures.
    cp.mgr.recorder.enabled = False
    rec = Recorder()
    runner = Runner(rec)
    cp.mgr.add(runner)
    cycle_s: list[float] = []
    cp.kueue.cycle_seconds = cycle_s
    cp.create(world.objects)
    cp.mgr.run_until_idle()
    total = len(arrivals)
    # The store keeps its own copy of each: the originals go once created.
    cp.submit(arrivals)
    del arrivals

    def progress() -> None:
        if on_progress is not None:
            on_progress(rec.finished, total)

    cp.run(on_round=progress if on_progress is not None else None)
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    finished = [s for s in rec.wls.values() if s.finished_at is not None]
    first = rec.first_created or T0
    last = rec.last_finished or first
    wall = (last - first).total_seconds()
    capacity = world.capacity_milli
    usage = rec.cpu_used / (capacity * wall) if capacity and wall > 0 else 0.0
    tta: dict[str, dict[str, float]] = {}
    for cls in world.classes:
        vals = [
            s.to_admission_ms
            for s in rec.wls.values()
            if s.cls == cls and s.to_admission_ms is not None
        ]
        tta[cls] = {
            "mean": sum(vals) / len(vals) if vals else 0.0,
            "p95": nearest_rank(vals, 95),
            "count": float(len(vals)),
        }
    cyc = [s * 1000 for s in cycle_s]
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    progress()
    return BenchResult(
        config=name,
        mode="real-time" if real_time else "virtual",
        workloads=total,
        finished=len(finished),
        wall_s=wall,
        elapsed_s=elapsed,
        cpu_s=cpu,
        mean_cq_usage=usage,
        lower_bound_s=world.lower_bound_s(),
        admissions=rec.admissions,
        evictions=sum(s.evictions for s in rec.wls.values()),
        cycles=len(cycle_s),
        cycle_ms={"p50": nearest_rank(cyc, 50), "p99": nearest_rank(cyc, 99)},
        time_to_admission_ms=tta,
        peak_rss_mib=rss_kib / 1024 if sys.platform != "darwin" else rss_kib / 2**20,
        work_lost_s={k: v / capacity for k, v in sorted(rec.lost.items())} if capacity else {},
        work_lost_by_class_s=(
            {k: v / capacity for k, v in sorted(rec.lost_by_class.items())} if capacity else {}
        ),
        lower_bound_with_arrivals_s=world.arrival_bound_s(),
        lower_bound_with_lost_work_s=world.arrival_bound_s(
            (cq, _ms(start), _ms(end), milli) for cq, start, end, milli in rec.evicted
        ),
    )
