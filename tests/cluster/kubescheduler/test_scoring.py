"""Scoring: OpenShift's profiles (LowNodeUtilization spreads,
HighNodeUtilization packs, NoScoring takes the first feasible node), the
preferences kube-scheduler scores (preferred node affinity, preferred
inter-pod affinity, PreferNoSchedule taints, ScheduleAnyway spread),
the tie-break by node name, and the fast path agreeing with the full pass."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kuota.cluster import (
    HIGH_NODE_UTILIZATION,
    LOW_NODE_UTILIZATION,
    NO_SCORING,
    ClusterSnapshot,
    KubeScheduler,
    profile_named,
)
from kuota.cluster.kubescheduler.node_table import NodeState
from kuota.cluster.kubescheduler.scoring import (
    BALANCED,
    FIT,
    Profile,
    balanced_score,
    default_normalize,
    fit_score,
    requests_nothing,
    resource_scorer,
)
from kuota.store import clone

from ..conftest import World, decode, node_manifest, pod_manifest


def placed(world: World, *pods: str) -> list[str | None]:
    return [world.pod(p).spec.node_name for p in pods]


def three_nodes(world: World, **kw: Any) -> None:
    world.apply(*(node_manifest(n, cpu="4", **kw) for n in ("n-a", "n-b", "n-c")))
    world.run()


# ------------------------------------------------------------------ profiles
def test_low_node_utilization_spreads_with_name_tie_break() -> None:
    world = World(KubeScheduler(LOW_NODE_UTILIZATION))
    three_nodes(world)
    world.apply(*(pod_manifest(f"p{i}") for i in range(5)))
    world.run()
    assert placed(world, *(f"p{i}" for i in range(5))) == ["n-a", "n-b", "n-c", "n-a", "n-b"]


def test_high_node_utilization_packs() -> None:
    world = World(KubeScheduler(HIGH_NODE_UTILIZATION))
    three_nodes(world)
    world.apply(*(pod_manifest(f"p{i}") for i in range(5)))
    world.run()
    assert placed(world, *(f"p{i}" for i in range(5))) == ["n-a"] * 4 + ["n-b"]


def test_no_scoring_takes_the_first_feasible_node() -> None:
    world = World(KubeScheduler(NO_SCORING))
    world.apply(node_manifest("n-a", cpu="1"), node_manifest("n-b", cpu="8"))
    world.run()
    world.apply(pod_manifest("p0"), pod_manifest("p1"))
    world.run()
    assert placed(world, "p0", "p1") == ["n-a", "n-b"]


def test_profiles_by_openshift_name() -> None:
    assert profile_named("HighNodeUtilization") is HIGH_NODE_UTILIZATION
    with pytest.raises(ValueError, match='unknown scheduler profile "Fast": must be one of'):
        profile_named("Fast")


def test_gpu_fragmentation_high_utilization_fits_the_8_gpu_pod() -> None:
    """Four 2-GPU pods on two 8-GPU nodes: spread, every node keeps 4 GPUs and
    the 8-GPU pod that comes later fits nowhere; packed, one node stays whole."""
    results = {}
    for profile in (LOW_NODE_UTILIZATION, HIGH_NODE_UTILIZATION):
        world = World(KubeScheduler(profile))
        world.apply(
            *(
                node_manifest(f"gpu-{i}", cpu="64", memory="512Gi", extra={"nvidia.com/gpu": "8"})
                for i in range(2)
            )
        )
        world.run()
        world.apply(
            *(pod_manifest(f"small-{i}", cpu="4", extra={"nvidia.com/gpu": "2"}) for i in range(4))
        )
        world.run()
        world.apply(pod_manifest("big", cpu="8", extra={"nvidia.com/gpu": "8"}))
        world.run()
        results[profile.name] = (
            placed(world, *(f"small-{i}" for i in range(4))),
            placed(world, "big"),
        )
    assert results["LowNodeUtilization"] == (["gpu-0", "gpu-1", "gpu-0", "gpu-1"], [None])
    assert results["HighNodeUtilization"] == (["gpu-0"] * 4, ["gpu-1"])


# ------------------------------------------------------------------ preferences
def test_preferred_node_affinity_outweighs_spreading(world: World) -> None:
    world.apply(
        node_manifest("n-a", labels={"disk": "hdd"}),
        node_manifest("n-b", labels={"disk": "ssd"}),
    )
    world.run()
    prefer_ssd = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 50,
                    "preference": {
                        "matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]
                    },
                }
            ]
        }
    }
    world.apply(*(pod_manifest(f"p{i}", affinity=prefer_ssd) for i in range(3)))
    world.apply(pod_manifest("indifferent"))
    world.run()
    assert placed(world, "p0", "p1", "p2") == ["n-b", "n-b", "n-b"]
    assert placed(world, "indifferent") == ["n-a"]


def test_prefer_no_schedule_taint_is_avoided_not_forbidden(world: World) -> None:
    world.apply(
        node_manifest("n-a", cpu="2", taints=[{"key": "soft", "effect": "PreferNoSchedule"}]),
        node_manifest("n-b", cpu="2"),
    )
    world.run()
    world.apply(*(pod_manifest(f"p{i}") for i in range(4)))
    world.apply(
        pod_manifest("tolerant", cpu="100m", tolerations=[{"key": "soft", "operator": "Exists"}])
    )
    world.run()
    # Untainted n-b first (TaintToleration weighs 3), then n-a once n-b is full.
    assert placed(world, "p0", "p1", "p2", "p3") == ["n-b", "n-b", "n-a", "n-a"]
    assert placed(world, "tolerant") == [None]  # both nodes full of cpu


def test_preferred_pod_affinity_and_anti_affinity(world: World) -> None:
    world.apply(
        node_manifest("n-a", labels={"zone": "a"}),
        node_manifest("n-b", labels={"zone": "b"}),
        node_manifest("n-c", labels={"zone": "c"}),
    )
    cache = pod_manifest("cache", cpu="100m")
    cache["metadata"]["labels"] = {"app": "cache"}
    cache["spec"]["nodeName"] = "n-c"
    world.apply(cache)
    world.run()

    def term(kind: str) -> dict[str, Any]:
        return {
            kind: {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 100,
                        "podAffinityTerm": {
                            "topologyKey": "zone",
                            "labelSelector": {"matchLabels": {"app": "cache"}},
                        },
                    }
                ]
            }
        }

    world.apply(pod_manifest("near", cpu="100m", affinity=term("podAffinity")))
    world.apply(pod_manifest("far", cpu="100m", affinity=term("podAntiAffinity")))
    world.run()
    assert placed(world, "near", "far") == ["n-c", "n-a"]


def test_schedule_anyway_spread_prefers_the_emptier_zone(world: World) -> None:
    world.apply(
        node_manifest("a1", cpu="8", labels={"zone": "a"}),
        node_manifest("a2", cpu="8", labels={"zone": "a"}),
        node_manifest("b1", cpu="1", labels={"zone": "b"}),
    )
    world.run()
    soft = [
        {
            "maxSkew": 1,
            "topologyKey": "zone",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": "s"}},
        }
    ]
    for i in range(3):
        m = pod_manifest(f"s{i}", cpu="500m")
        m["metadata"]["labels"] = {"app": "s"}
        m["spec"]["topologySpreadConstraints"] = soft
        world.apply(m)
        world.run()
    # s0: zones even, a1 has the most room (first by name); s1: zone b is
    # emptier (spread weighs 2) though b1 is small; s2: zones even again,
    # and a2 has the most room.
    assert placed(world, "s0", "s1", "s2") == ["a1", "b1", "a2"]


# ------------------------------------------------------------------ arithmetic
def test_resource_scores_as_kube_scheduler_computes_them() -> None:
    node = ClusterSnapshot()
    node.set_node(decode(node_manifest("n", cpu="4", memory="8Gi")))
    state = node.get("n")
    assert state is not None
    # 1 cpu of 4 and 2Gi of 8 requested: least (75 + 75) / 2, most (25 + 25) / 2.
    args = (("cpu", 1), ("memory", 1))
    assert fit_score("LeastAllocated", args, (1000, 2 * 2**30), {}, state, (0, 0)) == 75
    assert fit_score("MostAllocated", args, (1000, 2 * 2**30), {}, state, (0, 0)) == 25
    # Balanced: fractions 0.25 cpu and 0.5 memory: std 0.125 -> 87.
    assert balanced_score(args, {"cpu": 1000, "memory": 4 * 2**30}, state) == 87
    assert default_normalize({"a": 0, "b": 2, "c": 1}, True) == {"a": 100, "b": 0, "c": 50}


@pytest.mark.parametrize("profile", [LOW_NODE_UTILIZATION, HIGH_NODE_UTILIZATION])
def test_resource_scorer_is_fit_and_balanced_weighted(profile: Profile) -> None:
    """The one-pass scorer both placement paths use equals the plugins'
    formulas weighted, on nodes with and without cpu or memory, full or not."""
    rng = random.Random(11)
    w_fit, w_bal = profile.weight(FIT), profile.weight(BALANCED)
    for _ in range(2000):
        alloc = {
            "cpu": rng.choice([0, 1000, 4000, 64000]),
            "memory": rng.choice([0, 2**30, 16 * 2**30]),
            "pods": 110,
        }
        used = {k: rng.randint(0, 2 * v) for k, v in alloc.items() if k != "pods" and v}
        node = NodeState("n", alloc, {}, [], False, True, requested=used)
        node_nonzero = (used.get("cpu", 0) + 100 * rng.randint(0, 3), used.get("memory", 0))
        requests = {k: v for k, v in (("cpu", rng.choice([0, 500, 2000])),) if v}
        if rng.random() < 0.5:
            requests["memory"] = rng.choice([2**20, 2**30])
        pod_nonzero = (requests.get("cpu", 100), requests.get("memory", 200 * 2**20))
        expected = w_fit * fit_score(
            profile.strategy, profile.resources, pod_nonzero, requests, node, node_nonzero
        )
        if w_bal and not requests_nothing(profile.resources, requests):
            expected += w_bal * balanced_score(profile.resources, requests, node)
        assert resource_scorer(profile, pod_nonzero, requests)(node, node_nonzero) == expected


# ------------------------------------------------------------------ fast path
def _random_world(seed: int, profile: str) -> tuple[list[str | None], list[str | None]]:
    rng = random.Random(seed)
    nodes = []
    for i in range(rng.randint(1, 12)):
        labels = {"pool": rng.choice("ab"), "zone": rng.choice(["z1", "z2", "z3"])}
        taints = [{"key": "soft", "effect": "PreferNoSchedule"}] if rng.random() < 0.2 else None
        extra = {"nvidia.com/gpu": str(rng.choice([0, 4, 8]))}
        cpu, mem = str(rng.choice([2, 4, 8])), f"{rng.choice([4, 8, 16])}Gi"
        nodes.append(
            decode(
                node_manifest(
                    f"n{i:02d}", cpu=cpu, memory=mem, extra=extra, labels=labels, taints=taints
                )
            )
        )
    snaps, scheds = (
        [ClusterSnapshot(), ClusterSnapshot()],
        [
            KubeScheduler(profile, fast=True),
            KubeScheduler(profile, fast=False),
        ],
    )
    for s in snaps:
        for n in nodes:
            s.set_node(n)
    bound: list[str] = []
    out: tuple[list[str | None], list[str | None]] = ([], [])
    for step in range(rng.randint(5, 60)):
        if bound and rng.random() < 0.2:
            key = bound.pop(rng.randrange(len(bound)))
            for s in snaps:
                s.set_pod(key, None)
            continue
        sel = {"pool": rng.choice("ab")} if rng.random() < 0.3 else None
        extra = {"nvidia.com/gpu": str(rng.choice([1, 2, 4]))} if rng.random() < 0.3 else None
        cpu = rng.choice(["100m", "500m", "1", "2", None])
        pod = decode(pod_manifest(f"p{step}", cpu=cpu, extra=extra, node_selector=sel))
        for i, (sched, snap) in enumerate(zip(scheds, snaps, strict=True)):
            result = sched.place(pod, snap)
            out[i].append(result.node)
            if result.node is not None:
                b = clone(pod)
                b.spec.node_name = result.node
                snap.set_pod(f"default/p{step}", b)
        if out[0][-1] is not None:
            bound.append(f"default/p{step}")
    return out


@pytest.mark.parametrize("profile", ["LowNodeUtilization", "HighNodeUtilization", "NoScoring"])
def test_fast_path_agrees_with_the_full_pass(profile: str) -> None:
    for seed in range(60):
        fast, full = _random_world(seed, profile)
        assert fast == full, seed
