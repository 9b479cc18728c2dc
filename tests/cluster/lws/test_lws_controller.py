"""The LWS set controller (integrations.md §5.2, §5.5, §5.6): groups of a
leader and workers with their labels and env, status and conditions,
scaling, rolling updates, networking and placement."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from kuota.cluster.lws.lws_objects import SERVICE, STATEFULSET
from kuota.cluster.podutil import NODE, POD

from ..conftest import NS, node_manifest
from .conftest import (
    LwsWorld,
    P,
    container,
    env_of,
    group_pods,
    lws_manifest,
    restart_container,
    sha1,
)


# ------------------------------------------------------------------ groups
def test_groups_of_a_leader_and_workers_with_labels_annotations_and_env(world: LwsWorld) -> None:
    spec = {"containers": [{**container(), "env": [{"name": "MODEL", "value": "llama"}]}]}
    world.apply(lws_manifest(worker_spec=spec, annotations={"team": "serving"}))
    world.run(until=timedelta(seconds=5))
    assert world.phases() == {
        name: "Running"
        for name in ("vllm-0", "vllm-0-1", "vllm-0-2", "vllm-1", "vllm-1-1", "vllm-1-2")
    }
    pods = world.pods()
    rev = world.sts("vllm").metadata.labels[P + "template-revision-hash"]
    for group in (0, 1):
        leader = f"vllm-{group}"
        key = sha1(f"{NS}/{leader}")
        for worker in (0, 1, 2):
            name = leader if worker == 0 else f"{leader}-{worker}"
            pod = pods[name]
            labels = pod.metadata.labels
            assert labels[P + "name"] == "vllm"
            assert labels[P + "group-index"] == str(group)
            assert labels[P + "worker-index"] == str(worker)
            assert labels[P + "group-key"] == key  # one key for the whole group
            assert labels[P + "template-revision-hash"] == rev
            ann = pod.metadata.annotations
            assert ann[P + "size"] == "3"
            assert ann.get(P + "leader-name") == (None if worker == 0 else leader)
            assert env_of(pod) == [
                ("LWS_LEADER_ADDRESS", f"{leader}.vllm.{NS}"),
                ("LWS_GROUP_SIZE", "3"),
                ("LWS_WORKER_INDEX", str(worker)),
                ("MODEL", "llama"),
            ]
    # The leader StatefulSet: Parallel, one leader per group, owned by the LWS.
    leaders = world.sts("vllm")
    assert leaders.spec.replicas == 2 and leaders.spec.pod_management_policy == "Parallel"
    assert leaders.spec.service_name == "vllm"
    assert leaders.spec.selector.match_labels == {P + "name": "vllm", P + "worker-index": "0"}
    assert leaders.spec.update_strategy.rolling_update.partition == 0
    assert leaders.metadata.annotations[P + "replicas"] == "2"
    assert leaders.metadata.annotations["team"] == "serving"
    assert leaders.metadata.owner_references[0].kind == "LeaderWorkerSet"
    # A worker StatefulSet per group, owned by its leader pod.
    workers = world.sts("vllm-1")
    assert workers.spec.replicas == 2 and workers.spec.ordinals.start == 1
    owner = workers.metadata.owner_references[0]
    assert (owner.kind, owner.name, owner.uid) == ("Pod", "vllm-1", pods["vllm-1"].metadata.uid)
    # One headless Service for the set.
    svc = world.store.get(SERVICE, NS, "vllm")
    assert svc.spec.cluster_ip == "None" and svc.spec.publish_not_ready_addresses
    assert svc.spec.selector == {P + "name": "vllm"}


def test_status_counts_ready_groups_and_the_set_becomes_available(world: LwsWorld) -> None:
    world.apply(lws_manifest())
    world.run(until=timedelta(seconds=5))
    st = world.lws().status
    assert (st.replicas, st.ready_replicas, st.updated_replicas) == (2, 2, 2)
    assert st.hpa_pod_selector == f"{P}name=vllm,{P}worker-index=0"
    assert st.observed_generation == world.lws().metadata.generation
    assert world.conditions() == {
        "Available": ("True", "AllGroupsReady"),
        "Progressing": ("False", "GroupsProgressing"),
    }
    assert "All replicas are ready, with 2 groups ready of total 2 groups" in world.events(
        "AllGroupsReady"
    )


def test_a_group_missing_pods_is_not_ready_and_the_set_progresses(world: LwsWorld) -> None:
    # Room for five of the six pods: some group lacks a pod.
    world.store.delete(NODE, "", "n1")
    world.apply(node_manifest("small", cpu="5"))
    world.apply(lws_manifest())
    world.run(until=timedelta(seconds=5))
    phases = world.phases()
    assert sorted(phases.values()).count("Running") == 5
    whole = [g for g in (0, 1) if all(phases[n] == "Running" for n in group_pods(g))]
    st = world.lws().status
    assert st.replicas == 2 and st.ready_replicas == len(whole) < 2
    assert world.conditions()["Progressing"] == ("True", "GroupsProgressing")
    assert "Available" not in world.conditions()
    world.apply(node_manifest("more", cpu="4"))
    world.run(until=timedelta(seconds=10))
    assert world.lws().status.ready_replicas == 2
    assert world.conditions()["Available"] == ("True", "AllGroupsReady")


def test_size_one_makes_no_worker_statefulsets(world: LwsWorld) -> None:
    world.apply(lws_manifest(size=1))
    world.run(until=timedelta(seconds=5))
    assert world.phases() == {"vllm-0": "Running", "vllm-1": "Running"}
    assert not world.exists(STATEFULSET, "vllm-0") and not world.exists(STATEFULSET, "vllm-1")
    assert world.lws().status.ready_replicas == 2


def test_leader_ready_startup_waits_for_the_leader(world: LwsWorld) -> None:
    # Leaders need a node labelled for them, which comes later.
    leader = {"spec": {"nodeSelector": {"role": "leader"}, "containers": [container()]}}
    world.apply(lws_manifest(replicas=1, leader=leader, startupPolicy="LeaderReady"))
    world.apply(lws_manifest("eager", replicas=1, leader=leader))
    world.run(until=timedelta(seconds=5))
    assert world.phases() == {"vllm-0": "Pending"}
    assert not world.exists(STATEFULSET, "vllm-0")
    # LeaderCreated: the workers come with the leader pod, ready or not.
    assert world.phases("eager") == {
        "eager-0": "Pending",
        "eager-0-1": "Running",
        "eager-0-2": "Running",
    }
    world.apply(node_manifest("head", cpu="8", labels={"role": "leader"}))
    world.run(until=timedelta(seconds=10))
    assert world.phases() == {"vllm-0": "Running", "vllm-0-1": "Running", "vllm-0-2": "Running"}


def test_scaling_adds_groups_and_removes_the_highest(world: LwsWorld) -> None:
    world.apply(lws_manifest())
    world.run(until=timedelta(seconds=5))
    world.update_lws(lambda s: setattr(s, "replicas", 3))
    world.run(until=timedelta(seconds=10))
    assert sorted(world.phases()) == sorted(
        f"vllm-{g}{w}" for g in (0, 1, 2) for w in ("", "-1", "-2")
    )
    assert world.lws().status.ready_replicas == 3
    kept = world.uids()["vllm-0-1"]
    world.update_lws(lambda s: setattr(s, "replicas", 1))
    world.run(until=timedelta(seconds=15))
    assert sorted(world.phases()) == ["vllm-0", "vllm-0-1", "vllm-0-2"]
    assert world.uids()["vllm-0-1"] == kept  # group 0 untouched
    assert not world.exists(STATEFULSET, "vllm-1") and not world.exists(STATEFULSET, "vllm-2")
    assert world.lws().status.replicas == 1


# ------------------------------------------------------------------ rolling update
class GroupWatch:
    """Follows the set's pods from now on, event by event: how many groups
    were ready (leader and every worker Running and Ready) at the worst moment."""

    def __init__(self, world: LwsWorld, size: int) -> None:
        self.size = size
        self.pods = dict(world.pods())
        self.watch = world.store.watch(POD, world.store.resource_version)

    def ready_groups(self) -> int:
        def ok(name: str) -> bool:
            p = self.pods.get(name)
            return (
                p is not None
                and p.status.phase == "Running"
                and any(c.type == "Ready" and c.status == "True" for c in p.status.conditions or ())
            )

        groups = {n.split("-")[1] for n in self.pods}
        return sum(all(ok(n) for n in group_pods(int(g), size=self.size)) for g in groups)

    def worst(self) -> int:
        least = self.ready_groups()
        for ev in self.watch.poll():
            name = ev.object.metadata.name
            if ev.type == "DELETED" or ev.object.metadata.deletion_timestamp is not None:
                self.pods.pop(name, None)
            else:
                self.pods[name] = ev.object
            least = min(least, self.ready_groups())
        return least


def new_image(image: str) -> Any:
    def change(spec: Any) -> None:
        spec.leader_worker_template.worker_template.spec.containers[0].image = image

    return change


@pytest.mark.parametrize(
    ("max_unavailable", "steps"),
    [
        (1, ["Updating replica 2", "Updating replica 1", "Updating replica 0"]),
        (2, ["Updating replicas 1 to 2 (inclusive)", "Updating replica 0"]),
    ],
)
def test_rolling_update_goes_from_the_highest_group_within_max_unavailable(
    world: LwsWorld, max_unavailable: int, steps: list[str]
) -> None:
    ruc = {"rollingUpdateConfiguration": {"maxUnavailable": max_unavailable}}
    world.apply(lws_manifest(replicas=3, size=2, rolloutStrategy=ruc))
    world.run(until=timedelta(seconds=5))
    old_rev = world.sts("vllm").metadata.labels[P + "template-revision-hash"]
    watch = GroupWatch(world, size=2)
    world.update_lws(new_image("vllm:2"))
    world.run(until=timedelta(seconds=10))
    assert watch.worst() == 3 - max_unavailable  # never fewer groups serving
    updates = [m for m in world.events("GroupsUpdating") if m.startswith("Updating")]
    assert updates == steps
    assert world.events("GroupsUpdating")[0] == (
        "Rolling Upgrade is in progress, with 3 groups ready of total 3 groups"
    )
    rev = world.sts("vllm").metadata.labels[P + "template-revision-hash"]
    assert rev != old_rev
    for pod in world.pods().values():
        assert pod.spec.containers[0].image == "vllm:2"
        assert pod.metadata.labels[P + "template-revision-hash"] == rev
    st = world.lws().status
    assert (st.replicas, st.ready_replicas, st.updated_replicas) == (3, 3, 3)
    assert world.conditions() == {
        "Available": ("True", "AllGroupsReady"),
        "Progressing": ("False", "GroupsProgressing"),
        "UpdateInProgress": ("False", "GroupsUpdating"),
    }
    assert (
        world.events("CreatingRevision")[-1] == f"Creating revision with key {rev} for updated LWS"
    )
    # Only the rolled-out revision is kept.
    revisions = world.store.list(("apps", "ControllerRevision"), NS).items
    mine = [r for r in revisions if r.metadata.owner_references[0].kind == "LeaderWorkerSet"]
    assert [r.metadata.labels[P + "template-revision-hash"] for r in mine] == [rev]


def test_rolling_update_with_surge_keeps_every_group_serving(world: LwsWorld) -> None:
    ruc = {"rollingUpdateConfiguration": {"maxUnavailable": 0, "maxSurge": 1}}
    world.apply(lws_manifest(replicas=2, size=2, rolloutStrategy=ruc))
    world.run(until=timedelta(seconds=5))
    watch = GroupWatch(world, size=2)
    world.update_lws(new_image("vllm:2"))
    world.run(until=timedelta(seconds=10))
    assert watch.worst() == 2
    # A surge group (index 2) served during the update and is gone after it.
    assert "deleting surge replica vllm-2" in world.events("GroupsProgressing")
    assert sorted(world.pods()) == ["vllm-0", "vllm-0-1", "vllm-1", "vllm-1-1"]
    assert {p.spec.containers[0].image for p in world.pods().values()} == {"vllm:2"}
    assert world.sts("vllm").spec.replicas == 2
    assert world.lws().status.updated_replicas == 2


def test_a_partition_keeps_the_lower_groups_on_the_old_revision(world: LwsWorld) -> None:
    ruc = {"rollingUpdateConfiguration": {"partition": 2}}
    world.apply(lws_manifest(replicas=3, size=2, rolloutStrategy=ruc))
    world.run(until=timedelta(seconds=5))
    world.update_lws(new_image("vllm:2"))
    world.run(until=timedelta(seconds=10))
    images = {n: p.spec.containers[0].image for n, p in world.pods().items()}
    assert images == {
        "vllm-0": "vllm:1",
        "vllm-0-1": "vllm:1",
        "vllm-1": "vllm:1",
        "vllm-1-1": "vllm:1",
        "vllm-2": "vllm:2",
        "vllm-2-1": "vllm:2",
    }
    # Groups at or above the partition are updated: the set is available.
    assert world.lws().status.updated_replicas == 1
    assert world.conditions()["Available"] == ("True", "AllGroupsReady")
    # A restarted old group comes back on its own (old) revision, workers included.
    restart_container(world, "vllm-0-1")
    world.run(until=timedelta(seconds=15))
    assert world.pod("vllm-0-1").spec.containers[0].image == "vllm:1"
    assert world.pod("vllm-0").spec.containers[0].image == "vllm:1"


def test_changing_only_replicas_is_no_new_revision(world: LwsWorld) -> None:
    world.apply(lws_manifest())
    world.run(until=timedelta(seconds=5))
    world.update_lws(lambda s: setattr(s, "replicas", 3))
    world.run(until=timedelta(seconds=10))
    assert len(world.events("CreatingRevision")) == 1
    assert world.events("GroupsUpdating") == []


# ------------------------------------------------------------------ networking, placement
def test_unique_per_replica_gives_each_group_its_service_and_subdomain(world: LwsWorld) -> None:
    world.apply(lws_manifest(networkConfig={"subdomainPolicy": "UniquePerReplica"}))
    world.run(until=timedelta(seconds=5))
    assert not world.exists(SERVICE, "vllm")
    pods = world.pods()
    for group in (0, 1):
        leader = f"vllm-{group}"
        svc = world.store.get(SERVICE, NS, leader)
        assert svc.spec.selector == {P + "name": "vllm", P + "group-index": str(group)}
        assert svc.metadata.owner_references[0].uid == pods[leader].metadata.uid
        assert world.sts(leader).spec.service_name == leader
        for name in group_pods(group):
            assert pods[name].spec.subdomain == leader
            assert env_of(pods[name])[0] == ("LWS_LEADER_ADDRESS", f"{leader}.{leader}.{NS}")
    assert pods["vllm-0"].metadata.annotations[P + "subdomainPolicy"] == "UniquePerReplica"


def test_exclusive_topology_puts_each_group_alone_in_its_domain(world: LwsWorld) -> None:
    world.store.delete(NODE, "", "n1")
    for rack in ("a", "b"):
        for i in (1, 2):
            world.apply(node_manifest(f"{rack}{i}", cpu="2", labels={"rack": rack}))
    world.apply(lws_manifest(annotations={P + "exclusive-topology": "rack"}))
    world.run(until=timedelta(seconds=5))
    pods = world.pods()
    assert {p.status.phase for p in pods.values()} == {"Running"}
    racks = {}
    for group in (0, 1):
        nodes = {pods[n].spec.node_name for n in group_pods(group)}
        racks[group] = {world.node(n).metadata.labels["rack"] for n in nodes}
        assert len(racks[group]) == 1  # the group shares one rack
        leader_rack = next(iter(racks[group]))
        assert world.sts(f"vllm-{group}").spec.template.spec.node_selector == {"rack": leader_rack}
    assert racks[0] != racks[1]  # and has it to itself
    aff = pods["vllm-0"].spec.affinity
    key = sha1(f"{NS}/vllm-0")
    term = aff.pod_affinity.required_during_scheduling_ignored_during_execution[0]
    assert term.topology_key == "rack"
    assert term.label_selector.match_expressions[0].values == [key]
    anti = aff.pod_anti_affinity.required_during_scheduling_ignored_during_execution[0]
    assert [(r.operator, r.values) for r in anti.label_selector.match_expressions] == [
        ("Exists", None),
        ("NotIn", [key]),
    ]


def test_subgroups_label_leader_and_workers(world: LwsWorld) -> None:
    world.apply(lws_manifest(replicas=1, size=5, subGroupPolicy={"subGroupSize": 2}))
    world.run(until=timedelta(seconds=5))
    labels = {n: p.metadata.labels for n, p in world.pods().items()}
    # size - 1 = 4 divides by 2 and size does not: the leader joins the first subgroup.
    assert {n: lab[P + "subgroup-index"] for n, lab in labels.items()} == {
        "vllm-0": "0",
        "vllm-0-1": "0",
        "vllm-0-2": "0",
        "vllm-0-3": "1",
        "vllm-0-4": "1",
    }
    assert labels["vllm-0"][P + "subgroup-key"] == sha1("vllm-0/0")
    assert labels["vllm-0-2"][P + "subgroup-key"] == sha1("vllm-0/0")
    assert labels["vllm-0-4"][P + "subgroup-key"] == sha1("vllm-0/1")
