"""How far ``kuota predict``'s estimated start is from the replayed start.

Replays a trace against a design as ``kuota simulate`` does; for a sample of
its jobs (every k-th, --samples of them) the replay is stopped just before
the job's submission, its state forked (``embedded.fork``) and the job
predicted (``server.prediction.predict``); the replay then goes on, and the
job's replayed start (its first quota reservation) is compared with the
prediction. Prints the median and p90 absolute error (of all the jobs
predicted, and of those that were not admitted at once: their estimate is the
one that takes foresight), how many jobs the prediction said would never
start, the rules the expected ends came from, and the CPU it took.

``--durations declared`` (the default) leaves the trace's run times on its
Jobs (``kuota.dev/duration``): the fork knows every run exactly and the error
is the replay's own (what arrives later). ``--durations hidden`` takes them
off the fork's copies, as for jobs that declare nothing: every expected end
then comes from the finished workloads the fork sees (the trace's Jobs are
kept ``--keep-finished`` seconds after they finish, as a cluster's TTL keeps
them), which is what measures the median rule.

    .venv/bin/python bench/predict_error.py --trace ../shared/traces/alibaba-gpu-2023-openb.csv \\
        --world examples/traces/openb/shared-pool.yaml --samples 200
    .venv/bin/python bench/predict_error.py --preset dlrm --samples 100 --durations hidden
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import kuota
from kuota.api.conditions import find_condition
from kuota.cli.world import load_world
from kuota.cluster.controllers.run_keys import DURATION_ANNOTATION
from kuota.embedded.controlplane import ControlPlane
from kuota.embedded.fork import fork, snapshot
from kuota.server.prediction import predict
from kuota.sim.mapping import Mapping, load_mapping
from kuota.sim.report import nearest_rank
from kuota.sim.simulate import START, Design, prepare
from kuota.sim.trace import read_trace
from kuota.store import clone
from kuota.store.journal_replay import Recovered
from kuota.store.resources import JOB, POD, WORKLOAD


def _without(obj: Any, template: bool) -> Any:
    meta = obj.spec.template.metadata if template else obj.metadata
    ann = meta.annotations or {}
    if DURATION_ANNOTATION not in ann:
        return obj
    new = clone(obj)
    meta = new.spec.template.metadata if template else new.metadata
    meta.annotations = {k: v for k, v in ann.items() if k != DURATION_ANNOTATION}
    return new


def _hide_durations(state: Recovered) -> None:
    """The fork's copies of Jobs and pods without their declared run."""
    for rtype, template in ((JOB, True), (POD, False)):
        objs = state.objects.get(rtype, {})
        for k, o in objs.items():
            objs[k] = _without(o, template)


def _kept(groups: Any, seconds: int) -> Any:
    for at, jobs in groups:
        for j in jobs:
            j.spec.ttl_seconds_after_finished = seconds
        yield at, jobs


def measure(
    trace_path: str,
    world: list[str],
    mapping_path: str | None,
    samples: int,
    horizon_h: float,
    hidden: bool = False,
    keep_finished: int = 86400,
) -> dict[str, Any]:
    trace = read_trace(trace_path)
    mapping = load_mapping(mapping_path) if mapping_path else Mapping()
    w = load_world(world)
    assert w.config is not None and not w.problems, w.problems
    design = Design("design", " ".join(world), w.objects, w.config, w.openshift, w.scheduler)
    plan = prepare(trace, design, mapping)
    every = max(1, trace.count // samples)
    picks: list[tuple[datetime, Any]] = []
    i = 0
    for at, jobs in prepare(trace, design, mapping).job_groups():
        for job in jobs:
            if i % every == 0:
                picks.append((at, job))
            i += 1
    picked = {f"{j.metadata.namespace}/{j.metadata.name}" for _, j in picks}
    started: dict[str, datetime] = {}
    cp = ControlPlane(design.config, START, openshift=design.openshift, scheduler=design.scheduler)
    cp.mgr.recorder.enabled = False

    def on_workload(etype: str, wl: Any, old: Any | None) -> None:
        refs = wl.metadata.owner_references or []
        if not refs:
            return
        key = f"{wl.metadata.namespace}/{refs[0].name}"
        if key in picked and key not in started:
            c = find_condition(wl, "QuotaReserved")
            if c is not None and c.status == "True":
                started[key] = c.last_transition_time

    cp.mgr.informer(WORKLOAD).on_change(on_workload)
    groups = plan.job_groups()
    if hidden:
        groups = _kept(groups, keep_finished)
    _, first = next(groups)
    cp.submit(plan.objects)
    streaming = False

    def stream() -> None:
        # The trace's first instant is submitted after the picks made at it
        # are predicted (a job's prediction comes before its submission).
        nonlocal streaming
        if not streaming:
            cp.submit(first)
            cp.arrivals.add_stream(groups)
            streaming = True

    predicted: dict[str, datetime | None] = {}
    waited: set[str] = set()  # not admitted at once in the fork
    submitted: dict[str, datetime] = {}
    basis: dict[str, int] = {}
    cpu = time.process_time()
    fork_cpu = 0.0
    for at, job in picks:
        if at > START:
            stream()
            cp.run(at - timedelta(microseconds=1))
        t0 = time.process_time()
        state = snapshot(cp.store, at)
        if hidden:
            _hide_durations(state)
        f = fork(state, design.config)
        f.cp.mgr.recorder.enabled = False
        p = predict(f, clone(job), horizon=timedelta(hours=horizon_h))
        fork_cpu += time.process_time() - t0
        key = f"{job.metadata.namespace}/{job.metadata.name}"
        predicted[key] = p.estimated_start
        submitted[key] = at
        if not p.admitted_now:
            waited.add(key)
        for source, n in p.basis().items():
            basis[source] = basis.get(source, 0) + n
        print(
            f"{len(predicted)}/{len(picks)} at {at} cpu {time.process_time() - cpu:.1f}s"
            f" (forks {fork_cpu:.1f}s)",
            file=sys.stderr,
            flush=True,
        )
    stream()
    cp.run()
    errors: list[float] = []
    waiting: list[float] = []
    waits: list[float] = []  # the replayed waits of those not admitted at once (the scale)
    never = never_started = missed = 0
    for key, est in predicted.items():
        real = started.get(key)
        if est is None:
            never += 1
            never_started += real is None
            continue
        if real is None:
            missed += 1
            continue
        e = abs((est - real).total_seconds())
        errors.append(e)
        if key in waited:
            waiting.append(e)
            waits.append((real - submitted[key]).total_seconds())
    errors.sort()
    waiting.sort()
    return {
        "trace": trace_path,
        "world": world,
        "durations": "hidden" if hidden else "declared",
        "keep_finished_s": keep_finished if hidden else None,
        "jobs": trace.count,
        "predicted": len(predicted),
        "compared": len(errors),
        "median_abs_error_s": statistics.median(errors) if errors else None,
        "p90_abs_error_s": nearest_rank(errors, 90) if errors else None,
        "exact": sum(1 for e in errors if e == 0),
        "not_admitted_at_once": len(waited),
        "median_abs_error_s_not_admitted_at_once": statistics.median(waiting) if waiting else None,
        "p90_abs_error_s_not_admitted_at_once": nearest_rank(waiting, 90) if waiting else None,
        "median_replayed_wait_s_not_admitted_at_once": statistics.median(waits) if waits else None,
        "predicted_never": never,
        "predicted_never_and_never_started": never_started,
        "never_started_in_replay": missed,
        "expected_ends_by_rule": basis,
        "build": kuota.build(),
        "interpreter": kuota.interpreter(),
        "cpu_s": round(time.process_time() - cpu, 1),
        "cpu_s_forks": round(fork_cpu, 1),
    }


REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples" / "traces"
# The shipped traces with their example designs (make bench runs these).
PRESETS = {
    "openb": ("alibaba-gpu-2023-openb.csv", [EXAMPLES / "openb" / "qos-cohort.yaml"], None),
    "openb-shared": ("alibaba-gpu-2023-openb.csv", [EXAMPLES / "openb" / "shared-pool.yaml"], None),
    "dlrm": (
        "alibaba-gpu-2025-dlrm.csv",
        [EXAMPLES / "dlrm" / "per-app-quota.yaml"],
        EXAMPLES / "dlrm" / "mapping.yaml",
    ),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", choices=sorted(PRESETS), help="a shipped trace and its design")
    ap.add_argument("--traces", type=Path, default=REPO.parent / "shared" / "traces")
    ap.add_argument("--trace")
    ap.add_argument("--world", nargs="+")
    ap.add_argument("--mapping")
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--horizon-h", type=float, default=24 * 365, help="fork run limit (hours)")
    ap.add_argument("--durations", choices=("declared", "hidden"), default="declared")
    ap.add_argument(
        "--keep-finished",
        type=int,
        default=86400,
        help="with --durations hidden: seconds a finished Job (and its Workload) is kept",
    )
    ap.add_argument("--json", dest="json_out", help="also write the figures to this file")
    a = ap.parse_args()
    if a.preset:
        name, world, mapping = PRESETS[a.preset]
        a.trace, a.world = str(a.traces / name), [str(w) for w in world]
        a.mapping = str(mapping) if mapping else None
    if not a.trace or not a.world:
        ap.error("give --preset, or --trace and --world")
    out = measure(
        a.trace,
        a.world,
        a.mapping,
        a.samples,
        a.horizon_h,
        a.durations == "hidden",
        a.keep_finished,
    )
    text = json.dumps(out, indent=2)
    print(text)
    if a.json_out:
        with open(a.json_out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
