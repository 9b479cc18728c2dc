"""Benchmark: placing 10,000 pods on 1,000 nodes.

Reported as numbers, never asserted in tests. Pods request cpu, memory and
sometimes GPUs and choose a node pool by nodeSelector (the common shape of
batch pods: no host ports, no inter-pod or spread terms). Each profile is
measured two ways:

* placement: ``KubeScheduler.place`` and recording the binding in the
  snapshot, nothing else (what the scheduler decides with);
* controller: the embedded PodScheduler in a Manager over a MemoryStore —
  pods created, one scheduling cycle binding them all (spec update and
  PodScheduled status write per pod), informer events included.

Each figure is given by wall time and by the process's CPU time: on a
machine shared with other work the CPU figure is the steadier one.

``--profile`` runs cProfile on the placement of one profile and prints the
top entries by cumulative and by own time.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import random
import time
from datetime import UTC, datetime
from typing import Any

import kuota
from kuota.api.decode import decode_object
from kuota.api.k8s import Node, Pod
from kuota.cluster import KubeScheduler, PodScheduler
from kuota.cluster.kubescheduler.cluster_snapshot import ClusterSnapshot
from kuota.runtime.clock import VirtualClock
from kuota.runtime.manager import Manager
from kuota.store import MemoryStore, clone
from kuota.store.resources import POD

POOLS = ("cpu-a", "cpu-b", "gpu-a100", "gpu-h100")
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _decode(raw: dict[str, Any]) -> Any:
    doc = decode_object(raw, source="bench", index=0)
    assert doc.ok, doc.errors
    return doc.obj


def nodes(n: int) -> list[Node]:
    out = []
    for i in range(n):
        pool = POOLS[(i % 10) // 4 if i % 10 < 8 else 2 + i % 2]  # 80% cpu, 20% gpu nodes
        alloc = {"cpu": "64", "memory": "512Gi", "pods": "250"}
        if pool.startswith("gpu"):
            alloc["nvidia.com/gpu"] = "8"
        out.append(
            _decode(
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {
                        "name": f"node-{i:04d}",
                        "labels": {"pool": pool, "topology.kubernetes.io/zone": f"z{i % 3}"},
                    },
                    "status": {"allocatable": alloc, "capacity": alloc},
                }
            )
        )
    return out


KINDS = ("simple", "spread", "anti-affinity")


def _terms(kind: str, app: str) -> dict[str, Any]:
    """What a pod of ``kind`` adds to its spec: a zone spread constraint
    (DoNotSchedule) or a preferred anti-affinity on hostname, over its app."""
    selector = {"matchLabels": {"app": app}}
    if kind == "spread":
        return {
            "topologySpreadConstraints": [
                {
                    "maxSkew": 1,
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": selector,
                }
            ]
        }
    if kind == "anti-affinity":
        term = {"topologyKey": "kubernetes.io/hostname", "labelSelector": selector}
        return {
            "affinity": {
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 100, "podAffinityTerm": term}
                    ]
                }
            }
        }
    return {}


def pods(n: int, seed: int = 7, kind: str = "simple") -> list[Pod]:
    """``kind``: "simple" (resources and nodeSelector only), "spread" or
    "anti-affinity" (the same, plus :func:`_terms` over one of 50 apps)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        pool = rng.choice(POOLS[:2]) if rng.random() < 0.9 else rng.choice(POOLS[2:])
        requests = {
            "cpu": rng.choice(["500m", "1", "2", "4"]),
            "memory": rng.choice(["1Gi", "4Gi", "8Gi"]),
        }
        if pool.startswith("gpu"):
            requests["nvidia.com/gpu"] = "1"
        out.append(
            _decode(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"pod-{i:05d}",
                        "namespace": "bench",
                        "labels": {"app": f"app-{i % 50}"},
                    },
                    "spec": {
                        **_terms(kind, f"app-{i % 50}"),
                        "restartPolicy": "Never",
                        "nodeSelector": {"pool": pool},
                        "containers": [
                            {
                                "name": "main",
                                "image": "busybox",
                                "resources": {"requests": requests, "limits": requests},
                            }
                        ],
                    },
                }
            )
        )
    return out


Timing = tuple[float, float, int]  # wall seconds, CPU seconds, pods placed


def place_all(profile: str, node_objs: list[Node], pod_objs: list[Pod]) -> Timing:
    snap = ClusterSnapshot()
    for n in node_objs:
        snap.set_node(n)
    sched = KubeScheduler(profile)
    placed = 0
    gc.collect()  # not the garbage of an earlier measurement
    t, c = time.perf_counter(), time.process_time()
    for p in pod_objs:
        result = sched.place(p, snap)
        if result.node is not None:
            bound = clone(p)
            assert bound.spec is not None
            bound.spec.node_name = result.node
            key = f"{p.metadata.namespace}/{p.metadata.name}"
            snap.set_pod(key, bound, sched.bound_info(p, result.node))
            placed += 1
    return time.perf_counter() - t, time.process_time() - c, placed


def through_controller(profile: str, node_objs: list[Node], pod_objs: list[Pod]) -> Timing:
    clock = VirtualClock(T0)
    store = MemoryStore(clock.now)
    mgr = Manager(store, clock)
    mgr.add(PodScheduler(KubeScheduler(profile)))
    with store.batch():
        for n in node_objs:
            store.create(clone(n))
    mgr.run_until_idle()
    with store.batch():
        for p in pod_objs:
            store.create(clone(p))
    gc.collect()
    t, c = time.perf_counter(), time.process_time()
    mgr.run_until_idle()
    elapsed, cpu = time.perf_counter() - t, time.process_time() - c
    placed = sum(1 for p in store.list(POD).items if p.spec.node_name)
    return elapsed, cpu, placed


def _row(label: str, path: str, n: int, timing: Timing) -> None:
    elapsed, cpu, placed = timing
    print(
        f"  {label:<36} {path:<10} {placed:>6}  {elapsed:6.2f} "
        f"{n / elapsed:8.0f}  {cpu:6.2f} {n / cpu:8.0f}"
    )


def main() -> None:
    print(f"build: {kuota.build()}, {kuota.interpreter()} (every figure below)")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=10_000)
    ap.add_argument(
        "--other-pods",
        type=int,
        default=1000,
        metavar="N",
        help="pods of the other kinds (spread, anti-affinity), placed by a full pass each",
    )
    ap.add_argument("--profile", metavar="PROFILE", help="cProfile the placement under PROFILE")
    ap.add_argument("--kind", choices=KINDS, default="simple", help="pods to profile")
    args = ap.parse_args()
    node_objs = nodes(args.nodes)
    if args.profile:
        n = args.pods if args.kind == "simple" else args.other_pods
        pod_objs = pods(n, kind=args.kind)
        prof = cProfile.Profile()
        prof.enable()
        place_all(args.profile, node_objs, pod_objs)
        prof.disable()
        for order in ("cumulative", "tottime"):
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats(order).print_stats(15)
            print(out.getvalue())
        return
    print(f"placement: {args.pods} pods (resources + nodeSelector) on {args.nodes} nodes")
    header = f"  {'profile':<36} {'path':<10} {'placed':>6}  {'wall s':>6} {'pods/s':>8}  "
    print(header + f"{'CPU s':>6} {'pods/s':>8}")
    pod_objs = pods(args.pods)
    for profile in ("LowNodeUtilization", "HighNodeUtilization", "NoScoring"):
        for path, run in (("placement", place_all), ("controller", through_controller)):
            _row(profile, path, args.pods, run(profile, node_objs, pod_objs))
    if args.other_pods:
        print(f"other kinds: {args.other_pods} pods each on {args.nodes} nodes")
        for kind in KINDS[1:]:
            pod_objs = pods(args.other_pods, kind=kind)
            for profile in ("LowNodeUtilization", "HighNodeUtilization"):
                label = f"{kind} / {profile}"
                _row(label, "placement", args.other_pods, place_all(profile, node_objs, pod_objs))


if __name__ == "__main__":
    main()
