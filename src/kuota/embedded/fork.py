"""A fork of a control plane's state, run forward in virtual time.

``kuota predict`` asks when a job would start: the answer comes from a copy
of the current state (a kept state directory, or the objects an API server
serves) in a fresh in-memory control plane on a virtual clock. Nothing of
the original is touched: stored objects are never written to, so the fork
shares them, and the few it changes (durations) are its own copies.

Anything waiting starts when something running ends, so every workload
gets an expected end: its pods' declared duration (``kuota.dev/duration``),
else its maximum execution time (Kueue deactivates it then), else the
median run of the finished workloads of the same LocalQueue and shape
(none of that shape finished: of its LocalQueue; none there: of all),
written on the fork's copies of its pods and Job; else it runs until deleted.
A running workload is taken to run as the finished runs longer than its run
so far did (the median of those): one past the median has not ended, and
nothing ends before the fork's present.
"""

from __future__ import annotations

import statistics
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from kuota.api.base import enc_hook
from kuota.api.conditions import find_condition
from kuota.api.kueue.config import KueueConfig
from kuota.api.openshift.scheduler_config import Scheduler
from kuota.cluster.controllers.run_keys import DURATION_ANNOTATION
from kuota.embedded.controlplane import ControlPlane
from kuota.embedded.state_meta import CLOCK_META
from kuota.runtime.clock import VirtualClock
from kuota.runtime.manager import StopReason
from kuota.store import clone
from kuota.store.journal_replay import Recovered
from kuota.store.resources import JOB, POD, WORKLOAD

# Where an expected end comes from (ExpectedEnd.source).
DECLARED = "declared duration"
MAX_EXECUTION = "maximum execution time"
MEDIAN = "median of finished"  # of its LocalQueue and shape
MEDIAN_QUEUE = "median of finished in its queue"
MEDIAN_ALL = "median of finished in any queue"
UNKNOWN = "unknown (runs until deleted)"


@dataclass(frozen=True, slots=True)
class ExpectedEnd:
    """How long a workload of the fork is taken to run, and why."""

    workload: str  # namespace/name
    source: str  # DECLARED, MAX_EXECUTION, MEDIAN, MEDIAN_QUEUE, MEDIAN_ALL, UNKNOWN
    seconds: float | None  # its whole run (None: until deleted)
    samples: int = 0  # finished workloads the median is of


@dataclass
class Fork:
    cp: ControlPlane
    ends: list[ExpectedEnd] = field(default_factory=list)


def _key(obj: Any) -> str:
    return f"{obj.metadata.namespace}/{obj.metadata.name}"


def _since(obj: Any, ctype: str) -> datetime | None:
    c = find_condition(obj, ctype)
    return c.last_transition_time if c is not None and c.status == "True" else None


def _shape(wl: Any) -> tuple[str, bytes]:
    """A workload's queue and what it asks for: workloads alike in both are
    taken to run alike."""
    sets = [
        (ps.name, ps.count, [c.resources for c in ps.template.spec.containers])
        for ps in wl.spec.pod_sets
    ]
    return _queue(wl), msgspec.json.encode(sets, enc_hook=enc_hook)


def _queue(wl: Any) -> str:
    return f"{wl.metadata.namespace}/{wl.spec.queue_name or ''}"


def _owner_uids(obj: Any) -> list[str]:
    refs = obj.metadata.owner_references or []
    return [r.uid for r in refs]


def _declared(ann: dict[str, str] | None) -> bool:
    return bool(ann) and DURATION_ANNOTATION in (ann or {})


def _with_duration(obj: Any, seconds: float, template: bool) -> Any:
    new = clone(obj)
    meta = new.spec.template.metadata if template else new.metadata
    meta.annotations = {**(meta.annotations or {}), DURATION_ANNOTATION: f"{max(0, seconds):.3f}s"}
    return new


@dataclass
class _Runs:
    """The finished workloads' runs (seconds, sorted) by queue and shape, by
    queue, and all of them."""

    by_shape: dict[tuple[str, bytes], list[float]] = field(default_factory=dict)
    by_queue: dict[str, list[float]] = field(default_factory=dict)
    every: list[float] = field(default_factory=list)

    def expected(self, wl: Any, ran: float) -> tuple[str, float, int] | None:
        """(rule, whole run, samples) for a workload that has run ``ran``
        seconds: the median of the runs longer than that, at the first level
        that has one (else the first level's median: it ends now)."""
        first: tuple[str, float, int] | None = None
        for source, runs in (
            (MEDIAN, self.by_shape.get(_shape(wl))),
            (MEDIAN_QUEUE, self.by_queue.get(_queue(wl))),
            (MEDIAN_ALL, self.every),
        ):
            if not runs:
                continue
            longer = runs[bisect_right(runs, ran) :]
            if longer:
                return source, statistics.median(longer), len(longer)
            if first is None:
                first = (source, statistics.median(runs), len(runs))
        return first


def _finished_runs(workloads: Iterable[Any]) -> _Runs:
    out = _Runs()
    for wl in workloads:
        done, admitted = _since(wl, "Finished"), _since(wl, "Admitted")
        if done is None or admitted is None or admitted > done:
            continue
        run = (done - admitted).total_seconds()
        out.by_shape.setdefault(_shape(wl), []).append(run)
        out.by_queue.setdefault(_queue(wl), []).append(run)
        out.every.append(run)
    for runs in (*out.by_shape.values(), *out.by_queue.values(), out.every):
        runs.sort()
    return out


def _expect_ends(state: Recovered, now: datetime) -> list[ExpectedEnd]:
    """Give every unfinished workload whose pods declare no run an expected
    end (on the fork's copies); say for each which rule gave it."""
    objects = state.objects
    workloads = list(objects.get(WORKLOAD, {}).values())
    runs = _finished_runs(workloads)
    by_owner: dict[str, Any] = {}  # a workload by its owners' uids (Job, pod group)
    for wl in workloads:
        for uid in _owner_uids(wl):
            by_owner[uid] = wl
    pods_of: dict[str, list[tuple[Any, Any]]] = {}
    for pkey, pod in objects.get(POD, {}).items():
        for uid in [pod.metadata.uid, *_owner_uids(pod)]:
            wl = by_owner.get(uid)
            if wl is not None:
                pods_of.setdefault(_key(wl), []).append((pkey, pod))
                break
    jobs = objects.get(JOB, {})
    jobs_by_uid = {j.metadata.uid: (k, j) for k, j in jobs.items()}
    ends: list[ExpectedEnd] = []
    for wl in workloads:
        if _since(wl, "Finished") is not None:
            continue
        key = _key(wl)
        pods = pods_of.get(key, [])
        owned_jobs = [jobs_by_uid[u] for u in _owner_uids(wl) if u in jobs_by_uid]
        templates = [j.spec.template.metadata.annotations for _, j in owned_jobs]
        if any(_declared(p.metadata.annotations) for _, p in pods) or any(
            _declared(t) for t in templates
        ):
            ends.append(ExpectedEnd(key, DECLARED, None))
            continue
        if wl.spec.maximum_execution_time_seconds is not None:
            ends.append(ExpectedEnd(key, MAX_EXECUTION, wl.spec.maximum_execution_time_seconds))
            continue
        admitted = _since(wl, "Admitted") or now
        guess = runs.expected(wl, (now - admitted).total_seconds())
        if guess is None:
            ends.append(ExpectedEnd(key, UNKNOWN, None))
            continue
        source, median, samples = guess
        ends.append(ExpectedEnd(key, source, median, samples))
        for jkey, job in owned_jobs:
            jobs[jkey] = _with_duration(job, median, template=True)
        for pkey, pod in pods:
            started = (pod.status.start_time if pod.status is not None else None) or admitted
            # The run is the workload's, from its admission: a pod started
            # later has that much less of it left; none ends before now.
            left = median - (started - admitted).total_seconds()
            left = max(left, (now - started).total_seconds())
            objects[POD][pkey] = _with_duration(pod, left, template=False)
    return ends


def snapshot(store: Any, now: datetime) -> Recovered:
    """A live memory store's present as a state to fork (``kuota serve``'s
    what-if): the objects are shared, not copied (a fork never writes them),
    and the fork's clock starts at ``now``."""
    objects: dict[Any, dict[tuple[str, str], Any]] = {}
    for rtype, obj in store.objects():
        objects.setdefault(rtype, {})[(obj.metadata.namespace or "", obj.metadata.name)] = obj
    # The generated names' sequence goes on from the store's (not part of
    # the store protocol: only the memory store has one).
    seq = int(getattr(store, "_seq", 0))
    return Recovered(objects, store.resource_version, seq, {CLOCK_META: now.isoformat()})


def fork(
    state: Recovered,
    config: KueueConfig,
    *,
    openshift: bool = False,
    scheduler: Scheduler | None = None,
) -> Fork:
    """A control plane in memory on a virtual clock at the state's time
    (``state`` is taken over: give a fresh read)."""
    saved = state.meta.get(CLOCK_META)
    now = datetime.fromisoformat(saved) if saved else datetime.now(UTC)
    ends = _expect_ends(state, now)
    cp = ControlPlane(
        config, now, clock=VirtualClock(now), openshift=openshift, scheduler=scheduler
    )
    cp.store.adopt(state)
    return Fork(cp, ends)


def settle(cp: ControlPlane) -> None:
    """Let the fork's present instant settle (what a live run would do next at it)."""
    cp.run(until=cp.clock.now())


def forward(
    cp: ControlPlane, done: Callable[[], bool], horizon: timedelta | None = None
) -> StopReason:
    """Run the fork in virtual time until ``done()`` holds after an instant,
    nothing more can happen, or ``horizon`` has passed. Once per fork: a
    stopped manager stays stopped."""
    until = cp.clock.now() + horizon if horizon is not None else None

    def on_round() -> None:
        if done():
            cp.mgr.stop()

    return cp.run(until, on_round=on_round)
