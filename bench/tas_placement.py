"""Benchmark: topology-aware placement (kuota.scheduler.tas) on 1,024 nodes.

Reported as numbers, never asserted in tests. A three-level topology (8
blocks x 16 racks x 8 hosts of 8 cpu) is built from the nodes, then one pod
set is placed per request shape: required block, preferred rack,
unconstrained (LeastFreeCapacity), rack slices within a block, and
multi-layer slices (rack slices of host slices, TASMultiLayerTopology); the
preferred shapes also with balanced placement (TASBalancedPlacement).
Figures are CPU time per operation (time.process_time, steadier than wall
time on a shared machine) and as a ratio to a fixed pure-Python loop timed in
the same run, with the build (interpreted or mypyc) named.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import kuota
from kuota.scheduler.tas.placement import PodSetRequest, find
from kuota.scheduler.tas.snapshot import FlavorTopology, TASNode

LEVELS = ["block", "rack", "kubernetes.io/hostname"]
ROUNDS = 20


def _nodes() -> list[TASNode]:
    out = []
    for b in range(8):
        for r in range(16):
            for h in range(8):
                name = f"n-{b}-{r}-{h}"
                labels = {"block": f"b{b}", "rack": f"r{r}", "kubernetes.io/hostname": name}
                alloc = {"cpu": 8000, "memory": 64 << 30, "pods": 110}
                out.append(TASNode(name, labels, alloc, [], True))
    return out


def _cpu_ms(fn: Callable[[], object]) -> float:
    t0 = time.process_time()
    for _ in range(ROUNDS):
        fn()
    return (time.process_time() - t0) / ROUNDS * 1000


def _ref_loop_ms() -> float:
    """CPU ms of a fixed pure-Python loop (the yardstick of the ratios)."""
    t = time.process_time()
    acc: dict[int, int] = {}
    for i in range(200_000):
        acc[i & 1023] = acc.get(i & 1023, 0) + i
    return (time.process_time() - t) * 1000


def main() -> None:
    nodes = _nodes()
    loop = min(_ref_loop_ms() for _ in range(5))
    print(f"build: {kuota.build()}; {len(nodes)} nodes, {ROUNDS} rounds each")
    print(f"reference loop: {loop:.1f} ms CPU (x loop below = CPU / this)")
    ms = _cpu_ms(lambda: FlavorTopology("t", LEVELS, nodes, []))
    print(f"topology tree: {ms:.1f} ms CPU")
    topo = FlavorTopology("t", LEVELS, nodes, [])
    preferred_200 = PodSetRequest("w", 200, {"cpu": 1000}, preferred="rack")
    shapes = {
        "required block, 256 pods": PodSetRequest("w", 256, {"cpu": 1000}, required="block"),
        "preferred rack, 96 pods": PodSetRequest("w", 96, {"cpu": 1000}, preferred="rack"),
        "preferred rack, 200 pods": preferred_200,
        "unconstrained, 512 pods": PodSetRequest("w", 512, {"cpu": 1000}, unconstrained=True),
        "block, rack slices of 32, 256 pods": PodSetRequest(
            "w", 256, {"cpu": 1000}, required="block", slice_level="rack", slice_size=32
        ),
        "block, rack slices of 32 of host slices of 8, 256 pods": PodSetRequest(
            "w",
            256,
            {"cpu": 1000},
            required="block",
            slice_level="rack",
            slice_size=32,
            inner_layers=[("kubernetes.io/hostname", 8)],
        ),
    }
    for name, req in shapes.items():
        ms = _cpu_ms(lambda req=req: find(topo, req, None, {}, False, True))
        print(f"{name}: {ms:.1f} ms CPU per placement ({ms / loop:.2f}x loop)")
    for name in ("preferred rack, 96 pods", "preferred rack, 200 pods"):
        req = shapes[name]
        ms = _cpu_ms(lambda req=req: find(topo, req, None, {}, False, True, True))
        print(f"{name}, balanced: {ms:.1f} ms CPU per placement ({ms / loop:.2f}x loop)")


if __name__ == "__main__":
    main()
