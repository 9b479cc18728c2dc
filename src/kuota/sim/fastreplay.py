"""The fast replay: a trace run on the admission core alone, with the full
replay's decisions.

The full replay (``kuota.sim.simulate.run_plan``) runs every job through
the embedded control plane: the Job, its Workload, pods, placement, the
kubelet, every write through the store and its informers. Where nothing
but quota decides (``kuota.sim.replay_path.decline_reason``), all of that
comes down to what this module does directly on
:class:`~kuota.scheduler.admission.admission_core.AdmissionCore` with plain
records:

* a job's Workload is filed the instant its Job is created (the Job
  integration's Workload: ``fast_workloads``), in the trace's order;
* at each instant, as the control plane settles one: the core's clock
  moves (its timers fire), the pods that end now finish their Workloads,
  the Workloads finished a second ago (``ttlSecondsAfterFinished: 1``) go,
  the new jobs' Workloads are filed, then scheduling cycles run as the
  Kueue controller's idle hook runs them (evictions complete before each
  cycle, until a few quiet cycles);
* an admitted job's pods start at once and end ``duration`` later; an
  evicted one's stop at once, and a re-admission runs the whole duration
  again.

The report is measured as the full replay's (``fast_meter``).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Final

from kuota.api.conditions import with_condition
from kuota.api.kueue.config.durations import parse_duration
from kuota.api.meta import ObjectMeta
from kuota.cluster.nodeutil import node_allocatable
from kuota.embedded.creation_order import NAME_LABEL, creation_rank
from kuota.quota.requests import resource_value
from kuota.scheduler.admission.admission_core import AdmissionCore
from kuota.sim.decision_log import DecisionLog
from kuota.sim.fast_meter import FastMeter
from kuota.sim.fast_workloads import WorkloadMaker
from kuota.sim.instant_limit import (
    MAX_CYCLES_PER_INSTANT,
    PREEMPTOR_GATE,
    repeating_notice,
    spinning,
)
from kuota.sim.report import DesignResult, build_result
from kuota.sim.trace import TraceRow
from kuota.store import clone

__all__ = ["DecisionLog", "run_fast"]

Progress = Callable[[str, int, int, float], None]

heappush: Final = heapq.heappush
heappop: Final = heapq.heappop
_QUIET_CYCLES: Final = 3  # as KueueController: heads tried again and again rest after these
_FINISH: Final = 0
_DELETE: Final = 1
_TTL: Final = timedelta(seconds=1)
# What the Job integration writes as PodsReady (jobframework) with waitForPodsReady on.
_READY: Final = ("True", "Started", "All pods reached readiness and the workload is running")
_NOT_READY: Final = ("False", "WaitForStart", "Not all pods are ready or succeeded")


class _Job:
    """One trace job while its Workload lives."""

    __slots__ = (
        "admitted",
        "cq",
        "created",
        "duration",
        "job",
        "key",
        "milli",
        "name",
        "namespace",
        "preempted_at",
        "run",
        "started",
        "team",
    )

    def __init__(
        self,
        key: str,
        row: TraceRow,
        namespace: str,
        name: str,
        job: str,
        milli: int,
        duration: timedelta,
        created: datetime,
    ) -> None:
        self.key = key
        self.team = row.team
        self.namespace = namespace
        self.name = name
        self.job = job  # the Job's name
        self.milli = milli  # milli-GPUs of all its pods
        self.duration = duration
        self.created = created
        self.cq = ""
        self.admitted = False  # ever
        self.started: datetime | None = None  # its pods' start, while they run
        self.preempted_at: datetime | None = None
        self.run = 0  # which run of it the queued finish belongs to


def _duration_text(d: Decimal) -> str:
    from kuota.sim.simulate import _quantity

    return f"{_quantity(d)}s"


class FastReplay:
    def __init__(self, plan: Any, log: DecisionLog | None = None) -> None:
        from kuota.sim.simulate import START, _job_name

        # Bound once: an import in _submit runs at every instant with arrivals.
        self._job_name: Callable[[TraceRow, str, set[str]], str] = _job_name
        self.plan = plan
        self.log = log
        self.start = START
        design = plan.design
        self.core = core = AdmissionCore(design.config, START)
        namespaces = sorted(
            {o.metadata.namespace for o in design.objects if o.metadata.namespace}
            | {tp.target.namespace for tp in plan.teams.values()}
        )
        for ns in namespaces:
            core.add(_namespace(ns))
        for o in sorted(design.objects, key=creation_rank):
            core.add(clone(o))
        priorities = {
            o.metadata.name: o.value for o in design.objects if o.kind == "WorkloadPriorityClass"
        }
        self.maker = WorkloadMaker(plan, priorities)
        self.meter = FastMeter(core, START, plan.mapping.milli_resource)
        for o in plan.objects:
            if o.kind == "Node":
                alloc = node_allocatable(o)
                self.meter.capacity_milli += sum(
                    v * self.meter.weights[r] for r, v in alloc.items() if r in self.meter.weights
                )
        self.jobs: dict[str, _Job] = {}
        # (when, kind, sequence, key, run): pods ending, finished Workloads going
        self.events: list[tuple[datetime, int, int, str, int]] = []
        self._seq = 0
        self.admissions = 0
        self.pods_ready = design.config.wait_for_pods_ready is not None
        self.spinning: list[str] = []  # workloads preempting each other at one instant
        self._durations: dict[Decimal, tuple[str, timedelta]] = {}

    # ------------------------------------------------------------ arrivals
    def _arrivals(self) -> Iterator[tuple[datetime, list[TraceRow]]]:
        plan = self.plan
        origin = plan.trace.first_submit_s
        at: Decimal | None = None
        group: list[TraceRow] = []
        when = self.start
        for row in plan.trace:
            if row.submit_s != at:
                if group:
                    yield when, group
                at, group = row.submit_s, []
                when = self.start + timedelta(seconds=float(row.submit_s - origin))
            group.append(row)
        if group:
            yield when, group

    def _submit(self, rows: list[TraceRow], used: set[str]) -> None:
        plan, core, now = self.plan, self.core, self.core.now
        _job_name = self._job_name
        origin = plan.trace.first_submit_s
        for row in rows:
            tp = plan.teams[row.team]
            ns = tp.target.namespace
            name = _job_name(row, ns, used)
            # A trace repeats its durations: each one's text and time once.
            dur = self._durations.get(row.duration_s)
            if dur is None:
                text = _duration_text(row.duration_s)
                dur = self._durations[row.duration_s] = (text, parse_duration(text))
            wl = self.maker.make(row, name, now, dur[0])
            key = f"{ns}/{wl.metadata.name}"
            milli = self.maker.gpu_milli(row) * row.pods
            self.jobs[key] = _Job(key, row, ns, wl.metadata.name, name, milli, dur[1], now)
            plan.submit_s.append(float(row.submit_s - origin))
            self.meter.submitted(row.team)
            if self.pods_ready:
                # The Job integration's first write: the core files the
                # Workload once with it (the full replay files it twice, the
                # same way: nothing in the first filing outlives the second).
                wl = with_condition(wl, "PodsReady", *_NOT_READY, now) or wl
            core.add(wl)

    # ------------------------------------------------------------ events
    def _push(self, at: datetime, kind: int, key: str, run: int) -> None:
        self._seq += 1
        heappush(self.events, (at, kind, self._seq, key, run))

    def _due(self, now: datetime) -> bool:
        """Handle the events due by now; whether any changed the core."""
        ev = self.events
        changed = False
        while ev and ev[0][0] <= now:
            _, kind, _, key, run = heappop(ev)
            job = self.jobs.get(key)
            if job is None:
                continue
            if kind == _DELETE:
                self.core.delete("Workload", job.namespace, job.name)
                del self.jobs[key]
                changed = True
            elif job.started is not None and job.run == run:
                self._finish(job)
                changed = True
        return changed

    def _finish(self, job: _Job) -> None:
        """Its pods succeeded: the Job integration finishes the Workload."""
        self._stop_pods(job)
        self.core.finish(job.key)
        self.meter.finished(job.team)
        self.meter.released(job.team, job.cq, job.milli, False)
        if self.log is not None:
            self.log.append((self._t(), "finish", job.job))
        self._push(self.core.now + _TTL, _DELETE, job.key, 0)

    def _t(self) -> float:
        return (self.core.now - self.start).total_seconds()

    def _stop_pods(self, job: _Job) -> None:
        assert job.started is not None
        self.meter.pods_stopped(job.team, job.milli, (self.core.now - job.started).total_seconds())
        job.started = None

    def _set_pods_ready(self, key: str, cond: tuple[str, str, str]) -> None:
        """The PodsReady condition the Job integration writes, observed by the
        core as the Kueue controller observes a Workload written by others."""
        core = self.core
        wl = core.workloads.get(key)
        if wl is None:
            return
        new = with_condition(wl, "PodsReady", *cond, core.now)
        if new is not None:
            core.add(new)

    # ------------------------------------------------------------ cycles
    def _admitted(self, key: str) -> _Job:
        job = self.jobs[key]
        now = self.core.now
        wl = self.core.workloads[key]
        adm = wl.status.admission if wl.status is not None else None
        job.cq = adm.cluster_queue if adm is not None else ""
        first = (now - job.created).total_seconds() if not job.admitted else None
        self.meter.reserved(job.team, job.cq, self._held(adm), first)
        job.admitted = True
        job.started = now
        job.run += 1
        self.meter.pods_started(job.team, job.milli, first)
        if job.duration:
            self._push(now + job.duration, _FINISH, key, job.run)
        if self.log is not None:
            self.log.append((self._t(), "admit", job.job))
        return job

    def _place(self, placed: list[_Job]) -> bool:
        """The pods of the jobs admitted by the cycle before run: the kubelet
        starts them in the control plane's idle pass after that cycle's
        (placement is an idle hook after Kueue's), so the Job integration
        writes PodsReady then, and a job that runs for no time finishes
        then. Whether one finished."""
        finished = False
        for job in placed:
            if job.started is None:
                continue  # evicted meanwhile
            if self.pods_ready:
                self._set_pods_ready(job.key, _READY)
            if not job.duration:
                self._finish(job)
                finished = True
        return finished

    def _held(self, adm: Any) -> int:
        """Milli-GPUs of an admission's usage, as SimRecorder counts them."""
        milli = 0
        w = self.meter.weights
        if adm is None:
            return 0
        for psa in adm.pod_set_assignments:
            for r, q in (psa.resource_usage or {}).items():
                if r in w:
                    milli += resource_value(r, q) * w[r]
        return milli

    def _complete_evictions(self) -> None:
        core = self.core
        pending = list(core.state.pending_evictions)
        if not pending:
            return
        held = {}
        for key in pending:
            wl = core.workloads.get(key)
            adm = wl.status.admission if wl is not None and wl.status is not None else None
            held[key] = self._held(adm)
        core.complete_evictions()
        for key in pending:
            job = self.jobs.get(key)
            if job is None:
                continue
            self.meter.released(job.team, job.cq, held[key], True)

    def _settle(self) -> bool:
        """Cycles as KueueController._idle runs them at one instant."""
        core = self.core
        quiet = 0
        tried: set[str] = set()
        cycles = 0
        placing: list[_Job] = []
        while quiet < _QUIET_CYCLES or placing:
            if quiet >= _QUIET_CYCLES:  # an idle pass without a cycle
                if self._place(placing):
                    quiet = 0
                    tried.clear()
                placing = []
                continue
            cycles += 1
            if cycles > MAX_CYCLES_PER_INSTANT:
                self.spinning = _spinning(core)
                return False
            self._complete_evictions()
            r = core.cycle()
            self.admissions += len(r.admitted)
            for p in r.preempted:
                job = self.jobs.get(p.victim)
                if job is None:
                    continue
                if job.started is not None:
                    self._stop_pods(job)
                if job.preempted_at != core.now:
                    # Counted as the report counts Preempted transitions: by
                    # their time, once per instant.
                    job.preempted_at = core.now
                    self.meter.preempted(job.team, p.reason)
                if self.pods_ready:
                    self._set_pods_ready(p.victim, _NOT_READY)
                if self.log is not None:
                    self.log.append((self._t(), f"preempt:{p.reason}", job.job))
            admitted = [self._admitted(key) for key in r.admitted]
            woke = self._place(placing)
            placing = admitted
            if r.changed or core.has_pending_evictions or woke:
                quiet = 0
                tried.clear()
                continue
            if not core.queues.any_heads():
                quiet = _QUIET_CYCLES  # more cycles do nothing (the pass still places)
                continue
            if not r.waiting.keys() - tried:
                quiet += 1
            tried.update(r.waiting)
        core.take_touched()  # (nobody writes statuses here)
        core.take_events()  # (nor records Events)
        core.preemptions.clear()
        core.evictions.clear()
        return True

    # ------------------------------------------------------------ the run
    def run(self, until: timedelta | None, progress: Progress | None) -> str:
        core, meter = self.core, self.meter
        stop_at = self.start + until if until is not None else None
        arrivals = self._arrivals()
        nxt = next(arrivals, None)
        used: set[str] = set()
        last = 0.0
        total = self.plan.total_jobs
        name = self.plan.design.name
        first = True
        while True:
            candidates = []
            if nxt is not None:
                candidates.append(nxt[0])
            if self.events:
                candidates.append(self.events[0][0])
            timer = core.next_timer()
            if timer is not None:
                candidates.append(timer)
            if not candidates:
                return "idle"
            at = min(candidates)
            if not first and at <= core.now:
                at = core.now
            if stop_at is not None and at > stop_at:
                core.advance(stop_at)
                meter.now = stop_at
                return "until"
            first = False
            core.advance(at)
            meter.now = core.now
            self._due(core.now)
            if nxt is not None and nxt[0] <= core.now:
                self._submit(nxt[1], used)
                nxt = next(arrivals, None)
            if not self._settle():
                meter.sample()
                return "repeating"
            meter.sample()
            if progress is not None:
                t = time.monotonic()
                if t - last >= 0.2:
                    last = t
                    progress(name, meter.finished_jobs, total, meter.elapsed())

    def running(self) -> list[tuple[str, int, datetime]]:
        return [(j.team, j.milli, j.started) for j in self.jobs.values() if j.started is not None]


def _spinning(core: AdmissionCore) -> list[str]:
    """Which workloads cycle at this instant (its preemptions) and why."""
    return spinning(core.preemptions, bool(core.state.gate(PREEMPTOR_GATE)))


def _namespace(name: str) -> Any:
    from kuota.api import k8s as kc

    return kc.Namespace(
        api_version="v1",
        kind="Namespace",
        metadata=ObjectMeta(name=name, labels={NAME_LABEL: name}),
    )


def run_fast(
    plan: Any,
    until: timedelta | None = None,
    progress: Progress | None = None,
    log: DecisionLog | None = None,
) -> DesignResult:
    """Replay ``plan`` on the admission core alone (the caller checked
    ``replay_path.decline_reason(plan)`` is None). ``log``: filled with the
    decisions as they are made."""
    fr = FastReplay(plan, log)
    stopped = fr.run(until, progress)
    meter = fr.meter
    meter.sample()
    meter.close(fr.running())
    if progress is not None:
        progress(plan.design.name, meter.finished_jobs, plan.total_jobs, meter.elapsed())
    errors = []
    if stopped == "repeating":
        errors = [
            repeating_notice(plan.design.name, meter.elapsed()),
            *fr.spinning,
        ]
    return build_result(
        plan,
        meter,  # type: ignore[arg-type]
        stopped=stopped,
        admissions=fr.admissions,
        errors=errors,
    )
