"""``kuota run``: a world in the embedded control plane, with a live table and
a summary; ``kuota get`` / ``kuota describe`` read a kept state afterwards."""

from __future__ import annotations

import contextlib
import signal
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, Progress, TextColumn
from rich.table import Table
from rich.text import Text

from kuota.api.kueue import types as kt
from kuota.cli.files import CannotRead
from kuota.cli.progress import Progress as StderrProgress
from kuota.cli.world import World, load_world
from kuota.embedded.controlplane import JOB_INTEGRATIONS, ControlPlane
from kuota.embedded.run_report import Recorder
from kuota.runtime.clock import RealClock, VirtualClock
from kuota.store import StoreError, open_readonly
from kuota.store.resources import EVENT, JOB, JOB_SET, LOCAL_QUEUE, WORKLOAD

START = datetime(2026, 1, 1, tzinfo=UTC)
WORLD_META = "world"  # the world's paths, for a resumption that names none
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _fmt_seconds(s: float | None) -> str:
    if s is None:
        return "-"
    if s < 120:
        return f"{s:.0f}s"
    if s < 7200:
        return f"{s / 60:.1f}m"
    return f"{s / 3600:.1f}h"


def _start_of(world: World) -> datetime:
    stamps = [
        o.metadata.creation_timestamp
        for o in world.objects
        # A NodeOperation's stamp says when it happens, not when the world starts.
        if getattr(o.metadata, "creation_timestamp", None) is not None and o.kind != "NodeOperation"
    ]
    return min(stamps) if stamps else START


def _kept_world(state: str | None) -> list[str] | str:
    """The world paths a kept run was started with, or what is wrong."""
    if state is None:
        return "give the world's PATHS, or --state DIR of a kept run to resume it"
    if not Path(state).is_dir():
        return f"--state {state}: no kept run there; give the world's PATHS to start one"
    try:
        with open_readonly(state) as store:
            paths = store.get_meta(WORLD_META)
    except StoreError as err:
        return f"--state {state}: {err}"
    if not paths:
        return (
            f"--state {state}: the state does not say which world it runs (kept before"
            " kuota remembered it); give the world's PATHS"
        )
    gone = [p for p in paths if not Path(p).exists()]
    if gone:
        return f"--state {state}: the kept world's {', '.join(gone)} no longer exists; give the world's PATHS"
    return list(paths)


def run_world(
    paths: list[str],
    *,
    state: str | None,
    until: timedelta | None,
    real_time: bool,
    speed: float,
    live: bool,
    console: Console,
) -> int:
    if not paths:
        kept = _kept_world(state)
        if isinstance(kept, str):
            console.print(f"error: {kept}", markup=False)
            return 2
        paths = kept
    try:
        world = load_world(paths)
    except CannotRead as err:
        console.print(f"error: {err}", markup=False)
        return 2
    for w in world.warnings:
        console.print(f"warning: {w}", markup=False)
    if world.problems:
        for p in world.problems:
            console.print(p, markup=False)
        console.print(f"{plural(len(world.problems), 'problem')}; nothing was run.", markup=False)
        return 2
    if not world.objects:
        console.print(f"error: {' '.join(paths)}: no objects to run (an empty world)", markup=False)
        return 2
    assert world.config is not None
    start = _start_of(world)
    clock = RealClock(start, speed) if real_time else VirtualClock(start)
    try:
        cp = ControlPlane(
            world.config,
            start,
            clock=clock,
            state_dir=state,
            openshift=world.openshift,
            scheduler=world.scheduler,
        )
    except StoreError as err:  # (it names the state: in use, damaged, not kuota's)
        console.print(f"error: {err}", markup=False, soft_wrap=True)
        return 2
    except OSError as err:
        console.print(f"error: --state {state}: {err.strerror or err}", markup=False)
        return 2
    if state is not None:
        # The world's files, so that ``kuota run --state DIR`` resumes it alone.
        cp.store.set_meta(WORLD_META, [str(Path(p).resolve()) for p in paths])
    for name in cp.unsimulated_frameworks:
        console.print(
            f"warning: {world.config_source or 'the Configuration'}: integrations.frameworks: "
            f'"{name}" is not simulated by the embedded control plane (only '
            f"{', '.join(JOB_INTEGRATIONS)}): its objects run as if Kueue did not manage them",
            markup=False,
        )
    try:
        code = _run(cp, world, until, live, console, kept=state is not None)
    except StoreError as err:  # the state cannot be written: the run stops there
        console.print(f"error: {err}", markup=False, soft_wrap=True)
        with contextlib.suppress(StoreError):
            cp.close()  # (releases the state; a stopped store writes nothing more)
        return 1
    except BaseException:
        cp.close()
        raise
    try:
        cp.close()
    except StoreError as err:
        console.print(f"error: {err}", markup=False, soft_wrap=True)
        return 1
    return code


def _run(
    cp: ControlPlane,
    world: World,
    until: timedelta | None,
    live: bool,
    console: Console,
    kept: bool = False,
) -> int:
    cp.submit(world.objects)  # (a StoreError here is the state failing: run_world says it)
    assert cp.kueue.core is not None
    rec = Recorder(cp.mgr, cp.kueue.core, keep=cp.store if kept else None)
    rec.seed()
    stop_at = cp.clock.now() + until if until is not None else None
    jobs_total = sum(1 for o in world.objects if o.kind == "Job")
    # The store holds its own copies (and the arrivals those still to come):
    # the decoded world is not kept for the whole run, a tenth of its memory
    # for a world of many Jobs. Refused objects keep their own for the report.
    world.objects = []
    progress = Progress(
        TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}")
    )
    task = progress.add_task("workloads finished", total=max(jobs_total, 1))
    last_draw = [0.0]
    live_view: Live | None = None
    # Without the live table (piped, or --no-live), progress goes to stderr
    # once the run takes more than a second: by virtual time up to --until,
    # else by workloads finished.
    quiet = StderrProgress(enabled=not (live and console.is_terminal))
    run_task = quiet.add("run")
    start = cp.clock.now()

    def on_round() -> None:
        rec.sample()
        t = time.monotonic()
        if t - last_draw[0] < 0.1:
            return
        last_draw[0] = t
        done, total = _workloads_finished(rec, jobs_total)
        if live_view is None:
            now = cp.clock.now()
            if until is not None:
                quiet.update(
                    run_task,
                    (now - start) / until,
                    detail=f"{_fmt_seconds((now - start).total_seconds())} of "
                    f"{_fmt_seconds(until.total_seconds())}, {done}/{total} workloads finished",
                )
            else:
                quiet.update(run_task, done, total, detail=f"{done}/{total} workloads finished")
            return
        progress.update(task, completed=done, total=total)
        live_view.update(Group(_queue_table(cp), progress))

    # Ctrl-C and SIGTERM stop gracefully: the current reconcile finishes, the
    # journal is closed with a snapshot and the clock, and a later run resumes.
    old = {sig: signal.signal(sig, lambda *_: cp.mgr.stop()) for sig in STOP_SIGNALS}
    try:
        if live and console.is_terminal:
            with Live(console=console, refresh_per_second=8, transient=True) as live_view:
                reason = cp.run(stop_at, on_round=on_round, stop_repeating=until is None)
        else:
            with quiet:
                reason = cp.run(stop_at, on_round=on_round, stop_repeating=until is None)
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
    rec.sample()
    rec.save()
    console.print(_queue_table(cp))
    console.print(_summary(cp, rec, reason))
    for line in _notes(cp):
        console.print(line, markup=False)
    errors = cp.mgr.stats.errors
    for e in errors[:10]:
        console.print(f"reconcile error: {e.controller} {e.key}: {e.error}", markup=False)
    for line in _refusals(cp, world):
        console.print(line, markup=False)
    for line in _admission_notes(cp, world):
        console.print(line, markup=False, soft_wrap=True)  # (JSON values unbroken)
    if reason == "repeating":
        console.print(_repeating(cp), markup=False, soft_wrap=True)
        return EXIT_REPEATING
    if cp.repeating:
        # --until overrides the horizon; the run went on, but say it cycles.
        console.print(_repeating(cp, stopped=False), markup=False, soft_wrap=True)
    return 1 if cp.refused else 0


# Not an input error (2) nor a refused object (1): a valid world whose run
# cannot end, stopped so that it does not run for ever.
EXIT_REPEATING = 3


def _repeating(cp: ControlPlane, stopped: bool = True) -> str:
    assert cp.repetition is not None
    head = "stopped: the run" if stopped else "note: ran to --until, but the run"
    return "\n".join(
        [
            f"{head} only repeats itself (nothing new for "
            f"{cp.repetition.horizon.total_seconds() / 3600:.0f}h of virtual time but "
            "the same evictions and re-admissions); these workloads cycle:",
            *cp.repeating,
        ]
    )


def _refusals(cp: ControlPlane, world: World) -> list[str]:
    """The world's objects the API server refused (a webhook, an admission
    plugin): named by file and document, with the field it refused."""
    if not cp.refused:
        return []
    n = len(cp.refused)
    out = [f"{plural(n, 'object')} of the world refused when created (not run):"]
    for r in cp.refused:
        out.append(f"  {world.source_of(r.obj)}: {r.error} (at {r.at:%Y-%m-%d %H:%M:%S})")
    return out


def _admission_notes(cp: ControlPlane, world: World) -> list[str]:
    """What the API server said of the world's objects when it created them
    besides yes or no, as kubectl prints it (``Warning: ...``), and the audit
    annotations a cluster's audit log would keep for those requests."""
    out: list[str] = []
    for obj, notes in cp.noted:
        source = world.source_of(obj)
        out += [f"{source}: Warning: {w}" for w in notes.warnings]
        out += [f"{source}: audit annotation {k}: {v}" for k, v in notes.annotations.items()]
    return out


def _notes(cp: ControlPlane, limit: int = 10) -> list[str]:
    """Why workloads still wait, and which Jobs Kueue never managed."""
    core = cp.kueue.core
    assert core is not None
    out: list[str] = []
    waiting = []
    for key in sorted(cp.mgr.informer(WORKLOAD).objects):
        view = core.workload(key)
        if view is not None and view.state in ("pending", "inadmissible", "unqueued"):
            waiting.append(f"  {key}: {view.explanation or view.message or view.state}")
    if waiting:
        out.append(f"{plural(len(waiting), 'workload')} still waiting:")
        out += waiting[:limit]
        if len(waiting) > limit:
            out.append(f"  ... and {len(waiting) - limit} more (kuota get workloads)")
    owned = {
        r.uid
        for wl in cp.mgr.informer(WORKLOAD).objects.values()
        for r in wl.metadata.owner_references or ()
    }
    # A JobSet made by a Kueue-managed owner (a TrainJob) is managed through it.
    owned |= {
        js.metadata.uid
        for js in cp.mgr.informer(JOB_SET).objects.values()
        if any(r.uid in owned for r in js.metadata.owner_references or ())
    }
    # A Job whose owner (a JobSet) has the Workload is managed through it.
    jobs = [
        (key, job)
        for key, job in sorted(cp.mgr.informer(JOB).objects.items())
        if job.metadata.uid not in owned
        and not any(r.uid in owned for r in job.metadata.owner_references or ())
    ]
    # A suspended Job with no Workload is held, not unmanaged: Kueue's job
    # reconciler could not make its Workload (a missing WorkloadPriorityClass,
    # ...), and says why in a Warning event on the Job.
    held = [(key, job) for key, job in jobs if job.spec is not None and job.spec.suspend]
    unmanaged = [key for key, job in jobs if not (job.spec is not None and job.spec.suspend)]
    if held:
        warnings = _last_warnings(cp)
        out.append(f"{plural(len(held), 'Job')} held suspended with no Workload:")
        for key, job in held[:limit]:
            why = warnings.get(job.metadata.uid or "", "no Workload was made for it")
            out.append(f"  {key}: {why}")
    # A JobSet's Jobs are the JobSet's: said once, of the JobSet.
    sets = sorted(
        {
            f"{job.metadata.namespace}/{ref.name}"
            for key, job in jobs
            if key in unmanaged
            for ref in job.metadata.owner_references or ()
            if ref.controller and ref.kind == "JobSet"
        }
    )
    set_jobs = {
        key
        for key, job in jobs
        if any(r.controller and r.kind == "JobSet" for r in job.metadata.owner_references or ())
    }
    for kind, adapter_rtype, framework, keys in (
        ("Job", JOB, "batch/job", [k for k in unmanaged if k not in set_jobs]),
        ("JobSet", JOB_SET, "jobset.x-k8s.io/jobset", sets),
    ):
        if not keys:
            continue
        why = (
            "no kueue.x-k8s.io/queue-name label, no LocalQueue named default in the "
            "namespace, or a namespace Kueue does not manage"
            if any(a.rtype == adapter_rtype for a in cp.adapters)
            else f"{framework} is not in the Configuration's integrations.frameworks"
        )
        n = len(keys)
        they = "it ran" if n == 1 else "they ran"
        out.append(f"{plural(n, kind)} not managed by Kueue ({why}): {they} without quota:")
        out += [f"  {k}" for k in keys[:limit]]
    return out


def _last_warnings(cp: ControlPlane) -> dict[str, str]:
    """The latest Warning event's reason and message per involved object's uid."""
    latest: dict[str, tuple[Any, str]] = {}
    for ev in cp.store.list(EVENT).items:
        uid = ev.involved_object.uid if ev.involved_object else None
        if ev.type != "Warning" or not uid:
            continue
        at = ev.last_timestamp or ev.metadata.creation_timestamp
        if uid not in latest or (at is not None and at >= latest[uid][0]):
            latest[uid] = (at, f"{ev.reason}: {ev.message}")
    return {uid: text for uid, (_, text) in latest.items()}


def _workloads_finished(rec: Recorder, jobs: int) -> tuple[int, int]:
    """Finished workloads and all seen so far (at least the world's Jobs),
    from the recorder's counts: no scan of the objects at every redraw."""
    done = sum(t.finished for t in rec.teams.values())
    seen = sum(t.workloads for t in rec.teams.values())
    return done, max(seen, jobs, 1)


def _queue_table(cp: ControlPlane) -> Table:
    t = Table(title=f"local queues at {cp.clock.now():%Y-%m-%d %H:%M:%S}", title_justify="left")
    for col in ("LOCALQUEUE", "CLUSTERQUEUE", "PENDING", "RESERVING", "ADMITTED"):
        t.add_column(col)
    for key, lq in sorted(cp.mgr.informer(LOCAL_QUEUE).objects.items()):
        st = lq.status or kt.LocalQueueStatus()
        t.add_row(
            key,
            lq.spec.cluster_queue or "",
            str(st.pending_workloads),
            str(st.reserving_workloads),
            str(st.admitted_workloads),
        )
    return t


def plural(n: int, noun: str) -> str:
    """``1 admission``, ``2 admissions``."""
    return f"{n} {noun if n == 1 else noun + 's'}"


def _evictions(by_reason: dict[str, int]) -> str:
    """Every eviction, by the Evicted condition's reason (Preempted,
    PodsReadyTimeout, AdmissionCheck, ClusterQueueStopped, Deactivated, ...)."""
    if not by_reason:
        return "no evictions"
    total = sum(by_reason.values())
    return (
        f"{plural(total, 'eviction')} ("
        + ", ".join(f"{n} {reason or 'no reason'}" for reason, n in by_reason.items())
        + ")"
    )


def _summary(cp: ControlPlane, rec: Recorder, reason: str) -> Group:
    elapsed = (cp.clock.now() - rec.first).total_seconds() if rec.first else 0.0
    util = rec.utilization
    title = (
        f"summary: {_fmt_seconds(elapsed)} of {'virtual' if cp.clock.virtual else 'real'} time, "
        f"stopped: {reason}; GPU utilization " + (f"{util:.1%}" if util is not None else "-")
    )
    workloads = sum(t.workloads for t in rec.teams.values())
    counts = (
        f"{plural(rec.admissions, 'admission')} of {plural(workloads, 'workload')}; "
        + _evictions(rec.evictions)
    )
    t = Table(title=title, title_justify="left")
    for col in (
        "TEAM",
        "WORKLOADS",
        "ADMITTED",
        "FINISHED",
        "MEAN WAIT",
        "P95 WAIT",
        "BORROWED GPU-H",
        "PREEMPTED",
        "EVICTED",
    ):
        t.add_column(col)
    for team, s in sorted(rec.teams.items()):
        t.add_row(
            team,
            str(s.workloads),
            str(s.admitted),
            str(s.finished),
            _fmt_seconds(s.mean_wait),
            _fmt_seconds(s.p95_wait),
            f"{s.borrowed_gpu_seconds / 3600:.2f}",
            str(s.preempted),
            str(sum(s.evictions.values())),
        )
    return Group(t, Text(counts))
