"""How far ``kuota predict``'s estimated start is from the replayed start.

Replays a trace against a design as ``kuota simulate`` does; for a sample of
its jobs (every k-th, --samples of them) the replay is stopped just before
the job's submission, its state forked (``embedded.fork``) and the job
predicted (``server.prediction.predict``); the replay then goes on, and the
job's replayed start (its first quota reservation) is compared with the
prediction. Prints the median and p90 absolute error, and how many jobs the
prediction said would never start.

    .venv/bin/python bench/predict_error.py --trace ../shared/traces/alibaba-gpu-2023-openb.csv \\
        --world examples/traces/openb/shared-pool.yaml --samples 200
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import datetime, timedelta
from typing import Any

from kuota.api.conditions import find_condition
from kuota.cli.world import load_world
from kuota.embedded.controlplane import ControlPlane
from kuota.embedded.fork import fork
from kuota.embedded.state_meta import CLOCK_META
from kuota.server.prediction import predict
from kuota.sim.mapping import Mapping, load_mapping
from kuota.sim.report import nearest_rank
from kuota.sim.simulate import START, Design, prepare
from kuota.sim.trace import read_trace
from kuota.store import clone
from kuota.store.journal_replay import Recovered
from kuota.store.resources import WORKLOAD


def _snapshot(cp: ControlPlane, at: datetime) -> Recovered:
    objects: dict[Any, dict[tuple[str, str], Any]] = {}
    for rtype, obj in cp.store.objects():
        objects.setdefault(rtype, {})[(obj.metadata.namespace or "", obj.metadata.name)] = obj
    seq = cp.store._seq  # (the generated names' sequence: the fork goes on from it)
    return Recovered(objects, cp.store.resource_version, seq, {CLOCK_META: at.isoformat()})


def measure(
    trace_path: str, world: list[str], mapping_path: str | None, samples: int, horizon_h: float
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
    _, first = next(groups)
    cp.submit([*plan.objects, *first])
    cp.arrivals.add_stream(groups)
    predicted: dict[str, datetime | None] = {}
    cpu = time.process_time()
    fork_cpu = 0.0
    for at, job in picks:
        if at > START:
            cp.run(at - timedelta(microseconds=1))
        t0 = time.process_time()
        f = fork(_snapshot(cp, at), design.config)
        f.cp.mgr.recorder.enabled = False
        p = predict(f, clone(job), horizon=timedelta(hours=horizon_h))
        fork_cpu += time.process_time() - t0
        predicted[f"{job.metadata.namespace}/{job.metadata.name}"] = p.estimated_start
        print(
            f"{len(predicted)}/{len(picks)} at {at} cpu {time.process_time() - cpu:.1f}s"
            f" (forks {fork_cpu:.1f}s)",
            file=sys.stderr,
            flush=True,
        )
    cp.run()
    errors: list[float] = []
    never = missed = 0
    for key, est in predicted.items():
        real = started.get(key)
        if est is None:
            never += 1
            continue
        if real is None:
            missed += 1
            continue
        errors.append(abs((est - real).total_seconds()))
    errors.sort()
    return {
        "trace": trace_path,
        "world": world,
        "jobs": trace.count,
        "predicted": len(predicted),
        "compared": len(errors),
        "median_abs_error_s": statistics.median(errors) if errors else None,
        "p90_abs_error_s": nearest_rank(errors, 90) if errors else None,
        "exact": sum(1 for e in errors if e == 0),
        "predicted_never": never,
        "never_started_in_replay": missed,
        "cpu_s": round(time.process_time() - cpu, 1),
        "cpu_s_forks": round(fork_cpu, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", required=True)
    ap.add_argument("--world", required=True, nargs="+")
    ap.add_argument("--mapping")
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--horizon-h", type=float, default=24 * 365, help="fork run limit (hours)")
    a = ap.parse_args()
    print(json.dumps(measure(a.trace, a.world, a.mapping, a.samples, a.horizon_h), indent=2))


if __name__ == "__main__":
    main()
