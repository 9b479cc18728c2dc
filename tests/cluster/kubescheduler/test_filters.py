"""kube-scheduler's filters in the embedded cluster: for each rule a pod that
lands where the rule allows and one it keeps off, asserted on the node each
pod lands on, with kube-scheduler's reasons."""

from __future__ import annotations

from typing import Any

import pytest

from kuota.store import clone

from ..conftest import NS, World, decode, node_manifest, pod_manifest


def node_of(world: World, pod: str) -> str | None:
    return world.pod(pod).spec.node_name


def message(world: World, pod: str) -> str:
    c = world.condition(pod, "PodScheduled")
    assert c is not None and c.status == "False" and c.reason == "Unschedulable"
    return str(c.message)


def why(world: World, pod: str) -> str:
    """The filters' part of the message (the preemption part follows it)."""
    filters, sep, _ = message(world, pod).partition(" preemption: ")
    assert sep, "kube-scheduler appends preemption's part to every fit error"
    return filters


def preemption(world: World, pod: str) -> str:
    """DefaultPreemption's part: whether evicting pods could help, per node."""
    return message(world, pod).partition(" preemption: ")[2]


NOT_HELPFUL = "Preemption is not helpful for scheduling"  # unresolvable rejections
NO_VICTIMS = "No preemption victims found for incoming pod"  # nobody of lower priority


def node_affinity(*terms: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": t} for t in terms]
            }
        }
    }


# ------------------------------------------------------------------ NodeResourcesFit
def test_resources_fit_counts_overhead_and_the_init_container_peak(world: World) -> None:
    def pod(name: str, init_cpu: str) -> dict[str, Any]:
        m = pod_manifest(name, cpu="1")
        m["spec"]["overhead"] = {"cpu": "500m"}
        m["spec"]["initContainers"] = [
            {"name": "init", "image": "x", "resources": {"requests": {"cpu": init_cpu}}}
        ]
        return m

    world.apply(node_manifest("small", cpu="3"), pod("fits", "2500m"), pod("too-big", "3"))
    world.run()
    # max(2.5 init, 1 app) + 0.5 overhead = 3 cpu: fits exactly.
    assert node_of(world, "fits") == "small"
    # max(3, 1) + 0.5 = 3.5 > 3 (and the node is full anyway).
    assert node_of(world, "too-big") is None
    assert why(world, "too-big") == "0/1 nodes are available: 1 Insufficient cpu."


def test_resources_fit_extended_resources_and_pod_count(world: World) -> None:
    world.apply(
        node_manifest("a-gpu", cpu="8", extra={"nvidia.com/gpu": "2"}, pods="1"),
        node_manifest("b-gpu", cpu="8", extra={"nvidia.com/gpu": "4"}),
    )
    world.run()  # pods created after the start are tried in creation order
    world.apply(
        pod_manifest("two", extra={"nvidia.com/gpu": "2"}),
        pod_manifest("four", extra={"nvidia.com/gpu": "4"}),
        pod_manifest("five", extra={"nvidia.com/gpu": "5"}),
    )
    world.run()
    assert node_of(world, "four") == "b-gpu"
    assert node_of(world, "two") == "a-gpu"
    assert why(world, "five") == (
        "0/2 nodes are available: 1 Too many pods, 2 Insufficient nvidia.com/gpu."
    )


# ------------------------------------------------------------------ NodePorts
def test_host_ports_conflict(world: World) -> None:
    def pod(name: str, port: int, ip: str | None = None) -> dict[str, Any]:
        m = pod_manifest(name, cpu="100m")
        p: dict[str, Any] = {"containerPort": 8080, "hostPort": port}
        if ip:
            p["hostIP"] = ip
        m["spec"]["containers"][0]["ports"] = [p]
        return m

    world.apply(node_manifest("n1"), pod("first", 80))
    world.run()
    world.apply(pod("same-port", 80), pod("other-port", 81), pod("other-ip", 80, "10.0.0.1"))
    world.run()
    assert node_of(world, "first") == "n1"
    assert node_of(world, "other-port") == "n1"
    assert node_of(world, "same-port") is None
    # 0.0.0.0 binds every address: a specific IP conflicts with it too.
    assert node_of(world, "other-ip") is None
    assert why(world, "same-port") == (
        "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports."
    )
    assert preemption(world, "same-port") == f"0/1 nodes are available: 1 {NO_VICTIMS}."


# ------------------------------------------------------------------ NodeUnschedulable
def test_cordoned_node_unless_tolerated(world: World) -> None:
    world.apply(
        node_manifest("cordoned", unschedulable=True),
        pod_manifest("plain"),
        pod_manifest(
            "tolerant",
            tolerations=[
                {
                    "key": "node.kubernetes.io/unschedulable",
                    "operator": "Exists",
                    "effect": "NoSchedule",
                }
            ],
        ),
    )
    world.run()
    assert node_of(world, "tolerant") == "cordoned"
    assert why(world, "plain") == "0/1 nodes are available: 1 node(s) were unschedulable."


# ------------------------------------------------------------------ NodeName
def test_node_name_filter() -> None:
    # The scheduler never sees a pod with spec.nodeName (it is bound already);
    # the filter still answers for tools that place such pods.
    from kuota.cluster import ClusterSnapshot, KubeScheduler

    snap = ClusterSnapshot()
    for n in ("n1", "n2"):
        snap.set_node(decode(node_manifest(n)))
    pinned = decode(pod_manifest("pinned"))
    pinned.spec.node_name = "n2"
    assert KubeScheduler().place(pinned, snap).node == "n2"
    pinned.spec.node_name = "n9"
    assert KubeScheduler().place(pinned, snap).message == (
        "0/2 nodes are available: 2 node(s) didn't match the requested node name. "
        f"preemption: 0/2 nodes are available: 2 {NOT_HELPFUL}."
    )


# ------------------------------------------------------------------ NodeAffinity
@pytest.mark.parametrize(
    ("expr", "lands_on"),
    [
        ({"key": "gen", "operator": "In", "values": ["a100"]}, "n-a100"),
        ({"key": "gen", "operator": "NotIn", "values": ["a100", "h100"]}, "n-none"),
        ({"key": "gen", "operator": "Exists"}, "n-a100"),
        ({"key": "gen", "operator": "DoesNotExist"}, "n-none"),
        ({"key": "mem", "operator": "Gt", "values": ["40"]}, "n-h100"),
        ({"key": "mem", "operator": "Lt", "values": ["80"]}, "n-a100"),
    ],
)
def test_required_node_affinity_operators(expr: dict[str, Any], lands_on: str) -> None:
    world = World()
    world.apply(
        node_manifest("n-a100", labels={"gen": "a100", "mem": "40"}),
        node_manifest("n-h100", labels={"gen": "h100", "mem": "80"}),
        node_manifest("n-none"),
        pod_manifest("p", affinity=node_affinity([expr])),
    )
    world.run()
    assert node_of(world, "p") == lands_on


def test_node_affinity_and_node_selector_fail() -> None:
    world = World()
    world.apply(
        node_manifest("n1", labels={"gen": "a100"}),
        pod_manifest("sel", node_selector={"gen": "h100"}),
        pod_manifest(
            "aff", affinity=node_affinity([{"key": "gen", "operator": "Gt", "values": ["1"]}])
        ),
    )
    world.run()
    for pod in ("sel", "aff"):  # Gt needs an integer label: "a100" is none
        assert why(world, pod) == (
            "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."
        )


def test_match_fields_pins_the_node_name(world: World) -> None:
    pin = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}
                ]
            }
        }
    }
    world.apply(
        node_manifest("n1"),
        node_manifest("n2", cpu="1"),
        node_manifest("n3"),
        pod_manifest("pinned", affinity=pin),
        pod_manifest("pinned-too", affinity=pin),
    )
    world.run()
    assert node_of(world, "pinned") == "n2"
    # The other nodes never run the filters (NodeAffinity's PreFilter drops them).
    assert why(world, "pinned-too") == (
        "0/3 nodes are available: 1 Insufficient cpu, "
        "2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )


# ------------------------------------------------------------------ TaintToleration
@pytest.mark.parametrize("effect", ["NoSchedule", "NoExecute"])
def test_untolerated_taints_filter(effect: str) -> None:
    world = World()
    taint = [{"key": "dedicated", "value": "ml", "effect": effect}]
    world.apply(
        node_manifest("tainted", taints=taint),
        pod_manifest("plain"),
        pod_manifest(
            "tolerant",
            tolerations=[
                {"key": "dedicated", "operator": "Equal", "value": "ml", "effect": effect}
            ],
        ),
    )
    world.run()
    assert node_of(world, "tolerant") == "tainted"
    assert why(world, "plain") == (
        "0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: ml}."
    )
    assert preemption(world, "plain") == f"0/1 nodes are available: 1 {NOT_HELPFUL}."


def test_prefer_no_schedule_does_not_filter(world: World) -> None:
    world.apply(
        node_manifest("soft", taints=[{"key": "soft", "effect": "PreferNoSchedule"}]),
        pod_manifest("p"),
    )
    world.run()
    assert node_of(world, "p") == "soft"


# ------------------------------------------------------------------ InterPodAffinity
def labelled(name: str, labels: dict[str, str], ns: str = NS, **spec: Any) -> dict[str, Any]:
    m = pod_manifest(name, cpu="100m", **spec)
    m["metadata"]["labels"] = labels
    m["metadata"]["namespace"] = ns
    return m


ZONES = [
    node_manifest("a1", labels={"zone": "a"}),
    node_manifest("a2", labels={"zone": "a"}),
    node_manifest("b1", labels={"zone": "b"}),
]


def pod_affinity(
    kind: str, selector: dict[str, str], key: str = "zone", **term: Any
) -> dict[str, Any]:
    return {
        kind: {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": key, "labelSelector": {"matchLabels": selector}, **term}
            ]
        }
    }


def test_required_pod_affinity_follows_the_matching_pod() -> None:
    world = World()
    db = labelled("db", {"app": "db"})
    db["spec"]["nodeName"] = "b1"
    world.apply(*ZONES, db)
    world.run()
    world.apply(
        labelled("api", {"app": "api"}, affinity=pod_affinity("podAffinity", {"app": "db"}))
    )
    world.apply(
        labelled("lonely", {"app": "x"}, affinity=pod_affinity("podAffinity", {"app": "nobody"}))
    )
    world.run()
    assert node_of(world, "api") == "b1"
    assert why(world, "lonely") == (
        "0/3 nodes are available: 3 node(s) didn't match pod affinity rules."
    )
    assert preemption(world, "lonely") == f"0/3 nodes are available: 3 {NOT_HELPFUL}."


def test_first_pod_of_a_self_affine_group_goes_anywhere(world: World) -> None:
    world.apply(
        *ZONES, labelled("w0", {"app": "w"}, affinity=pod_affinity("podAffinity", {"app": "w"}))
    )
    world.run()
    assert node_of(world, "w0") == "a1"


def test_required_anti_affinity_and_its_symmetric_check() -> None:
    world = World()
    world.apply(*ZONES)
    world.apply(
        labelled("one", {"app": "kv"}, affinity=pod_affinity("podAntiAffinity", {"app": "kv"}))
    )
    world.run()
    world.apply(
        labelled("two", {"app": "kv"}, affinity=pod_affinity("podAntiAffinity", {"app": "kv"}))
    )
    world.run()
    world.apply(
        labelled("three", {"app": "kv"}, affinity=pod_affinity("podAntiAffinity", {"app": "kv"}))
    )
    # No term of its own: only the existing pods' anti-affinity keeps it out.
    world.apply(labelled("plain-kv", {"app": "kv"}))
    world.apply(labelled("other", {"app": "web"}))
    world.run()
    assert (node_of(world, "one"), node_of(world, "two")) == ("a1", "b1")
    assert why(world, "three") == (
        "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules."
    )
    assert preemption(world, "three") == f"0/3 nodes are available: 3 {NO_VICTIMS}."
    assert why(world, "plain-kv") == (
        "0/3 nodes are available: 3 node(s) didn't satisfy existing pods anti-affinity rules."
    )
    assert node_of(world, "other") == "a2"


def test_affinity_terms_look_in_their_namespaces() -> None:
    world = World()
    world.apply(
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": "data", "labels": {"tier": "data"}},
        },
        *ZONES,
    )
    db = labelled("db", {"app": "db"}, ns="data")
    db["spec"]["nodeName"] = "b1"
    world.apply(db)
    world.run()
    world.apply(
        # Own namespace only (the default): the db in "data" does not count.
        labelled("same-ns", {"app": "a"}, affinity=pod_affinity("podAffinity", {"app": "db"})),
        labelled(
            "named",
            {"app": "b"},
            affinity=pod_affinity("podAffinity", {"app": "db"}, namespaces=["data"]),
        ),
        labelled(
            "selected",
            {"app": "c"},
            affinity=pod_affinity(
                "podAffinity", {"app": "db"}, namespaceSelector={"matchLabels": {"tier": "data"}}
            ),
        ),
    )
    world.run()
    assert node_of(world, "same-ns") is None
    assert node_of(world, "named") == "b1"
    assert node_of(world, "selected") == "b1"


# ------------------------------------------------------------------ PodTopologySpread
def spread(
    key: str = "zone", skew: int = 1, when: str = "DoNotSchedule", **more: Any
) -> list[dict[str, Any]]:
    return [
        {
            "maxSkew": skew,
            "topologyKey": key,
            "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {"app": "s"}},
            **more,
        }
    ]


def spread_pod(name: str, **constraint: Any) -> dict[str, Any]:
    m = labelled(name, {"app": "s"})
    m["spec"]["topologySpreadConstraints"] = spread(**constraint)
    return m


def test_max_skew_alternates_zones(world: World) -> None:
    world.apply(
        node_manifest("a1", labels={"zone": "a"}), node_manifest("b1", labels={"zone": "b"})
    )
    for i in range(4):
        world.apply(spread_pod(f"s{i}"))
        world.run()
    # Every other placement would put zone a two pods ahead.
    assert [node_of(world, f"s{i}") for i in range(4)] == ["a1", "b1", "a1", "b1"]


def test_do_not_schedule_refuses_beyond_max_skew(world: World) -> None:
    world.apply(
        node_manifest("a1", labels={"zone": "a"}),
        node_manifest("b1", labels={"zone": "b"}, taints=[{"key": "x", "effect": "NoSchedule"}]),
    )
    world.apply(spread_pod("s0"))
    world.run()
    world.apply(spread_pod("s1"))
    world.run()
    assert node_of(world, "s0") == "a1"
    # Zone b counts (nodeTaintsPolicy Ignore) with 0 pods: a would reach skew 2.
    assert why(world, "s1") == (
        "0/2 nodes are available: 1 node(s) didn't match pod topology spread constraints, "
        "1 node(s) had untolerated taint {x: }."
    )
    assert preemption(world, "s1") == (f"0/2 nodes are available: 1 {NO_VICTIMS}, 1 {NOT_HELPFUL}.")


def test_node_taints_policy_honor_ignores_the_tainted_zone(world: World) -> None:
    world.apply(
        node_manifest("a1", labels={"zone": "a"}),
        node_manifest("b1", labels={"zone": "b"}, taints=[{"key": "x", "effect": "NoSchedule"}]),
        spread_pod("s0", nodeTaintsPolicy="Honor"),
    )
    world.run()
    world.apply(spread_pod("s1", nodeTaintsPolicy="Honor"))
    world.run()
    assert (node_of(world, "s0"), node_of(world, "s1")) == ("a1", "a1")


def test_a_cordoned_node_is_tainted_and_honoured_as_such(world: World) -> None:
    world.apply(
        node_manifest("a1", labels={"zone": "a"}),
        node_manifest("b1", labels={"zone": "b"}, unschedulable=True),
    )
    world.run()
    for i in range(2):
        world.apply(spread_pod(f"s{i}", nodeTaintsPolicy="Honor"))
        world.run()
    # node.kubernetes.io/unschedulable:NoSchedule keeps zone b out of the count.
    assert (node_of(world, "s0"), node_of(world, "s1")) == ("a1", "a1")
    world.apply(spread_pod("s2"))  # nodeTaintsPolicy Ignore: zone b counts, with 0
    world.run()
    assert why(world, "s2") == (
        "0/2 nodes are available: 1 node(s) didn't match pod topology spread constraints, "
        "1 node(s) were unschedulable."
    )


def test_eligible_domains_follow_node_changes(world: World) -> None:
    world.apply(
        node_manifest("a1", cpu="8", labels={"zone": "a"}),
        node_manifest(
            "b1", cpu="1", labels={"zone": "b"}, taints=[{"key": "x", "effect": "NoSchedule"}]
        ),
    )
    for i in range(2):
        m = spread_pod(f"s{i}", nodeTaintsPolicy="Honor")
        m["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "2"}}
        world.apply(m)
        world.run()
    assert (node_of(world, "s0"), node_of(world, "s1")) == ("a1", "a1")  # zone b not counted
    b1 = clone(world.node("b1"))
    b1.spec.taints = None  # the taint goes
    world.store.update(b1)
    m = spread_pod("s2", nodeTaintsPolicy="Honor")
    m["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "2"}}
    world.apply(m)
    world.run()
    # Zone b counts now, with 0 pods: a third pod in zone a would make skew 3.
    assert why(world, "s2") == (
        "0/2 nodes are available: 1 Insufficient cpu, "
        "1 node(s) didn't match pod topology spread constraints."
    )


def test_node_affinity_policy_honor_by_default(world: World) -> None:
    world.apply(
        node_manifest("a1", labels={"zone": "a", "pool": "x"}),
        node_manifest("b1", labels={"zone": "b", "pool": "y"}),
    )
    for i, policy in enumerate(["Honor", None]):  # None: the default (Honor)
        m = spread_pod(f"s{i}", **({"nodeAffinityPolicy": policy} if policy else {}))
        m["spec"]["nodeSelector"] = {"pool": "x"}
        world.apply(m)
        world.run()
    # Zone b's node does not match the selector: only zone a counts.
    assert (node_of(world, "s0"), node_of(world, "s1")) == ("a1", "a1")
    m = spread_pod("s2", nodeAffinityPolicy="Ignore")
    m["spec"]["nodeSelector"] = {"pool": "x"}
    world.apply(m)
    world.run()
    assert node_of(world, "s2") is None  # zone b (0 pods) counts now: skew 3


def test_min_domains_counts_missing_domains_as_empty(world: World) -> None:
    world.apply(
        node_manifest("a1", labels={"zone": "a"}), node_manifest("a2", labels={"zone": "a"})
    )
    world.apply(spread_pod("s0", minDomains=2))
    world.run()
    world.apply(spread_pod("s1", minDomains=2))
    world.run()
    world.apply(spread_pod("s2"))  # minDomains 1: one domain is enough
    world.run()
    assert node_of(world, "s0") == "a1"
    assert why(world, "s1") == (
        "0/2 nodes are available: 2 node(s) didn't match pod topology spread constraints."
    )
    assert node_of(world, "s2") is not None


def test_missing_topology_label_is_unresolvable(world: World) -> None:
    world.apply(node_manifest("bare"), spread_pod("s0"))
    world.run()
    assert why(world, "s0") == (
        "0/1 nodes are available: 1 node(s) didn't match pod topology spread constraints "
        "(missing required label)."
    )
    assert preemption(world, "s0") == f"0/1 nodes are available: 1 {NOT_HELPFUL}."


def test_decoded_manifests_are_valid() -> None:
    # The helpers above build manifests the API would accept.
    decode(spread_pod("x"))
    decode(labelled("y", {"a": "b"}, affinity=pod_affinity("podAffinity", {"a": "b"})))
