"""Benchmark: object store throughput for 10,000 Jobs.

Reported as numbers, never asserted in tests. Three stores: in memory only,
journaled with an fsync per write (every call durable on return), and
journaled with group commit (``batch()`` around each phase: one fsync). The
journal lives in a temporary directory on the same disk as ``$TMPDIR``.

Phases: create, get, update (spec change, so the generation moves),
update_status, merge patch, list (all / one namespace / label selector),
watch (one watch reading every event; 10 watches filtered by namespace),
delete. Also the cost of ``clone`` and of reopening the journal.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import kuota
from kuota.api.decode import decode_object
from kuota.api.k8s import JobStatus
from kuota.store import MemoryStore, clone, open_store
from kuota.store.resources import JOB

NAMESPACES = 10


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now


def job(i: int) -> Any:
    doc = decode_object(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": f"job-{i}",
                "namespace": f"team-{i % NAMESPACES}",
                "labels": {
                    "kueue.x-k8s.io/queue-name": "main",
                    "size": "big" if i % 4 else "small",
                },
            },
            "spec": {
                "parallelism": 4,
                "completions": 4,
                "suspend": True,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
                        "containers": [
                            {
                                "name": "trainer",
                                "image": "trainer:1",
                                "resources": {
                                    "requests": {
                                        "cpu": "8",
                                        "memory": "64Gi",
                                        "nvidia.com/gpu": "1",
                                    },
                                    "limits": {"nvidia.com/gpu": "1"},
                                },
                            }
                        ],
                    }
                },
            },
        },
        source="bench",
        index=0,
    )
    assert doc.ok, doc.errors
    return doc.obj


def timed(label: str, n: int, fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    dt = time.perf_counter() - t0
    print(f"  {label:<28} {n / dt:>12,.0f} ops/s  ({dt / n * 1e6:8.1f} µs each)")
    return dt


def run(store: MemoryStore, jobs: list[Any], grouped: bool) -> None:
    n = len(jobs)
    names = [(j.metadata.namespace, j.metadata.name) for j in jobs]

    def phase(fn: Callable[[], object]) -> Callable[[], object]:
        if not grouped:
            return fn

        def wrapped() -> object:
            with store.batch():
                return fn()

        return wrapped

    start_rv = store.resource_version
    timed("create", n, phase(lambda: [store.create(j) for j in jobs]))
    timed("get", n, lambda: [store.get(JOB, ns, name) for ns, name in names])

    def updates() -> None:
        for ns, name in names:
            j = clone(store.get(JOB, ns, name))
            j.spec.parallelism = 2
            store.update(j)

    timed("clone + update", n, phase(updates))

    def statuses() -> None:
        for ns, name in names:
            j = store.get(JOB, ns, name)
            j = type(j)(api_version=j.api_version, kind=j.kind, metadata=j.metadata, spec=j.spec)
            j.status = JobStatus(active=2)
            store.update_status(j)

    timed("update_status", n, phase(statuses))
    timed(
        "patch (merge, labels)",
        n,
        phase(
            lambda: [
                store.patch(JOB, ns, name, {"metadata": {"labels": {"patched": "yes"}}})
                for ns, name in names
            ]
        ),
    )
    reps = 20
    timed(f"list all ({n})", reps, lambda: [store.list(JOB) for _ in range(reps)])
    timed(
        f"list one namespace ({n // NAMESPACES})",
        reps * 10,
        lambda: [store.list(JOB, "team-3") for _ in range(reps * 10)],
    )
    timed(
        "list selector size=small",
        reps,
        lambda: [store.list(JOB, label_selector="size=small") for _ in range(reps)],
    )
    events = store.resource_version - start_rv
    timed(f"watch: read {events} events", events, lambda: store.watch(None, start_rv).poll())

    def filtered() -> None:
        for k in range(NAMESPACES):
            store.watch(JOB, start_rv, namespace=f"team-{k}").poll()

    timed(f"10 ns-filtered watches x {events}", events * NAMESPACES, filtered)
    timed("delete", n, phase(lambda: [store.delete(JOB, ns, name) for ns, name in names]))


def main() -> None:
    print(f"build: {kuota.build()}, {kuota.interpreter()} (every figure below)")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=10_000, help="number of Jobs")
    args = ap.parse_args()
    jobs = [job(i) for i in range(args.n)]

    t0 = time.perf_counter()
    reps = 1000
    for _ in range(reps):
        clone(jobs[0])
    print(f"clone of a Job: {(time.perf_counter() - t0) / reps * 1e6:.1f} µs")

    print(f"memory store, {args.n} Jobs")
    run(MemoryStore(Clock()), jobs, grouped=False)
    with tempfile.TemporaryDirectory() as tmp:
        print(f"journaled store, fsync per write, {args.n} Jobs")
        state = Path(tmp) / "per-write"
        store = open_store(state, Clock())
        run(store, jobs, grouped=False)
        store.close()
        print(f"journaled store, group commit (one batch per phase), {args.n} Jobs")
        state = Path(tmp) / "grouped"
        store = open_store(state, Clock())
        run(store, jobs, grouped=True)
        with store.batch():
            for j in jobs:
                store.create(j)
        crashed = Path(tmp) / "crashed"
        shutil.copytree(state, crashed)  # the disk as a crash would leave it: no final snapshot
        t0 = time.perf_counter()
        store.close()
        print(f"  close (snapshot of {args.n} Jobs)     {time.perf_counter() - t0:8.3f} s")
        t0 = time.perf_counter()
        open_store(state, Clock()).close()
        print(f"  reopen from the snapshot           {time.perf_counter() - t0:8.3f} s")
        t0 = time.perf_counter()
        store = open_store(crashed, Clock())
        print(f"  reopen after a crash (replay)      {time.perf_counter() - t0:8.3f} s")
        store.close()


if __name__ == "__main__":
    main()
