"""What a node offers, as its kubelet reports it: capacity minus
system-reserved, kube-reserved and hard eviction thresholds; the pod
capacity from maxPods (110, OpenShift's 250) and podsPerCore; extended
resources in whole devices — and placement counting all of it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kuota.api.decode import decode_object
from kuota.cluster.kubescheduler.node_table import NodeTable
from kuota.cluster.nodeutil import node_allocatable, node_capacity

from .apiserver.test_limitrange import ApiServerWorld
from .conftest import NS, World, decode, node_manifest, pod_manifest

GI = 2**30


def node(
    name: str = "n1", *, annotations: dict[str, str] | None = None, **kw: Any
) -> dict[str, Any]:
    m = node_manifest(name, capacity_only=True, **kw)
    m["metadata"]["annotations"] = annotations or {}
    return m


def test_allocatable_is_capacity_minus_reservations() -> None:
    n = decode(
        node(
            cpu="16",
            memory="64Gi",
            extra={"nvidia.com/gpu": "8", "ephemeral-storage": "100Gi"},
            annotations={
                "kuota.dev/system-reserved": "cpu=500m,memory=1Gi",
                "kuota.dev/kube-reserved": "cpu=250m,memory=512Mi,ephemeral-storage=1Gi",
                "kuota.dev/eviction-hard": "memory.available<100Mi,nodefs.available<10%",
            },
        )
    )
    assert node_allocatable(n) == {
        "cpu": 15250,
        "memory": 64 * GI - GI - 512 * 2**20 - 100 * 2**20,
        "nvidia.com/gpu": 8,
        "ephemeral-storage": 100 * GI - GI - 10 * GI,
        "pods": 110,
    }
    assert node_capacity(n)["cpu"] == 16000


def test_reservations_never_go_below_zero() -> None:
    n = decode(node(cpu="1", annotations={"kuota.dev/system-reserved": "cpu=2"}))
    assert node_allocatable(n)["cpu"] == 0


def test_allocatable_given_by_the_node_is_taken_as_it_is() -> None:
    m = node(cpu="16", annotations={"kuota.dev/system-reserved": "cpu=4"})
    m["status"]["allocatable"] = {"cpu": "15", "memory": "60Gi", "pods": "64"}
    assert node_allocatable(decode(m)) == {"cpu": 15000, "memory": 60 * GI, "pods": 64}


def test_max_pods_and_pods_per_core() -> None:
    assert node_allocatable(decode(node(cpu="8")))["pods"] == 110
    assert node_allocatable(decode(node(cpu="8")), 250)["pods"] == 250
    custom = decode(node(cpu="8", annotations={"kuota.dev/max-pods": "500"}))
    assert node_allocatable(custom)["pods"] == 500
    per_core = decode(
        node(cpu="8", annotations={"kuota.dev/max-pods": "500", "kuota.dev/pods-per-core": "10"})
    )
    assert node_allocatable(per_core)["pods"] == 80  # min(10 x 8 cores, 500)


def test_openshift_nodes_register_with_250_pods_and_their_allocatable() -> None:
    for openshift, pods in ((True, "250"), (False, "110")):
        world = ApiServerWorld(openshift=openshift)
        world.apply(node(cpu="4", annotations={"kuota.dev/kube-reserved": "cpu=500m"}))
        st = world.node("n1").status
        assert str(st.capacity["pods"]) == pods
        assert str(st.allocatable["pods"]) == pods
        assert str(st.capacity["cpu"]) == "4"
        assert str(st.allocatable["cpu"]) == "3500m"


def test_pods_count_against_the_pod_capacity(world: World) -> None:
    world.apply(
        node("n1", cpu="8", annotations={"kuota.dev/max-pods": "2"}),
        *(pod_manifest(f"p{i}", cpu="100m") for i in range(3)),
    )
    world.run(until=timedelta(seconds=1))
    bound = {p.metadata.name: p.spec.node_name for p in world.store.list(("", "Pod"), NS).items}
    assert bound == {"p0": "n1", "p1": "n1", "p2": None}
    assert world.condition("p2", "PodScheduled").message == (
        "0/1 nodes are available: 1 Too many pods. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )


def test_reserved_cpu_is_not_placed_on(world: World) -> None:
    world.apply(
        node("n1", cpu="4", annotations={"kuota.dev/system-reserved": "cpu=1"}),
        pod_manifest("big", cpu="3500m"),
        pod_manifest("fits", cpu="3"),
    )
    world.run(until=timedelta(seconds=1))
    assert world.pod("big").spec.node_name is None
    assert world.pod("fits").spec.node_name == "n1"


def test_gpus_are_whole_devices(world: World) -> None:
    world.apply(
        node("g1", cpu="32", extra={"nvidia.com/gpu": "2"}),
        *(pod_manifest(f"p{i}", cpu="1", extra={"nvidia.com/gpu": "1"}) for i in range(3)),
    )
    world.run(until=timedelta(seconds=1))
    assert [world.pod(f"p{i}").spec.node_name for i in range(3)] == ["g1", "g1", None]
    assert "Insufficient nvidia.com/gpu" in world.condition("p2", "PodScheduled").message
    # Half a GPU is refused when the pod is created (the API server's validation).
    doc = decode_object(
        pod_manifest("half", cpu="1", extra={"nvidia.com/gpu": "500m"}), source="t", index=0
    )
    assert not doc.ok
    assert any("must be an integer" in str(e) for e in doc.errors)


def test_bad_node_input_names_the_field() -> None:
    m = node(cpu="-4", extra={"nvidia.com/gpu": "1.5"}, annotations={"kuota.dev/max-pods": "lots"})
    m["spec"] = {"taints": [{"key": "gpu", "value": "true", "effect": "Sometimes"}]}
    doc = decode_object(m, source="t", index=0)
    assert [str(e) for e in doc.errors] == [
        'metadata.taints[0].effect: Unsupported value: "Sometimes": supported values: '
        '"NoSchedule", "PreferNoSchedule", "NoExecute"',
        'status.capacity.cpu: Invalid value: "-4": must be greater than or equal to 0',
        'status.capacity.nvidia.com/gpu: Invalid value: "1500m": must be an integer',
        'metadata.annotations[kuota.dev/max-pods]: Invalid value: "lots": '
        "must be a non-negative integer",
    ]
    no_effect = node()
    no_effect["spec"] = {"taints": [{"key": "gpu", "value": "true"}]}
    doc = decode_object(no_effect, source="t", index=0)
    assert [str(e) for e in doc.errors] == ["spec.taints[0].effect: Required value"]


def test_node_table_reads_the_default_pod_capacity() -> None:
    table = NodeTable(default_max_pods=250)
    table.load([decode(node(cpu="4"))], [])
    st = table.get("n1")
    assert st is not None
    assert (st.allocatable["pods"], st.capacity["pods"], st.capacity["cpu"]) == (250, 250, 4000)
