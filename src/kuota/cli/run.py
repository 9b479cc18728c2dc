"""``kuota run``: a world in the embedded control plane, with a live table and
a summary; ``kuota get`` / ``kuota describe`` read a kept state afterwards."""

from __future__ import annotations

import contextlib
import signal
import time
from datetime import UTC, datetime, timedelta

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, Progress, TextColumn
from rich.table import Table

from kuota.api.kueue import types as kt
from kuota.cli.files import CannotRead
from kuota.cli.progress import Progress as StderrProgress
from kuota.cli.world import World, load_world
from kuota.embedded.controlplane import JOB_INTEGRATIONS, ControlPlane
from kuota.embedded.run_report import Recorder
from kuota.runtime.clock import RealClock, VirtualClock
from kuota.store import StoreError
from kuota.store.resources import JOB, LOCAL_QUEUE, WORKLOAD

START = datetime(2026, 1, 1, tzinfo=UTC)
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
        console.print(f"{len(world.problems)} problem(s); nothing was run.", markup=False)
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
    for name in cp.unsimulated_frameworks:
        console.print(
            f"warning: {world.config_source or 'the Configuration'}: integrations.frameworks: "
            f'"{name}" is not simulated by the embedded control plane (only '
            f"{', '.join(JOB_INTEGRATIONS)}): its objects run as if Kueue did not manage them",
            markup=False,
        )
    try:
        code = _run(cp, world, until, live, console)
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
    cp: ControlPlane, world: World, until: timedelta | None, live: bool, console: Console
) -> int:
    cp.submit(world.objects)  # (a StoreError here is the state failing: run_world says it)
    assert cp.kueue.core is not None
    rec = Recorder(cp.mgr, cp.kueue.core)
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
                reason = cp.run(stop_at, on_round=on_round)
        else:
            with quiet:
                reason = cp.run(stop_at, on_round=on_round)
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
    rec.sample()
    console.print(_queue_table(cp))
    console.print(_summary(cp, rec, reason))
    for line in _notes(cp):
        console.print(line, markup=False)
    errors = cp.mgr.stats.errors
    for e in errors[:10]:
        console.print(f"reconcile error: {e.controller} {e.key}: {e.error}", markup=False)
    for line in _refusals(cp, world):
        console.print(line, markup=False)
    if reason == "repeating":
        console.print(_repeating(cp), markup=False, soft_wrap=True)
        return EXIT_REPEATING
    return 1 if cp.refused else 0


# Not an input error (2) nor a refused object (1): a valid world whose run
# cannot end, stopped so that it does not run for ever.
EXIT_REPEATING = 3


def _repeating(cp: ControlPlane) -> str:
    assert cp.repetition is not None
    return "\n".join(
        [
            f"stopped: the run only repeats itself (nothing new for "
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
    out = [f"{len(cp.refused)} object(s) of the world refused when created (not run):"]
    for r in cp.refused:
        out.append(f"  {world.source_of(r.obj)}: {r.error} (at {r.at:%Y-%m-%d %H:%M:%S})")
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
        out.append(f"{len(waiting)} workload(s) still waiting:")
        out += waiting[:limit]
        if len(waiting) > limit:
            out.append(f"  ... and {len(waiting) - limit} more (kuota get workloads)")
    owned = {
        r.uid
        for wl in cp.mgr.informer(WORKLOAD).objects.values()
        for r in wl.metadata.owner_references or ()
    }
    unmanaged = [
        key
        for key, job in sorted(cp.mgr.informer(JOB).objects.items())
        if job.metadata.uid not in owned
    ]
    if unmanaged:
        why = (
            "no kueue.x-k8s.io/queue-name label, no LocalQueue named default in the "
            "namespace, or a namespace Kueue does not manage"
            if any(a.rtype == JOB for a in cp.adapters)
            else "batch/job is not in the Configuration's integrations.frameworks"
        )
        out.append(f"{len(unmanaged)} Job(s) not managed by Kueue ({why}): they ran without quota:")
        out += [f"  {k}" for k in unmanaged[:limit]]
    return out


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


def _summary(cp: ControlPlane, rec: Recorder, reason: str) -> Table:
    elapsed = (cp.clock.now() - rec.first).total_seconds() if rec.first else 0.0
    util = rec.utilization
    title = (
        f"summary: {_fmt_seconds(elapsed)} of {'virtual' if cp.clock.virtual else 'real'} time, "
        f"stopped: {reason}; GPU utilization "
        + (f"{util:.1%}" if util is not None else "-")
        + f"; {cp.kueue.admissions} admissions, {cp.kueue.preemptions} preemptions"
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
        )
    return t
