"""Pod groups (integrations.md §2): the pods sharing a pod-group-name are one
Workload, admitted all or nothing. A group waits, entirely gated, until
all its pods exist and its whole Workload fits; then every pod is ungated
at once. Preempting it deletes all its pods; a failed pod is replaced and the
group keeps its Workload; it finishes when its pods succeeded."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from controllers.jobs.pod.test_pod_integration import (
    GROUP,
    MANAGED,
    POD,
    WL,
    cond,
    events,
    gated,
    get,
    pod,
    pod_plane,
    workloads,
    world,
)
from embedded.world import T0, config, control_plane, obj
from kuota.controllers.jobs.pod.podmeta import spec_role_hash

ROLE = "kueue.x-k8s.io/role-hash"
HIGH = {"kueue.x-k8s.io/priority-class": "high"}
FAIL = {"kuota.dev/fail": "true"}


def group(name: str, n: int, gpus: int = 1, *, total: int | None = None, **kw: Any) -> list[Any]:
    return [pod(f"{name}-{i}", gpus, group=name, total=total or n, **kw) for i in range(n)]


def pods_of(cp: Any, name: str) -> list[Any]:
    return [p for p in cp.store.list(POD, "team").items if p.metadata.name.startswith(name + "-")]


def test_group_that_does_not_fit_stays_gated_whole_then_starts_whole_when_quota_frees() -> None:
    cp = pod_plane()
    cp.create(world(gpus=4))
    cp.create([pod("solo", 1, duration="10m")])
    cp.mgr.run_until_idle()
    assert get(cp, "solo").status.phase == "Running"
    # Four pods of one GPU each; three GPUs of quota are free.
    cp.create(group("g", 4, duration="5m"))
    cp.run(until=T0 + timedelta(minutes=9))
    members = pods_of(cp, "g")
    assert len(members) == 4
    assert all(gated(p) and p.spec.node_name is None for p in members)
    wl = cp.store.get(WL, "team", "g")  # named after the group
    assert [(ps.name, ps.count) for ps in wl.spec.pod_sets] == [(spec_role_hash_of(members[0]), 4)]
    assert wl.metadata.annotations["kueue.x-k8s.io/is-group-workload"] == "true"
    assert sorted(r.name for r in wl.metadata.owner_references) == [
        p.metadata.name for p in members
    ]
    qr = cond(wl, "QuotaReserved")
    assert qr.status == "False" and "1 more needed" in qr.message
    # solo ends at 10m: the group is admitted and all four start together,
    # every pod ungated before the scheduler places any.
    watch = cp.store.watch(POD, cp.store.resource_version, namespace="team")
    cp.run(until=T0 + timedelta(minutes=10))
    changes = [ev.object for ev in watch.poll() if ev.object.metadata.name.startswith("g-")]
    ungated: dict[str, int] = {}
    for i, p in enumerate(changes):
        if not gated(p):
            ungated.setdefault(p.metadata.name, i)
    first_bound = min(i for i, p in enumerate(changes) if p.spec.node_name)
    assert len(ungated) == 4 and max(ungated.values()) < first_bound
    members = pods_of(cp, "g")
    assert all(not gated(p) and p.spec.node_selector == {"gpu": "a100"} for p in members)
    assert {p.status.start_time for p in members} == {T0 + timedelta(minutes=10)}
    assert {p.spec.node_name for p in members} == {"n-a100"}
    cp.run()
    members = pods_of(cp, "g")
    assert all(p.status.phase == "Succeeded" and not p.metadata.finalizers for p in members)
    fin = cond(cp.store.get(WL, "team", "g"), "Finished")
    assert (fin.status, fin.reason, fin.message) == ("True", "Succeeded", "Pods succeeded: 4/4.")


def spec_role_hash_of(p: Any) -> str:
    assert p.metadata.annotations[ROLE] == spec_role_hash(p.spec)
    return str(p.metadata.annotations[ROLE])


def test_group_has_no_workload_until_all_its_pods_exist() -> None:
    cp = pod_plane()
    cp.create(world())
    first = group("g", 3, total=4)
    cp.create(first)
    cp.mgr.run_until_idle()
    assert workloads(cp) == []
    assert all(gated(p) for p in pods_of(cp, "g"))
    assert (
        "Warning",
        "ErrWorkloadCompose",
        "'g' group has fewer runnable pods than expected",
    ) in events(cp, "g-0")
    cp.create([pod("g-3", group="g", total=4)])
    cp.mgr.run_until_idle()
    (wl,) = workloads(cp)
    assert wl.metadata.name == "g" and wl.spec.pod_sets[0].count == 4
    assert all(p.status.phase == "Running" for p in pods_of(cp, "g"))


def test_fast_admission_builds_the_workload_from_the_first_pod() -> None:
    cp = pod_plane()
    cp.create(world())
    fast = {"kueue.x-k8s.io/pod-group-fast-admission": "true"}
    cp.create([pod("g-0", group="g", total=3, annotations=fast)])
    cp.mgr.run_until_idle()
    (wl,) = workloads(cp)
    assert wl.spec.pod_sets[0].count == 3
    assert get(cp, "g-0").status.phase == "Running"
    # Later pods join the admitted group at once.
    cp.create([pod("g-1", group="g", total=3, annotations=fast)])
    cp.mgr.run_until_idle()
    assert get(cp, "g-1").status.phase == "Running"


def test_two_roles_give_two_pod_sets_with_their_counts() -> None:
    cp = pod_plane()
    cp.create(world(gpus=8))
    leader = pod("g-leader", 0, cpu="2", group="g", total=4)
    workers = [pod(f"g-w{i}", 2, group="g", total=4) for i in range(3)]
    cp.create([leader, *workers])
    cp.mgr.run_until_idle()
    (wl,) = workloads(cp)
    leader_role = get(cp, "g-leader").metadata.annotations[ROLE]
    worker_role = get(cp, "g-w0").metadata.annotations[ROLE]
    assert leader_role != worker_role
    expected = sorted([(leader_role, 1), (worker_role, 3)])
    assert [(ps.name, ps.count) for ps in wl.spec.pod_sets] == expected
    assert all(p.status.phase == "Running" for p in pods_of(cp, "g"))
    # Each pod was started with its own role's podSet.
    assert get(cp, "g-leader").metadata.labels["kueue.x-k8s.io/podset"] == leader_role
    assert get(cp, "g-w2").metadata.labels["kueue.x-k8s.io/podset"] == worker_role


def test_higher_priority_group_preempts_a_lower_one_and_all_its_pods_are_deleted() -> None:
    cp = pod_plane()
    cp.create(world(gpus=4, preemption=True))
    cp.create(group("lo", 2, 2, duration=None))
    cp.mgr.run_until_idle()
    assert all(p.status.phase == "Running" for p in pods_of(cp, "lo"))
    cp.create(group("hi", 2, 2, duration="5m", labels=HIGH))
    cp.mgr.run_until_idle()
    victims = pods_of(cp, "lo")
    assert len(victims) == 2
    for p in victims:
        assert p.metadata.deletion_timestamp is not None
        tt = cond(p, "TerminationTarget")
        assert (tt.status, tt.reason) == ("True", "WorkloadEvictedDueToPreempted")
        assert p.status.phase == "Failed"
    lo = cp.store.get(WL, "team", "lo")
    assert cond(lo, "Evicted").reason == "Preempted"
    assert cond(lo, "QuotaReserved").status == "False"
    # The group waits for its pods to be recreated before it may run again.
    waiting = cond(lo, "WaitingForReplacementPods")
    assert (waiting.status, waiting.reason) == ("True", "Preempted")
    winners = pods_of(cp, "hi")
    assert all(not gated(p) and p.status.phase == "Running" for p in winners)


def test_failed_pod_is_replaced_and_the_group_keeps_its_workload() -> None:
    cp = pod_plane()
    cp.create(world())
    cp.create(
        [
            pod("g-0", group="g", total=2, duration="1m", annotations=FAIL),
            pod("g-1", group="g", total=2, duration="10m"),
        ]
    )
    cp.run(until=T0 + timedelta(minutes=2))
    wl = cp.store.get(WL, "team", "g")
    assert get(cp, "g-0").status.phase == "Failed"
    assert get(cp, "g-0").metadata.finalizers == [MANAGED]  # counted until replaced
    waiting = cond(wl, "WaitingForReplacementPods")
    assert (waiting.status, waiting.reason) == ("True", "PodsFailed")
    assert cond(wl, "Finished") is None
    cp.create([pod("g-2", group="g", total=2, duration="3m")])
    cp.mgr.run_until_idle()
    same = cp.store.get(WL, "team", "g")
    assert same.metadata.uid == wl.metadata.uid
    assert cond(same, "WaitingForReplacementPods").status == "False"
    assert not get(cp, "g-0").metadata.finalizers  # replaced: let go
    replacement = get(cp, "g-2")
    assert not gated(replacement) and replacement.status.phase == "Running"
    cp.run()
    fin = cond(cp.store.get(WL, "team", "g"), "Finished")
    assert (fin.status, fin.message) == ("True", "Pods succeeded: 2/2.")


def test_excess_pods_of_a_group_are_deleted() -> None:
    cp = pod_plane()
    cp.create(world())
    cp.create(group("g", 3, total=2, duration=None))
    cp.mgr.run_until_idle()
    (wl,) = workloads(cp)
    assert wl.spec.pod_sets[0].count == 2
    assert [p.metadata.name for p in pods_of(cp, "g")] == ["g-0", "g-1"]
    assert ("Normal", "ExcessPodDeleted", "Excess pod deleted") in events(cp, "g-2")


def test_serving_group_never_finishes() -> None:
    cp = pod_plane()
    cp.create(world())
    serving = {"kueue.x-k8s.io/pod-group-serving": "true"}
    cp.create(group("s", 2, duration="1m", annotations=serving))
    cp.run(until=T0 + timedelta(minutes=5))
    assert all(p.status.phase == "Succeeded" for p in pods_of(cp, "s"))
    wl = cp.store.get(WL, "team", "s")
    assert cond(wl, "Finished") is None
    assert not (wl.status.reclaimable_pods or [])


def test_succeeded_pods_of_a_running_group_are_reclaimable() -> None:
    cp = pod_plane()
    cp.create(world())
    cp.create([pod("g-0", group="g", total=2, duration="1m"), pod("g-1", group="g", total=2)])
    cp.run(until=T0 + timedelta(minutes=2))
    wl = cp.store.get(WL, "team", "g")
    role = get(cp, "g-0").metadata.annotations[ROLE]
    assert [(r.name, r.count) for r in wl.status.reclaimable_pods] == [(role, 1)]


def test_pods_of_a_group_must_share_their_queue_and_total_count() -> None:
    cp = pod_plane()
    cp.create(world())
    cp.create([pod("g-0", group="g", total=2), pod("g-1", group="g", total=2, queue="other")])
    cp.create([pod("h-0", group="h", total=2), pod("h-1", group="h", total=3)])
    cp.mgr.run_until_idle()
    assert workloads(cp) == []
    assert all(gated(p) for p in pods_of(cp, "g") + pods_of(cp, "h"))
    assert (
        "Warning",
        "ErrWorkloadCompose",
        "pods 'g-0' and 'g-1' has different queue names: main!=other",
    ) in events(cp, "g-0")
    assert (
        "Warning",
        "ErrWorkloadCompose",
        "pods 'h-0' and 'h-1' has different 'kueue.x-k8s.io/pod-group-total-count' values: 2!=3",
    ) in events(cp, "h-0")


def test_group_with_a_prebuilt_workload_uses_it() -> None:
    cp = pod_plane()
    cp.create(world())
    template = {
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "busybox",
                    "resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "1"}},
                }
            ]
        }
    }
    prebuilt = obj(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "Workload",
            "metadata": {
                "namespace": "team",
                "name": "g",
                "annotations": {"kueue.x-k8s.io/is-group-workload": "true"},
            },
            "spec": {
                "queueName": "main",
                "podSets": [{"name": "main", "count": 2, "template": template}],
            },
        }
    )
    marks = {"kueue.x-k8s.io/prebuilt-workload-name": "g"}
    cp.create(group("g", 2, labels=marks, annotations={ROLE: "main"}))
    cp.mgr.run_until_idle()
    # The pods wait for the Workload made for them; they make none.
    assert workloads(cp) == []
    assert all(gated(p) for p in pods_of(cp, "g"))
    cp.create([prebuilt])
    cp.mgr.run_until_idle()
    (wl,) = workloads(cp)
    assert [(ps.name, ps.count) for ps in wl.spec.pod_sets] == [("main", 2)]
    assert sorted(r.name for r in wl.metadata.owner_references) == ["g-0", "g-1"]
    assert all(p.status.phase == "Running" for p in pods_of(cp, "g"))
    assert all(p.metadata.labels["kueue.x-k8s.io/podset"] == "main" for p in pods_of(cp, "g"))


def test_group_pods_in_an_unmanaged_namespace_are_left_alone() -> None:
    cp = pod_plane(managedJobsNamespaceSelector={"matchLabels": {"kueue": "on"}})
    cp.create(world())
    (p,) = cp.create([pod("g-0", group="g", total=1)])
    assert GROUP in p.metadata.labels and MANAGED not in p.metadata.labels and not gated(p)
    cp.mgr.run_until_idle()
    assert workloads(cp) == [] and get(cp, "g-0").status.phase == "Running"


def test_unretriable_group_finishes_once_no_pod_runs() -> None:
    cp = pod_plane()
    cp.create(world())
    once = {"kueue.x-k8s.io/retriable-in-group": "false"}
    cp.create(
        [
            pod("g-0", group="g", total=2, duration="1m", annotations={**once, **FAIL}),
            pod("g-1", group="g", total=2, duration="2m", annotations=once),
        ]
    )
    cp.run()
    fin = cond(cp.store.get(WL, "team", "g"), "Finished")
    assert (fin.status, fin.message) == ("True", "Pods succeeded: 1/2.")
    assert all(not p.metadata.finalizers for p in pods_of(cp, "g"))


def test_group_pods_ready_once_every_pod_is_ready() -> None:
    cp = pod_plane()
    cp.create(world(gpus=4))
    cp.create([pod("solo", 3, duration="10m")])
    cp.mgr.run_until_idle()
    cp.create(group("g", 2, duration="1h"))
    cp.mgr.run_until_idle()
    wl = cp.store.get(WL, "team", "g")
    assert (cond(wl, "PodsReady").status, cond(wl, "PodsReady").reason) == (
        "False",
        "WaitForStart",
    )
    cp.run(until=T0 + timedelta(minutes=10))
    ready = cond(cp.store.get(WL, "team", "g"), "PodsReady")
    assert (ready.status, ready.reason) == ("True", "Started")


def test_group_labels_to_copy_must_agree_across_its_pods() -> None:
    cfg = config(integrations={"frameworks": ["pod"], "labelKeysToCopy": ["team"]})
    cp = control_plane(cfg)
    cp.create(world())
    cp.create(
        [
            pod("a-0", group="a", total=2, labels={"team": "x"}),
            pod("a-1", group="a", total=2, labels={"team": "y"}),
            pod("b-0", group="b", total=2, labels={"team": "x"}),
            pod("b-1", group="b", total=2),
        ]
    )
    cp.mgr.run_until_idle()
    assert [w.metadata.name for w in workloads(cp)] == ["b"]
    assert cp.store.get(WL, "team", "b").metadata.labels == {"team": "x"}


def test_a_group_of_more_than_18_roles_gets_no_workload() -> None:
    cp = pod_plane()
    cp.create(world(gpus=8))
    cp.create([pod(f"g-{i}", 0, cpu=f"{i + 1}00m", group="g", total=19) for i in range(19)])
    cp.mgr.run_until_idle()
    assert workloads(cp) == []
    assert (
        "Warning",
        "ErrWorkloadCompose",
        "pod group can't include more than 18 roles",
    ) in events(cp, "g-0")
