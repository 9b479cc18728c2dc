"""The embedded control plane in virtual time: N Jobs through the whole
stack (store, Kueue controller, job integration, placement, kubelet, Job
controller). Prints wall time, workloads/s and peak memory.

    python bench/embedded_run.py [--jobs 10000] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import resource
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import kuota
from kuota.api.decode import decode_object
from kuota.api.kueue.config import load_config
from kuota.embedded.controlplane import ControlPlane

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TEAMS = 8


def _obj(m: dict[str, Any]) -> Any:
    doc = decode_object(m, source="bench", index=0)
    assert doc.ok, doc.errors
    return doc.obj


def world(jobs: int, seed: int = 1) -> list[Any]:
    rng = random.Random(seed)
    gpu = "nvidia.com/gpu"
    objs = [
        _obj(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ResourceFlavor",
                "metadata": {"name": "a100"},
            }
        )
    ]
    for t in range(TEAMS):
        objs.append(
            _obj(
                {
                    "apiVersion": "kueue.x-k8s.io/v1beta2",
                    "kind": "ClusterQueue",
                    "metadata": {"name": f"team-{t}"},
                    "spec": {
                        "cohortName": "all",
                        "namespaceSelector": {},
                        "preemption": {"reclaimWithinCohort": "Any"},
                        "resourceGroups": [
                            {
                                "coveredResources": ["cpu", gpu],
                                "flavors": [
                                    {
                                        "name": "a100",
                                        "resources": [
                                            {"name": "cpu", "nominalQuota": "256"},
                                            {"name": gpu, "nominalQuota": "32"},
                                        ],
                                    }
                                ],
                            }
                        ],
                    },
                }
            )
        )
        objs.append(
            _obj(
                {
                    "apiVersion": "kueue.x-k8s.io/v1beta2",
                    "kind": "LocalQueue",
                    "metadata": {"namespace": f"team-{t}", "name": "main"},
                    "spec": {"clusterQueue": f"team-{t}"},
                }
            )
        )
    alloc = {"cpu": "64", "memory": "512Gi", gpu: "8", "pods": "110"}
    for n in range(TEAMS * 4):
        objs.append(
            _obj(
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {"name": f"node-{n:03d}"},
                    "status": {"allocatable": alloc, "capacity": alloc},
                }
            )
        )
    at = T0
    for i in range(jobs):
        at += timedelta(seconds=rng.choice([5, 10, 20, 30]))
        g = rng.choice([1, 2, 4, 8])
        objs.append(
            _obj(
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "metadata": {
                        "namespace": f"team-{rng.randrange(TEAMS)}",
                        "name": f"job-{i:06d}",
                        "creationTimestamp": at.isoformat(),
                        "labels": {"kueue.x-k8s.io/queue-name": "main"},
                    },
                    "spec": {
                        "template": {
                            "metadata": {
                                "annotations": {
                                    "kuota.dev/duration": f"{rng.choice([5, 10, 20, 40])}m"
                                }
                            },
                            "spec": {
                                "restartPolicy": "Never",
                                "containers": [
                                    {
                                        "name": "c",
                                        "image": "i",
                                        "resources": {
                                            "requests": {"cpu": str(4 * g), gpu: str(g)},
                                            "limits": {gpu: str(g)},
                                        },
                                    }
                                ],
                            },
                        }
                    },
                }
            )
        )
    return objs


def main() -> None:
    print(f"build: {kuota.build()}, {kuota.interpreter()} (every figure below)")
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    cfg, _ = load_config({"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"})
    assert cfg is not None
    objs = world(args.jobs)
    cp = ControlPlane(cfg, T0)
    prof = cProfile.Profile() if args.profile else None
    t0, c0 = time.perf_counter(), time.process_time()
    if prof:
        prof.enable()
    cp.submit(objs)
    reason = cp.run()
    if prof:
        prof.disable()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    finished = cp.kueue.admissions
    print(
        f"embedded run: {args.jobs} Jobs, stopped {reason}, virtual {cp.clock.now() - T0}, "
        f"wall {wall:.2f} s, cpu {cpu:.2f} s, {args.jobs / wall:.0f} workloads/s, "
        f"{finished} admissions, {cp.mgr.stats.reconciles} reconciles, "
        f"{cp.store.resource_version} writes, peak RSS {peak:.0f} MiB"
    )
    if prof:
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
