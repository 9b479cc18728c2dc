"""Benchmark: one admission cycle with 1,000 ClusterQueues in 10 cohorts.

Reported as numbers (``make bench``), never asserted in tests. The goal it
watches: a cycle's cost grows with the heads (one per ClusterQueue), not with
the backlog -- the 100k-pending cycle within 1.5x of the 1k-pending one -- and
a pending workload costs at most 4 KiB.

The world: one ResourceFlavor, 10 Cohorts of 100 ClusterQueues (cpu
nominalQuota 10, borrowing unlimited inside the cohort, preemption
withinClusterQueue LowerPriority), one Namespace, one LocalQueue per
ClusterQueue. Before the pending workloads arrive, every ClusterQueue is filled
to its nominal quota by ten 1-cpu "running" workloads, admitted through
ordinary cycles, so the cluster is full and both sizes start with a head in
every ClusterQueue. The N pending workloads (1 podSet, count 1, from a seeded
generator) are spread round-robin over the LocalQueues: 1 per ClusterQueue at
1k, 100 at 100k.

Variants (each on a fresh world):

* ``saturated``: StrictFIFO, nothing finishes: the steady state of a full
  cluster, where every cycle re-evaluates 1,000 heads that fit nowhere. Nine
  of each ClusterQueue's fillers have priority 10 and one priority 0; the
  pending workloads ask 2-4 cpu at priority 1-9. So every head, at either
  size, fails flavor assignment and then a preemption search over its one
  lower-priority candidate (1 cpu, too little), and the sizes differ only in
  their backlog. The 1.5x goal is read here. (Until session 21 every filler
  had priority 0 and the pending asked 1-4 cpu: the 100k heads then searched
  lower-priority candidates every cycle while the 1k heads, the re-queued
  priority-0 fillers, had none, so the ratio mixed two kinds of head work.)
* ``churn``: BestEffortFIFO (Kueue's default), priority-0 fillers, pending
  1-4 cpu at priority 0-9; before each cycle the oldest ``--finish`` running
  workloads finish (``core.finish``), so cycles keep admitting. Finish events
  are timed apart from the cycles (``event ms``): releasing quota wakes the
  parked workloads of the whole cohort.

Every run keeps the garbage collector at the pace of a kuota process
(``kuota.runtime.gcpolicy``); the GC time inside the cycles is shown apart.

Memory per pending workload is measured on its own world with tracemalloc
(tracing slows allocation, so timed runs are untraced): ``objects`` is what
building the Workload objects costs, ``core`` what ``core.add`` adds on top.

Options: ``--sizes 1000,100000``, ``--cycles 200``, ``--variants``, ``--finish``,
``--no-memory``; ``--profile`` adds one untimed cProfile run per variant at the
largest size and prints its top 15 entries by cumulative time.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import pstats
import random
import statistics
import time
import tracemalloc
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from msgspec.structs import replace
from rich.console import Console
from rich.table import Table

import kuota
from kuota.api.decode import decode_object
from kuota.api.kueue import types as kt
from kuota.api.kueue.config import config_from_scenario
from kuota.api.meta import ObjectMeta
from kuota.api.quantity import Quantity
from kuota.runtime import gcpolicy
from kuota.scheduler.admission.admission_core import AdmissionCore

API = "kueue.x-k8s.io/v1beta2"
COHORTS = 10
CQS_PER_COHORT = 100
NOMINAL_CPU = 10
FLAVOR = "default"
NAMESPACE = "bench"
SEED = 20240601
T0 = datetime(2025, 1, 1, tzinfo=UTC)
VARIANTS = ("saturated", "churn")
STRATEGY = {"saturated": "StrictFIFO", "churn": "BestEffortFIFO"}
PROTECTED_PRIORITY = 10
# Per variant: fillers at PROTECTED_PRIORITY per ClusterQueue; the pending
# workloads' cpu and priority ranges.
PROTECTED = {"saturated": NOMINAL_CPU - 1, "churn": 0}
PENDING_CPU = {"saturated": (2, 4), "churn": (1, 4)}
PENDING_PRIORITY = {"saturated": (1, 9), "churn": (0, 9)}


def _decode(raw: dict[str, Any]) -> Any:
    doc = decode_object(raw)
    if not doc.ok:
        raise SystemExit("\n".join(doc.shown(err) for err in doc.errors))
    return doc.obj


class Objects:
    """Stamps out typed objects; every one gets a uid and a creationTimestamp."""

    def __init__(self) -> None:
        self.serial = 0
        self.wl_template: kt.Workload = _decode(
            {
                "apiVersion": API,
                "kind": "Workload",
                "metadata": {"name": "template", "namespace": NAMESPACE},
                "spec": {
                    "queueName": "lq-0",
                    "priority": 0,
                    "podSets": [
                        {
                            "name": "main",
                            "count": 1,
                            "template": {
                                "spec": {
                                    "restartPolicy": "Never",
                                    "containers": [
                                        {
                                            "name": "main",
                                            "image": "registry.example/job:1",
                                            "resources": {"requests": {"cpu": "1"}},
                                        }
                                    ],
                                }
                            },
                        }
                    ],
                },
            }
        )
        self.cpu = {n: Quantity(str(n)) for n in range(1, 5)}

    def _meta(self, name: str, namespace: str = "") -> ObjectMeta:
        self.serial += 1
        return ObjectMeta(
            name=name,
            namespace=namespace,
            uid=f"00000000-0000-4000-8000-{self.serial:012d}",
            creation_timestamp=T0 + timedelta(milliseconds=self.serial),
        )

    def decoded(self, raw: dict[str, Any]) -> Any:
        obj = _decode(raw)
        m = self._meta(obj.metadata.name, obj.metadata.namespace)
        obj.metadata.uid, obj.metadata.creation_timestamp = m.uid, m.creation_timestamp
        return obj

    def workload(self, name: str, queue: str, cpu: int, priority: int) -> kt.Workload:
        """A fresh Workload: its own metadata, spec, podSet, template, container
        and requests (what a decoder would build); no status object."""
        t = self.wl_template
        ps = t.spec.pod_sets[0]
        tmpl = ps.template
        assert tmpl.spec is not None
        c = tmpl.spec.containers[0]
        container = replace(c, resources=replace(c.resources, requests={"cpu": self.cpu[cpu]}))
        pod_set = replace(
            ps,
            template=replace(
                tmpl,
                metadata=ObjectMeta(),
                spec=replace(tmpl.spec, containers=[container]),
            ),
        )
        return replace(
            t,
            metadata=self._meta(name, NAMESPACE),
            spec=replace(t.spec, queue_name=queue, priority=priority, pod_sets=[pod_set]),
            status=None,
        )


def cq_name(i: int) -> str:
    return f"cq-{i:04d}"


def lq_name(i: int) -> str:
    return f"lq-{i:04d}"


def build_world(objs: Objects, strategy: str) -> AdmissionCore:
    """Flavor, namespace, cohorts, ClusterQueues and LocalQueues; no workloads."""
    core = AdmissionCore(config_from_scenario({}, None), T0)
    core.add(
        objs.decoded({"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": FLAVOR}})
    )
    core.add(
        objs.decoded({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    )
    for c in range(COHORTS):
        core.add(
            objs.decoded(
                {
                    "apiVersion": API,
                    "kind": "Cohort",
                    "metadata": {"name": f"cohort-{c}"},
                    "spec": {},
                }
            )
        )
    cq_raw: dict[str, Any] = {
        "apiVersion": API,
        "kind": "ClusterQueue",
        "metadata": {"name": "x"},
        "spec": {
            "cohortName": "x",
            "namespaceSelector": {},
            "queueingStrategy": strategy,
            "preemption": {"withinClusterQueue": "LowerPriority"},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [
                        {
                            "name": FLAVOR,
                            "resources": [{"name": "cpu", "nominalQuota": str(NOMINAL_CPU)}],
                        }
                    ],
                }
            ],
        },
    }
    for i in range(COHORTS * CQS_PER_COHORT):
        cq_raw["metadata"]["name"] = cq_name(i)
        cq_raw["spec"]["cohortName"] = f"cohort-{i // CQS_PER_COHORT}"
        core.add(objs.decoded(cq_raw))
    for i in range(COHORTS * CQS_PER_COHORT):
        core.add(
            objs.decoded(
                {
                    "apiVersion": API,
                    "kind": "LocalQueue",
                    "metadata": {"name": lq_name(i), "namespace": NAMESPACE},
                    "spec": {"clusterQueue": cq_name(i)},
                }
            )
        )
    return core


def fill(core: AdmissionCore, objs: Objects, protected: int = 0) -> list[str]:
    """Fill every ClusterQueue to its nominal quota with 1-cpu workloads,
    admitted by ordinary cycles: ``protected`` of each ClusterQueue's at
    PROTECTED_PRIORITY, the others at priority 0. Returns their keys, oldest
    first."""
    n_cq = COHORTS * CQS_PER_COHORT
    for j in range(NOMINAL_CPU):
        priority = PROTECTED_PRIORITY if j < protected else 0
        for i in range(n_cq):
            core.add(objs.workload(f"run-{i:04d}-{j}", lq_name(i), 1, priority))
    admitted: list[str] = []
    for _ in range(4 * NOMINAL_CPU):
        admitted += core.cycle().admitted
        if len(admitted) == n_cq * NOMINAL_CPU:
            break
    assert len(admitted) == n_cq * NOMINAL_CPU, len(admitted)
    return admitted


def pending_specs(
    n: int, cpu: tuple[int, int] = (1, 4), priority: tuple[int, int] = (0, 9)
) -> Iterator[tuple[str, str, int, int]]:
    """(name, LocalQueue, cpu, priority) of the n pending workloads; cpu and
    priority drawn uniformly from the inclusive ranges."""
    rng = random.Random(SEED)
    n_cq = COHORTS * CQS_PER_COHORT
    for k in range(n):
        yield f"job-{k:06d}", lq_name(k % n_cq), rng.randint(*cpu), rng.randint(*priority)


def pending_count(core: AdmissionCore) -> int:
    return sum(q.pending_count() + len(q.inflight) for q in core.queues.cqs.values())


class GcTimer:
    """Time the cyclic garbage collector spends while ``on`` (gc.callbacks)."""

    def __init__(self) -> None:
        self.on = False
        self.ms = 0.0
        self.full = 0  # generation-2 collections
        self._t = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if not self.on:
            return
        if phase == "start":
            self._t = time.perf_counter()
            return
        self.ms += (time.perf_counter() - self._t) * 1e3
        self.full += info["generation"] == 2

    def __enter__(self) -> GcTimer:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


@dataclass
class Run:
    size: int
    variant: str
    world_s: float = 0.0  # queues, flavor, cohorts + the filler workloads' cycles
    build_s: float = 0.0  # building the pending Workload objects
    add_s: float = 0.0  # core.add of the pending workloads
    cycle_ms: list[float] = field(default_factory=list)
    cycle_gc_ms: list[float] = field(default_factory=list)  # GC inside each cycle
    event_ms: list[float] = field(default_factory=list)
    heads: list[int] = field(default_factory=list)
    admitted: int = 0
    preempted: int = 0
    finished: int = 0
    pending_end: int = 0
    advance_ms: float = 0.0
    gc_ms: float = 0.0  # inside the timed cycles
    gc_full: int = 0

    def pct(self, p: float, xs: list[float] | None = None) -> float:
        xs = sorted(self.cycle_ms if xs is None else xs)
        if not xs:
            return 0.0
        return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]

    @property
    def excl_gc(self) -> list[float]:
        return [c - g for c, g in zip(self.cycle_ms, self.cycle_gc_ms, strict=True)]

    @property
    def admissions_per_s(self) -> float:
        total = sum(self.cycle_ms) / 1e3
        return self.admitted / total if total else 0.0

    def summary(self) -> dict[str, Any]:
        return {
            "size": self.size,
            "variant": self.variant,
            "strategy": STRATEGY[self.variant],
            "cycles": len(self.cycle_ms),
            "p50_ms": round(self.pct(50), 3),
            "p99_ms": round(self.pct(99), 3),
            "p50_ms_excl_gc": round(self.pct(50, self.excl_gc), 3),
            "mean_ms": round(statistics.fmean(self.cycle_ms), 3) if self.cycle_ms else 0.0,
            "mean_heads": round(statistics.fmean(self.heads), 1) if self.heads else 0.0,
            "admitted": self.admitted,
            "admissions_per_s": round(self.admissions_per_s, 1),
            "preempted": self.preempted,
            "finished": self.finished,
            "event_p50_ms": round(self.pct(50, self.event_ms), 3),
            "event_p99_ms": round(self.pct(99, self.event_ms), 3),
            "pending_end": self.pending_end,
            "setup_world_s": round(self.world_s, 3),
            "build_pending_s": round(self.build_s, 3),
            "add_pending_s": round(self.add_s, 3),
            "advance_ms": round(self.advance_ms, 3),
            "gc_ms_in_cycles": round(self.gc_ms, 1),
            "gc_full_collections": self.gc_full,
        }


def run(
    size: int, variant: str, cycles: int, finish_per_cycle: int, profile: cProfile.Profile | None
) -> Run:
    r = Run(size, variant)
    t0 = time.perf_counter()
    objs = Objects()
    core = build_world(objs, STRATEGY[variant])
    running = deque(fill(core, objs, PROTECTED[variant]))
    t1 = time.perf_counter()
    specs = pending_specs(size, PENDING_CPU[variant], PENDING_PRIORITY[variant])
    wls = [objs.workload(*spec) for spec in specs]
    t2 = time.perf_counter()
    for wl in wls:
        core.add(wl)
    t3 = time.perf_counter()
    del wls
    r.world_s, r.build_s, r.add_s = t1 - t0, t2 - t1, t3 - t2

    gc.collect()
    with GcTimer() as gct:
        cycle_loop(core, r, running, cycles, finish_per_cycle, profile, gct)
    r.gc_ms, r.gc_full = gct.ms, gct.full
    r.pending_end = pending_count(core)

    # Advancing the clock looks for due timers; timed once, outside the cycles.
    ta = time.perf_counter()
    core.advance(core.now + timedelta(seconds=1))
    r.advance_ms = (time.perf_counter() - ta) * 1e3
    return r


def cycle_loop(
    core: AdmissionCore,
    r: Run,
    running: deque[str],
    cycles: int,
    finish_per_cycle: int,
    profile: cProfile.Profile | None,
    gct: GcTimer,
) -> None:
    for _ in range(cycles):
        if r.variant == "churn":
            if profile is not None:
                profile.enable()
            te = time.perf_counter()
            done = 0
            while running and done < finish_per_cycle:
                key = running.popleft()
                if key in core.snap.holders:  # not preempted meanwhile
                    core.finish(key)
                    done += 1
            r.event_ms.append((time.perf_counter() - te) * 1e3)
            if profile is not None:
                profile.disable()
            r.finished += done
        core.complete_evictions()  # the preempted jobs stopped: quota released
        if profile is not None:
            profile.enable()
        gct.on = True
        g0 = gct.ms
        tc = time.perf_counter()
        res = core.cycle()
        dt = time.perf_counter() - tc
        gct.on = False
        if profile is not None:
            profile.disable()
        r.cycle_ms.append(dt * 1e3)
        r.cycle_gc_ms.append(gct.ms - g0)
        r.heads.append(len(res.admitted) + len(res.waiting))
        r.admitted += len(res.admitted)
        r.preempted += len(res.preempted)
        running.extend(res.admitted)
        if pending_count(core) == 0:
            break


@dataclass
class Memory:
    size: int
    objects_b: float  # building one Workload object
    core_b: float  # what core.add keeps on top of it
    peak_b: float  # tracemalloc peak while adding, per workload

    @property
    def total_b(self) -> float:
        return self.objects_b + self.core_b


def measure_memory(size: int) -> Memory:
    objs = Objects()
    core = build_world(objs, "BestEffortFIFO")
    fill(core, objs)
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    wls = [objs.workload(*spec) for spec in pending_specs(size)]
    gc.collect()
    built = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    for wl in wls:
        core.add(wl)
    del wls
    gc.collect()
    added, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return Memory(size, (built - base) / size, (added - built) / size, (peak - built) / size)


def print_profile(prof: cProfile.Profile, title: str, console: Console) -> None:
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("cumulative").print_stats(15)
    console.print(f"\n[bold]{title}[/bold] (cProfile, top 15 by cumulative time)")
    text = out.getvalue()
    start = text.find("   ncalls")
    console.print((text[start:] if start >= 0 else text).rstrip(), markup=False, highlight=False)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument(
        "--sizes",
        type=lambda s: [int(x) for x in s.split(",") if x],
        default=[1_000, 100_000],
        help="pending workloads, comma-separated (default 1000,100000)",
    )
    p.add_argument("--cycles", type=int, default=200, help="measured cycles per run (default 200)")
    p.add_argument(
        "--variants",
        type=lambda s: [v for v in s.split(",") if v],
        default=list(VARIANTS),
        help="saturated,churn (default both)",
    )
    p.add_argument(
        "--finish",
        type=int,
        default=200,
        help="running workloads finished before each churn cycle (default 200)",
    )
    p.add_argument("--no-memory", action="store_true", help="skip the tracemalloc pass")
    p.add_argument(
        "--profile",
        action="store_true",
        help="also profile the largest size (a separate, untimed run per variant)",
    )
    args = p.parse_args(argv)
    for v in args.variants:
        if v not in VARIANTS:
            p.error(f"unknown variant {v!r}; known: {', '.join(VARIANTS)}")
    return args


def main(argv: list[str] | None = None) -> None:
    print(f"build: {kuota.build()}, {kuota.interpreter()} (every figure below)")
    args = parse_args(argv)
    gcpolicy.tune()  # the pace `kuota run` and the control plane collect at
    console = Console(width=max(Console().width, 200))
    sizes: list[int] = sorted(args.sizes)
    runs: list[Run] = []
    for variant in args.variants:
        for size in sizes:
            runs.append(run(size, variant, args.cycles, args.finish, None))
    mems = [] if args.no_memory else [measure_memory(size) for size in sizes]

    t = Table(
        title=f"admission cycle: {COHORTS * CQS_PER_COHORT} ClusterQueues in {COHORTS} cohorts"
    )
    for col in (
        "pending",
        "variant",
        "cycles",
        "heads/cycle",
        "p50 ms",
        "p99 ms",
        "p50 ms w/o gc",
        "admitted",
        "adm/s",
        "preempted",
        "event p50/p99 ms",
        "setup s: world/build/add",
        "advance ms",
        "gc ms (full)",
    ):
        t.add_column(col, justify="right")
    for r in runs:
        s = r.summary()
        t.add_row(
            f"{r.size:,}",
            f"{r.variant} ({s['strategy']})",
            str(s["cycles"]),
            f"{s['mean_heads']:.0f}",
            f"{s['p50_ms']:.2f}",
            f"{s['p99_ms']:.2f}",
            f"{s['p50_ms_excl_gc']:.2f}",
            f"{r.admitted:,}",
            f"{s['admissions_per_s']:,.0f}",
            f"{r.preempted:,}",
            f"{s['event_p50_ms']:.1f}/{s['event_p99_ms']:.1f}" if r.event_ms else "-",
            f"{r.world_s:.2f}/{r.build_s:.2f}/{r.add_s:.2f}",
            f"{r.advance_ms:.1f}",
            f"{r.gc_ms:.0f} ({r.gc_full})",
        )
    console.print(t)

    ratios: dict[str, dict[str, float]] = {}
    if len(sizes) >= 2:
        for variant in args.variants:
            by = {r.size: r for r in runs if r.variant == variant}
            lo, hi = by[sizes[0]], by[sizes[-1]]
            if not (lo.pct(50) and lo.heads and hi.heads):
                continue
            ratios[variant] = {
                "p50": hi.pct(50) / lo.pct(50),
                "p50_excl_gc": hi.pct(50, hi.excl_gc) / lo.pct(50, lo.excl_gc),
                # Per head: the 1k churn run drains and ends with fewer heads.
                "p50_per_head": (hi.pct(50) / statistics.fmean(hi.heads))
                / (lo.pct(50) / statistics.fmean(lo.heads)),
            }
        for variant, rt in ratios.items():
            if variant == "saturated":
                verdict = "ok" if rt["p50"] <= 1.5 else "OVER the 1.5x goal"
            else:  # the small run drains its backlog: its cycles are not alike
                verdict = "for information"
            console.print(
                f"p50 cycle {sizes[-1]:,} / {sizes[0]:,} pending ({variant}): {rt['p50']:.2f}x "
                f"(without GC {rt['p50_excl_gc']:.2f}x, per head {rt['p50_per_head']:.2f}x)"
                f" -- {verdict}"
            )
    for m in mems:
        verdict = "ok" if m.total_b <= 4096 else "OVER the 4 KiB goal"
        console.print(
            f"memory per pending workload at {m.size:,}: {m.total_b / 1024:.2f} KiB "
            f"(objects {m.objects_b / 1024:.2f} + core {m.core_b / 1024:.2f}; "
            f"peak while adding {m.peak_b / 1024:.2f}) -- {verdict}"
        )

    print(
        json.dumps(
            {
                "bench": "admission_cycle",
                "cluster_queues": COHORTS * CQS_PER_COHORT,
                "cohorts": COHORTS,
                "runs": [r.summary() for r in runs],
                "ratios": {v: {k: round(x, 3) for k, x in rt.items()} for v, rt in ratios.items()},
                "memory_per_pending_bytes": {
                    str(m.size): {
                        "total": round(m.total_b),
                        "objects": round(m.objects_b),
                        "core": round(m.core_b),
                        "peak_while_adding": round(m.peak_b),
                    }
                    for m in mems
                },
            }
        )
    )
    if args.profile:
        # A separate run per variant: the profiler's overhead stays out of the timings.
        for variant in args.variants:
            prof = cProfile.Profile()
            run(sizes[-1], variant, args.cycles, args.finish, prof)
            what = "cycles and finish events" if variant == "churn" else "cycles"
            print_profile(prof, f"{what} at {sizes[-1]:,} pending, {variant}", console)


if __name__ == "__main__":
    main()
