"""LeaderWorkerSets in the embedded cluster (integrations.md §5): the LWS
webhooks' defaults and rules, the leader and worker StatefulSets, the pods'
labels, annotations and env, startup and restart policies, scaling, rolling
updates, status and conditions, garbage collection, and ``kuota run``."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kuota.api.decode import decode_object
from kuota.api.k8s import Pod
from kuota.api.lws.v1 import LeaderWorkerSet
from kuota.cli.main import main
from kuota.cluster import api_server_hooks, install
from kuota.cluster.lws import LWS, SERVICE, STATEFULSET
from kuota.cluster.podutil import NODE, POD
from kuota.runtime.clock import VirtualClock
from kuota.runtime.manager import Manager
from kuota.store import Invalid, MemoryStore, clone

from .conftest import NS, T0, World, decode, node_manifest

P = "leaderworkerset.sigs.k8s.io/"


class LwsWorld(World):
    """The cluster with the API server's admission hooks (the LWS webhooks among them)."""

    def __init__(self) -> None:
        self.clock = VirtualClock(T0)
        self.store = MemoryStore(self.clock.now, admission=api_server_hooks(lambda: self.store))
        self.mgr = Manager(self.store, self.clock, raise_errors=True)
        self.cluster = install(self.mgr)

    def lws(self, name: str = "vllm") -> LeaderWorkerSet:
        obj: LeaderWorkerSet = self.store.get(LWS, NS, name)
        return obj

    def sts(self, name: str) -> Any:
        return self.store.get(STATEFULSET, NS, name)

    def pods(self, lws: str = "vllm") -> dict[str, Pod]:
        items = self.store.list(POD, NS, label_selector=f"{P}name={lws}").items
        return {p.metadata.name: p for p in items if p.metadata.deletion_timestamp is None}

    def phases(self, lws: str = "vllm") -> dict[str, str]:
        return {n: p.status.phase for n, p in self.pods(lws).items()}

    def uids(self, lws: str = "vllm") -> dict[str, str]:
        return {n: p.metadata.uid for n, p in self.pods(lws).items()}

    def update_lws(self, change: Any, name: str = "vllm") -> None:
        obj = clone(self.lws(name))
        change(obj.spec)
        self.store.update(obj)

    def events(self, reason: str) -> list[str]:
        evs = self.store.list(("", "Event"), NS).items
        evs.sort(key=lambda ev: int(ev.metadata.resource_version))
        return [ev.message for ev in evs if ev.reason == reason]

    def conditions(self, name: str = "vllm") -> dict[str, tuple[str, str]]:
        st = self.lws(name).status
        return {c.type: (c.status, c.reason) for c in st.conditions or ()}


@pytest.fixture
def world() -> LwsWorld:
    w = LwsWorld()
    w.apply(node_manifest("n1", cpu="64", memory="256Gi"))
    return w


def container(name: str = "c", image: str = "vllm:1", cpu: str = "1") -> dict[str, Any]:
    return {"name": name, "image": image, "resources": {"requests": {"cpu": cpu}}}


def lws_manifest(
    name: str = "vllm",
    *,
    replicas: int | None = 2,
    size: int | None = 3,
    annotations: dict[str, str] | None = None,
    leader: dict[str, Any] | None = None,
    worker_spec: dict[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    lwt: dict[str, Any] = {"workerTemplate": {"spec": worker_spec or {"containers": [container()]}}}
    if size is not None:
        lwt["size"] = size
    if leader is not None:
        lwt["leaderTemplate"] = leader
    for k in ("restartPolicy", "subGroupPolicy"):
        if k in spec:
            lwt[k] = spec.pop(k)
    body: dict[str, Any] = {"leaderWorkerTemplate": lwt, **spec}
    if replicas is not None:
        body["replicas"] = replicas
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": name, "namespace": NS, "annotations": annotations or {}},
        "spec": body,
    }


def env_of(pod: Pod, container_index: int = 0) -> list[tuple[str, str]]:
    env = pod.spec.containers[container_index].env or []
    return [(v["name"], v.get("value", "")) for v in env]


def sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


# ------------------------------------------------------------------ validation
def errors_of(manifest: dict[str, Any]) -> list[str]:
    doc = decode_object(manifest, source="test", index=0)
    return [str(e) for e in doc.errors]


def test_defaults_of_the_crd_and_the_webhook() -> None:
    obj = decode(lws_manifest(replicas=None, size=None, restartPolicy="Default"))
    spec = obj.spec
    assert spec.replicas == 1 and spec.leader_worker_template.size == 1
    assert spec.leader_worker_template.restart_policy == "None"  # deprecated Default
    assert spec.startup_policy == "LeaderCreated"
    ruc = spec.rollout_strategy.rolling_update_configuration
    assert (ruc.max_unavailable, ruc.max_surge, ruc.partition) == (1, 0, 0)
    assert spec.network_config.subdomain_policy == "Shared"
    plain = decode(lws_manifest())
    assert plain.spec.leader_worker_template.restart_policy == "RecreateGroupOnPodRestart"


RUC = "spec.rolloutStrategy.rollingUpdateConfiguration"
SGS = "spec.leaderWorkerTemplate.SubGroupPolicy.subGroupSize"  # the webhook's own spelling


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (
            {"size": 0},
            "spec.leaderWorkerTemplate.size: Invalid value: 0: size must be equal or greater than 1",
        ),
        (
            {"replicas": 1_000_001},
            "spec.replicas: Invalid value: 1000001: spec.replicas in body should be "
            "less than or equal to 1000000",
        ),
        (
            {"replicas": 1_000_000, "size": 3000},
            "spec.replicas: Invalid value: 1000000: the product of replicas and worker "
            "replicas must not exceed 2147483647",
        ),
        (
            {"rolloutStrategy": {"rollingUpdateConfiguration": {"maxSurge": "150%"}}},
            f'{RUC}.maxSurge: Invalid value: "150%": must not be greater than 100%',
        ),
        (
            {"rolloutStrategy": {"rollingUpdateConfiguration": {"maxSurge": -1}}},
            f"{RUC}.maxSurge: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            {"rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": "half"}}},
            f'{RUC}.maxUnavailable: Invalid value: "half": a valid percent string must be',
        ),
        (
            {"rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": 0}}},
            f"{RUC}.maxUnavailable: Invalid value: 0: must not be 0 when `maxSurge` is 0",
        ),
        (
            # 10% of 2 replicas rounds down to 0, and there is no surge.
            {"rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": "10%"}}},
            f'{RUC}.maxUnavailable: Invalid value: "10%": must not be 0 when `maxSurge` is 0',
        ),
        (
            {"rolloutStrategy": {"rollingUpdateConfiguration": {"partition": -1}}},
            f"{RUC}.partition: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            {"subGroupPolicy": {"subGroupSize": 4}},
            f"{SGS}: Invalid value: 4: size or size - 1 must be divisible by subGroupSize",
        ),
        (
            {
                "subGroupPolicy": {"subGroupSize": 2, "subGroupPolicyType": "LeaderExcluded"},
                "size": 4,
            },
            f"{SGS}: Invalid value: 2: size-1 must be divisible by subGroupSize when using "
            "LeaderExcluded",
        ),
        (
            {"subGroupPolicy": {"subGroupSize": 0}},
            f"{SGS}: Invalid value: 0: subGroupSize must be equal or greater than 1",
        ),
        (
            {"annotations": {P + "subgroup-exclusive-topology": "rack"}},
            f'metadata.annotations.{P}subgroup-exclusive-topology: Invalid value: "rack": '
            "cannot have subgroup-exclusive-topology without subGroupSize set",
        ),
        (
            {"networkConfig": {}},
            "spec.networkConfig.subdomainPolicy: Required value",
        ),
        (
            {"name": "1vllm"},
            'metadata.name: Invalid value: "1vllm": a DNS-1035 label must consist of lower case',
        ),
    ],
)
def test_validation_names_the_field(change: dict[str, Any], error: str) -> None:
    kw = dict(change)
    name = kw.pop("name", "vllm")
    errs = errors_of(lws_manifest(name, **kw))
    assert any(e.startswith(error) for e in errs), errs


def test_valid_sets_pass() -> None:
    ok = [
        lws_manifest(
            rolloutStrategy={"rollingUpdateConfiguration": {"maxUnavailable": 0, "maxSurge": 1}}
        ),
        lws_manifest(
            replicas=0, rolloutStrategy={"rollingUpdateConfiguration": {"maxUnavailable": 0}}
        ),
        lws_manifest(size=5, subGroupPolicy={"subGroupSize": 2}),  # size - 1 divisible
        lws_manifest(size=4, subGroupPolicy={"subGroupSize": 2}),  # size divisible
    ]
    for m in ok:
        assert errors_of(m) == []


def test_the_store_runs_the_webhooks_on_create_and_update(world: LwsWorld) -> None:
    bad = decode(lws_manifest())
    bad.spec.leader_worker_template.size = 0
    with pytest.raises(Invalid, match=r"spec\.leaderWorkerTemplate\.size: Invalid value: 0"):
        world.store.create(bad)
    world.apply(lws_manifest(size=4, subGroupPolicy={"subGroupSize": 2}))
    with pytest.raises(Invalid, match="field is immutable"):
        world.update_lws(
            lambda s: setattr(s.leader_worker_template.sub_group_policy, "sub_group_size", 4)
        )
    with pytest.raises(Invalid, match="cannot remove subGroupSize after enabled"):
        world.update_lws(lambda s: setattr(s.leader_worker_template, "sub_group_policy", None))
    # The defaulting webhook runs on update too: Default becomes None.
    world.update_lws(lambda s: setattr(s.leader_worker_template, "restart_policy", "Default"))
    assert world.lws().spec.leader_worker_template.restart_policy == "None"


# ------------------------------------------------------------------ pod webhook
def stateful_pod(
    name: str, labels: dict[str, str], annotations: dict[str, str], **spec: Any
) -> Any:
    """A pod as a StatefulSet of the LWS would create it from its template."""
    return decode(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": NS,
                "labels": labels,
                "annotations": annotations,
            },
            "spec": {
                "containers": [
                    {
                        **container(),
                        "env": [
                            {"name": "MINE", "value": "x"},
                            {"name": "LWS_GROUP_SIZE", "value": "9"},
                        ],
                    }
                ],
                "initContainers": [container("init")],
                **spec,
            },
        }
    )


def test_pod_webhook_labels_a_worker_from_its_ordinal_and_subgroup(world: LwsWorld) -> None:
    leader = "vllm-1"
    pod = stateful_pod(
        "vllm-1-3",
        {P + "name": "vllm", P + "group-index": "1", P + "group-key": sha1(f"{NS}/{leader}")},
        {P + "size": "5", P + "leader-name": leader, P + "subgroup-size": "2"},
        subdomain="vllm",
    )
    world.store.create(pod)
    got = world.pod("vllm-1-3")
    labels = got.metadata.labels
    assert labels[P + "worker-index"] == "3"
    # size - 1 = 4 is divisible by 2 and size is not: the leader joins subgroup 0,
    # workers 1-2 are subgroup 0, workers 3-4 subgroup 1.
    assert labels[P + "subgroup-index"] == "1"
    assert labels[P + "subgroup-key"] == sha1(f"{leader}/1")
    # LWS's variables come first, replace the container's own of the same name.
    assert env_of(got) == [
        ("LWS_LEADER_ADDRESS", f"vllm-1.vllm.{NS}"),
        ("LWS_GROUP_SIZE", "5"),
        ("LWS_WORKER_INDEX", "3"),
        ("MINE", "x"),
    ]
    assert [n for n, _ in env_of_init(got)] == [
        "LWS_LEADER_ADDRESS",
        "LWS_GROUP_SIZE",
        "LWS_WORKER_INDEX",
    ]


def env_of_init(pod: Pod) -> list[tuple[str, str]]:
    return [(v["name"], v.get("value", "")) for v in pod.spec.init_containers[0].env or []]


def test_pod_webhook_refuses_a_group_pod_without_its_size(world: LwsWorld) -> None:
    pod = stateful_pod("vllm-0", {P + "name": "vllm", P + "worker-index": "0"}, {})
    with pytest.raises(Invalid, match=rf"metadata\.annotations\[{P}size\]: Required value"):
        world.store.create(pod)


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


def group_pods(group: int, lws: str = "vllm", size: int = 3) -> list[str]:
    return [f"{lws}-{group}", *(f"{lws}-{group}-{w}" for w in range(1, size))]


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


# ------------------------------------------------------------------ failures
def restart_container(world: LwsWorld, name: str) -> None:
    """The kubelet restarted the pod's container (a crash, a failed probe)."""
    pod = clone(world.pod(name))
    count = max((cs["restartCount"] for cs in pod.status.container_statuses or ()), default=0)
    pod.status.container_statuses = [{"name": "c", "restartCount": count + 1, "ready": True}]
    world.store.update_status(pod)


@pytest.mark.parametrize("how", ["restart", "delete"])
def test_recreate_group_on_pod_restart_recreates_the_whole_group(world: LwsWorld, how: str) -> None:
    world.apply(lws_manifest())
    world.run(until=timedelta(seconds=5))
    before = world.uids()
    if how == "restart":
        restart_container(world, "vllm-1-2")
    else:
        world.store.delete(POD, NS, "vllm-1-2")
    world.run(until=timedelta(seconds=10))
    after = world.uids()
    assert sorted(after) == sorted(before)
    assert all(after[n] != before[n] for n in group_pods(1))  # all of group 1 is new
    assert all(after[n] == before[n] for n in group_pods(0))  # group 0 untouched
    assert all(p == "Running" for p in world.phases().values())
    assert world.events("RecreateGroup") == [
        "Worker pod vllm-1-2 failed, deleted leader pod vllm-1 to recreate group 1"
    ]
    assert world.lws().status.ready_replicas == 2


def test_a_failed_worker_recreates_its_group(world: LwsWorld) -> None:
    # A worker that exits: its StatefulSet deletes and recreates it, which
    # recreates its group.
    spec = {"containers": [container()]}
    world.apply(lws_manifest(replicas=1, worker_spec=spec))
    world.run(until=timedelta(seconds=5))
    before = world.uids()
    pod = clone(world.pod("vllm-0-1"))
    pod.status.phase = "Failed"
    world.store.update_status(pod)
    world.run(until=timedelta(seconds=10))
    after = world.uids()
    assert all(after[n] != before[n] for n in group_pods(0))
    assert len(world.events("RecreateGroup")) == 1


def test_restart_policy_none_restarts_only_the_pod(world: LwsWorld) -> None:
    world.apply(lws_manifest(restartPolicy="None"))
    world.run(until=timedelta(seconds=5))
    before = world.uids()
    restart_container(world, "vllm-1-1")
    world.store.delete(POD, NS, "vllm-1-2")
    world.run(until=timedelta(seconds=10))
    after = world.uids()
    assert sorted(after) == sorted(before)
    changed = {n for n in after if after[n] != before[n]}
    assert changed == {"vllm-1-2"}  # recreated by its StatefulSet, nothing else
    assert world.events("RecreateGroup") == []


def test_recreate_after_start_waits_while_a_group_pod_is_pending(world: LwsWorld) -> None:
    # Worker 2 cannot be placed: the group has not started, a restart changes nothing.
    big = {"containers": [container(cpu="1")]}
    world.apply(lws_manifest(replicas=1, worker_spec=big, restartPolicy="RecreateGroupAfterStart"))
    world.store.delete(NODE, "", "n1")
    world.apply(node_manifest("small", cpu="2"))
    world.run(until=timedelta(seconds=5))
    assert sorted(world.phases().values()) == ["Pending", "Running", "Running"]
    running = sorted(n for n, p in world.phases().items() if p == "Running")
    before = world.uids()
    restart_container(world, running[-1])
    world.run(until=timedelta(seconds=10))
    assert world.uids() == before and world.events("RecreateGroup") == []
    # Nor does deleting a running worker: only that pod comes back.
    worker = next(n for n in running if n != "vllm-0")
    world.store.delete(POD, NS, worker)
    world.run(until=timedelta(seconds=12))
    assert world.events("RecreateGroup") == []
    assert {n for n in before if world.uids()[n] != before[n]} == {worker}
    # Once every pod runs, a restart recreates the group.
    world.apply(node_manifest("more", cpu="2"))
    world.run(until=timedelta(seconds=15))
    assert set(world.phases().values()) == {"Running"}
    before = world.uids()
    restart_container(world, "vllm-0-1")
    world.run(until=timedelta(seconds=20))
    assert all(world.uids()[n] != before[n] for n in group_pods(0))


def test_deleting_a_leader_takes_its_group_and_the_group_comes_back(world: LwsWorld) -> None:
    world.apply(lws_manifest(restartPolicy="None"))
    world.run(until=timedelta(seconds=5))
    before = world.uids()
    world.store.delete(POD, NS, "vllm-0")
    # The worker StatefulSet and its pods went with the leader (garbage collection).
    assert not world.exists(STATEFULSET, "vllm-0")
    assert not world.exists(POD, "vllm-0-1") and not world.exists(POD, "vllm-0-2")
    world.run(until=timedelta(seconds=10))
    after = world.uids()
    assert all(after[n] != before[n] for n in group_pods(0))
    assert all(after[n] == before[n] for n in group_pods(1))


def test_deleting_the_set_deletes_everything_it_made(world: LwsWorld) -> None:
    world.apply(lws_manifest())
    world.run(until=timedelta(seconds=5))
    world.store.delete(LWS, NS, "vllm")
    world.run(until=timedelta(seconds=10))
    assert world.store.list(POD, NS).items == []
    assert world.store.list(STATEFULSET, NS).items == []
    assert world.store.list(SERVICE, NS).items == []
    assert world.store.list(("apps", "ControllerRevision"), NS).items == []


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


# ------------------------------------------------------------------ kuota run / get
WORLD = """
apiVersion: v1
kind: Node
metadata: {name: gpu-1, labels: {nvidia.com/gpu.present: "true"}}
status:
  allocatable: {cpu: "32", memory: 128Gi, nvidia.com/gpu: "8"}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-2, labels: {nvidia.com/gpu.present: "true"}}
status:
  allocatable: {cpu: "32", memory: 128Gi, nvidia.com/gpu: "8"}
---
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm, namespace: serving}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          resources:
            limits: {nvidia.com/gpu: "4"}
"""


def test_a_world_with_a_leader_worker_set_runs_under_kuota_run(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    world.write_text(WORLD)
    state = tmp_path / "state"
    r = CliRunner().invoke(main, ["run", str(world), "--state", str(state), "--no-live"])
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output
    r = CliRunner().invoke(main, ["get", "lws", "-n", "serving", "--state", str(state)])
    assert r.exit_code == 0, r.output
    lines = [line.split() for line in r.output.splitlines()]
    assert lines[0] == ["NAME", "READY", "DESIRED", "UP-TO-DATE", "AGE"]
    assert lines[1][:4] == ["vllm", "2", "2", "2"]
    r = CliRunner().invoke(main, ["get", "pods", "-n", "serving", "--state", str(state)])
    running = [line.split()[0] for line in r.output.splitlines() if " Running " in line]
    assert sorted(running) == ["vllm-0", "vllm-0-1", "vllm-1", "vllm-1-1"]


def test_a_bad_leader_worker_set_in_a_world_is_a_clear_error(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    world.write_text(WORLD.replace("size: 2", "size: 0"))
    r = CliRunner().invoke(main, ["run", str(world), "--no-live"])
    assert r.exit_code != 0
    assert (
        "spec.leaderWorkerTemplate.size: Invalid value: 0: size must be equal or greater than 1"
        in r.output
    )
    assert "Traceback" not in r.output


# ------------------------------------------------------------------ Service
def service_manifest(name: str = "vllm", **spec: Any) -> dict[str, Any]:
    body = {"selector": {"app": "vllm"}, "ports": [{"port": 8080}], **spec}
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": NS},
        "spec": body,
    }


def test_services_decode_and_are_validated() -> None:
    svc = decode(service_manifest(clusterIP="None", publishNotReadyAddresses=True))
    assert svc.spec.type == "ClusterIP" and svc.spec.ports[0].protocol == "TCP"  # API defaults
    for manifest, error in [
        (
            service_manifest(ports=[{"port": 0}]),
            "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
        ),
        (service_manifest(type="Balanced"), 'spec.type: Unsupported value: "Balanced"'),
        (
            service_manifest(type="NodePort", clusterIP="None"),
            "spec.clusterIPs[0]: Invalid value: \"None\": may only be set to 'None' for ClusterIP services",
        ),
        (service_manifest("0svc"), 'metadata.name: Invalid value: "0svc": a DNS-1035 label'),
    ]:
        errs = errors_of(manifest)
        assert any(e.startswith(error) for e in errs), errs
