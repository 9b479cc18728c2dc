"""Kueue's pod integration for plain pods (integrations.md §2): the webhook gates
the pods Kueue manages, each gets its own Workload, is ungated with its
flavor's placement once admitted, is stopped (TerminationTarget, deleted)
when evicted, and ends its Workload when it ends. Webhook refusals name the
field as Kueue does."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from embedded.world import (
    GPU,
    T0,
    cluster_queue,
    config,
    control_plane,
    flavor,
    job,
    local_queue,
    namespace,
    obj,
)
from embedded.world import node as node_
from kuota.api.kueue import types as kt
from kuota.controllers.jobframework import owner_workload_name
from kuota.embedded.controlplane import ControlPlane
from kuota.store import Invalid, clone
from kuota.store.resources import CLUSTER_QUEUE, EVENT, POD, WORKLOAD

WL = WORKLOAD
GATE = "kueue.x-k8s.io/admission"
MANAGED = "kueue.x-k8s.io/managed"
GROUP = "kueue.x-k8s.io/pod-group-name"
TOTAL = "kueue.x-k8s.io/pod-group-total-count"
QUEUE = "kueue.x-k8s.io/queue-name"


def pod(
    name: str,
    gpus: int = 1,
    *,
    duration: str | None = "10m",
    queue: str | None = "main",
    group: str | None = None,
    total: int | str | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    cpu: str = "1",
    ns: str = "team",
) -> Any:
    """A bare pod (no owner) asking for ``gpus`` GPUs, running ``duration``."""
    meta_labels = {QUEUE: queue} if queue else {}
    meta_ann = {"kuota.dev/duration": duration} if duration else {}
    if group is not None:
        meta_labels[GROUP] = group
    if total is not None:
        meta_ann[TOTAL] = str(total)
    meta_labels.update(labels or {})
    meta_ann.update(annotations or {})
    return obj(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "namespace": ns,
                "name": name,
                "labels": meta_labels,
                "annotations": meta_ann,
            },
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {
                        "name": "c",
                        "image": "busybox",
                        "resources": {
                            "requests": {"cpu": cpu, GPU: str(gpus)},
                            "limits": {GPU: str(gpus)},
                        },
                    }
                ],
            },
        }
    )


def world(gpus: int = 4, *, preemption: bool = False) -> list[Any]:
    """Quota on A100s only; an H100 node the pods must not land on."""
    cq = cluster_queue("cq", {"a100": gpus, "h100": 0})
    if preemption:
        cq.spec.preemption = kt.ClusterQueuePreemption(within_cluster_queue="LowerPriority")
    high = obj(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        }
    )
    return [
        namespace("team"),
        high,
        flavor("a100", {"gpu": "a100"}),
        flavor("h100", {"gpu": "h100"}),
        cq,
        local_queue("team", "main", "cq"),
        node_("n-h100", 8, {"gpu": "h100"}),
        node_("n-a100", 8, {"gpu": "a100"}),
    ]


def pod_plane(*frameworks: str, **cfg: Any) -> ControlPlane:
    fw = list(frameworks) or ["batch/job", "pod"]
    return control_plane(config(integrations={"frameworks": fw}, **cfg))


def cond(o: Any, ctype: str) -> Any:
    for c in (o.status.conditions if o.status else None) or ():
        if c.type == ctype:
            return c
    return None


def get(cp: ControlPlane, name: str, ns: str = "team") -> Any:
    return cp.store.get(POD, ns, name)


def workloads(cp: ControlPlane, ns: str = "team") -> list[Any]:
    return cp.store.list(WL, ns).items


def gated(p: Any) -> bool:
    return any(g.name == GATE for g in p.spec.scheduling_gates or ())


def events(cp: ControlPlane, name: str) -> list[tuple[str, str, str]]:
    return [
        (e.type, e.reason, e.message)
        for e in cp.store.list(EVENT, "team").items
        if e.involved_object.name == name
    ]


# ------------------------------------------------------------------ single pods
def test_plain_pod_is_gated_admitted_ungated_onto_its_flavor_and_its_workload_finishes() -> None:
    cp = pod_plane()
    cp.create(world())
    (created,) = cp.create([pod("p")])
    # The webhook: Kueue's label, finalizer, gate and role hash.
    assert created.metadata.labels[MANAGED] == "true"
    assert created.metadata.finalizers == [MANAGED]
    assert gated(created) and created.spec.node_name is None
    assert len(created.metadata.annotations["kueue.x-k8s.io/role-hash"]) == 8
    cp.mgr.run_until_idle()
    (wl,) = workloads(cp)
    assert wl.metadata.name == owner_workload_name("Pod", "v1", "p", created.metadata.uid)
    assert wl.metadata.name.startswith("pod-p-")
    assert [(ps.name, ps.count) for ps in wl.spec.pod_sets] == [("main", 1)]
    assert wl.spec.queue_name == "main"
    assert wl.metadata.owner_references[0].kind == "Pod"
    running = get(cp, "p")
    assert not gated(running)
    assert running.spec.node_selector == {"gpu": "a100"}
    assert running.metadata.labels["kueue.x-k8s.io/podset"] == "main"
    assert running.spec.node_name == "n-a100" and running.status.phase == "Running"
    assert ("Normal", "Started", "Admitted by clusterQueue cq") in events(cp, "p")
    cp.run()
    done = get(cp, "p")
    assert done.status.phase == "Succeeded"
    assert done.status.start_time == T0
    fin = cond(cp.store.get(WL, "team", wl.metadata.name), "Finished")
    assert (fin.status, fin.reason) == ("True", "Succeeded")
    # Its quota is free again.
    cq = cp.store.get(CLUSTER_QUEUE, "", "cq")
    assert cq.status.admitted_workloads == 0


def test_the_finalizer_goes_when_the_pod_ends_and_a_failure_fails_the_workload() -> None:
    cp = pod_plane()
    cp.create(world())
    cp.create([pod("p", duration="2m", annotations={"kuota.dev/fail": "true"})])
    cp.mgr.run_until_idle()
    assert get(cp, "p").metadata.finalizers == [MANAGED]  # running: kept
    cp.run()
    failed = get(cp, "p")
    assert failed.status.phase == "Failed"
    assert not failed.metadata.finalizers
    (wl,) = workloads(cp)
    fin = cond(wl, "Finished")
    assert (fin.status, fin.reason) == ("True", "Failed")


def test_pod_without_a_queue_name_is_left_alone() -> None:
    cp = pod_plane()
    cp.create(world())
    (created,) = cp.create([pod("free", queue=None)])
    assert MANAGED not in (created.metadata.labels or {})
    assert not created.metadata.finalizers and not gated(created)
    cp.mgr.run_until_idle()
    assert workloads(cp) == []
    assert get(cp, "free").status.phase == "Running"


def test_pod_without_the_pod_framework_is_left_alone() -> None:
    cp = pod_plane("batch/job")
    cp.create(world())
    (created,) = cp.create([pod("p")])
    assert not gated(created) and not created.metadata.finalizers
    cp.mgr.run_until_idle()
    assert workloads(cp) == [] and get(cp, "p").status.phase == "Running"


def test_pod_in_a_namespace_with_a_default_local_queue_gets_it() -> None:
    cp = pod_plane()
    cp.create([*world(), local_queue("team", "default", "cq")])
    (created,) = cp.create([pod("p", queue=None)])
    assert created.metadata.labels[QUEUE] == "default" and gated(created)
    cp.mgr.run_until_idle()
    (wl,) = workloads(cp)
    assert wl.spec.queue_name == "default"
    assert get(cp, "p").status.phase == "Running"


def test_pod_that_does_not_fit_stays_gated_and_gets_no_node() -> None:
    cp = pod_plane()
    cp.create(world(gpus=4))
    cp.create([pod("big", 6)])
    cp.mgr.run_until_idle()
    big = get(cp, "big")
    assert gated(big) and big.spec.node_name is None
    (wl,) = workloads(cp)
    assert cond(wl, "QuotaReserved").status == "False"


def test_evicted_pod_is_marked_termination_target_then_deleted_and_its_workload_ends() -> None:
    cp = pod_plane()
    cp.create(world(gpus=4, preemption=True))
    # A finalizer of the user's keeps the deleted pod in view.
    (lo,) = cp.create([pod("lo", 4, duration=None)])
    lo = clone(lo)
    lo.metadata.finalizers = [*lo.metadata.finalizers, "example.com/keep"]
    cp.store.update(lo)
    cp.mgr.run_until_idle()
    (lo_wl,) = workloads(cp)
    assert get(cp, "lo").status.phase == "Running"
    cp.create([pod("hi", 4, labels={"kueue.x-k8s.io/priority-class": "high"})])
    cp.mgr.run_until_idle()
    victim = get(cp, "lo")
    assert victim.metadata.deletion_timestamp is not None
    tt = cond(victim, "TerminationTarget")
    assert tt.status == "True" and tt.reason == "WorkloadEvictedDueToPreempted"
    assert tt.message.startswith("Preempted to accommodate a workload")
    assert victim.metadata.finalizers == ["example.com/keep"]  # Kueue's is gone
    assert victim.status.phase == "Failed"
    # The deleted pod will not come back: its Workload is finished.
    fin = cond(cp.store.get(WL, "team", lo_wl.metadata.name), "Finished")
    assert (fin.status, fin.reason) == ("True", "OwnerNotFound")
    hi = get(cp, "hi")
    assert not gated(hi) and hi.spec.node_name == "n-a100"


def test_pods_of_a_managed_job_are_admitted_with_their_job_not_on_their_own() -> None:
    cp = pod_plane()
    cp.create(world())
    cp.create([job("team", "j", 1, pods=2, duration="5m")])
    cp.mgr.run_until_idle()
    (wl,) = workloads(cp)
    assert wl.metadata.owner_references[0].kind == "Job"
    pods = cp.store.list(POD, "team").items
    assert len(pods) == 2
    for p in pods:
        assert MANAGED not in (p.metadata.labels or {})
        assert MANAGED not in (p.metadata.finalizers or [])
        assert not gated(p) and p.status.phase == "Running"


def test_pods_a_parent_suspends_are_gated_without_a_finalizer_and_admitted() -> None:
    # Only "deployment" is enabled: the pod integration runs implicitly, for the
    # pods a parent suspends (the Deployment webhook's template annotation).
    cp = pod_plane("deployment")
    cp.create(world())
    parent = {"kueue.x-k8s.io/pod-suspending-parent": "deployment"}
    (child,) = cp.create([pod("child", annotations=parent, labels={MANAGED: "true"})])
    (plain,) = cp.create([pod("plain")])
    assert gated(child) and not child.metadata.finalizers
    cp.mgr.run_until_idle()
    assert not gated(get(cp, "child")) and get(cp, "child").status.phase == "Running"
    names = [w.metadata.name for w in workloads(cp)]
    assert names == [owner_workload_name("Pod", "v1", "child", child.metadata.uid)]
    # A pod no parent suspends is not this integration's to admit.
    assert plain.metadata.labels[MANAGED] == "true"
    assert gated(get(cp, "plain"))


def test_role_hash_is_kueues() -> None:
    """The pod of Kueue's own webhook tests hashes to the value they expect
    (the webhook alone: no API server admission setting priority and
    tolerations first, as in those tests)."""
    cfg = config(integrations={"frameworks": ["pod"]}, manageJobsWithoutQueueName=True)
    cp = control_plane(cfg, cluster=False)
    cp.create([namespace("team")])
    kueue_test_pod = obj(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"namespace": "team", "name": "test-pod"},
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {"name": "c", "image": "pause", "resources": {"requests": {}, "limits": {}}}
                ],
            },
        }
    )
    (created,) = cp.create([kueue_test_pod])
    assert created.metadata.annotations["kueue.x-k8s.io/role-hash"] == "a9f06f3a"


# ------------------------------------------------------------------ webhook refusals
@pytest.mark.parametrize(
    ("labels", "annotations", "message"),
    [
        (
            {GROUP: "g"},
            {},
            f"metadata.annotations[{TOTAL}]: Required value: both the '{TOTAL}' annotation "
            f"and the '{GROUP}' label should be set",
        ),
        (
            {},
            {TOTAL: "2"},
            f"metadata.labels[{GROUP}]: Required value: both the '{TOTAL}' annotation "
            f"and the '{GROUP}' label should be set",
        ),
        (
            {GROUP: "g"},
            {TOTAL: "abc"},
            f'metadata.annotations[{TOTAL}]: Invalid value: "abc": '
            'strconv.Atoi: parsing "abc": invalid syntax',
        ),
        (
            {GROUP: "g"},
            {TOTAL: "0"},
            f'metadata.annotations[{TOTAL}]: Invalid value: "0": incorrect annotation value '
            f"'{TOTAL}=0': group total count should be greater than zero",
        ),
        (
            {GROUP: "g", "kueue.x-k8s.io/prebuilt-workload-name": "other"},
            {TOTAL: "2"},
            'metadata.labels[kueue.x-k8s.io/prebuilt-workload-name]: Invalid value: "other": '
            "prebuilt workload and pod group should be equal",
        ),
    ],
)
def test_webhook_refuses_bad_group_metadata_naming_the_field(
    labels: dict[str, str], annotations: dict[str, str], message: str
) -> None:
    cp = pod_plane()
    cp.create(world())
    p = pod("p", labels=labels, annotations=annotations)
    with pytest.raises(Invalid) as err:
        cp.store.create(p)
    assert str(err.value) == f'Pod "p" is invalid: {message}'


def test_webhook_refuses_a_managed_label_other_than_true() -> None:
    cp = pod_plane()
    cp.create(world())
    with pytest.raises(Invalid) as err:
        cp.store.create(pod("p", queue=None, labels={MANAGED: "yes"}))
    assert str(err.value) == (
        f'Pod "p" is invalid: metadata.labels[{MANAGED}]: Forbidden: '
        "managed label value can only be 'true'"
    )


def test_webhook_refuses_changing_a_pods_group_or_a_running_pods_queue() -> None:
    cp = pod_plane()
    cp.create(world())
    (p,) = cp.create([pod("p", group="g1", total=2)])
    moved = clone(p)
    moved.metadata.labels[GROUP] = "g2"
    with pytest.raises(Invalid) as err:
        cp.store.update(moved)
    assert str(err.value) == (
        f'Pod "p" is invalid: metadata.labels[{GROUP}]: Invalid value: "g2": field is immutable'
    )
    cp.create([pod("s")])
    cp.mgr.run_until_idle()
    running = clone(get(cp, "s"))
    assert not gated(running)
    running.metadata.labels[QUEUE] = "other"
    with pytest.raises(Invalid) as err:
        cp.store.update(running)
    assert str(err.value) == (
        f'Pod "s" is invalid: metadata.labels[{QUEUE}]: Invalid value: "other": field is immutable'
    )


def test_waiting_pod_moved_to_another_queue_takes_its_workload_along() -> None:
    cp = pod_plane()
    cp.create([*world(gpus=4), local_queue("team", "other", "cq")])
    cp.create([pod("big", 6)])
    cp.mgr.run_until_idle()
    moved = clone(get(cp, "big"))
    assert gated(moved)
    moved.metadata.labels[QUEUE] = "other"
    cp.store.update(moved)
    cp.mgr.run_until_idle()
    (wl,) = workloads(cp)
    assert wl.spec.queue_name == "other"


def test_pods_ready_follows_the_pods_ready_condition() -> None:
    cp = pod_plane(waitForPodsReady={"timeout": "5m"})
    cp.create(world(gpus=4))
    cp.create([pod("first", 4, duration="10m"), pod("second", 4, duration="10m")])
    cp.mgr.run_until_idle()
    by_pod = {w.metadata.owner_references[0].name: w for w in workloads(cp)}
    ready = cond(by_pod["first"], "PodsReady")
    assert (ready.status, ready.reason) == ("True", "Started")
    waiting = cond(by_pod["second"], "PodsReady")
    assert (waiting.status, waiting.reason) == ("False", "WaitForStart")
    cp.run(until=T0 + timedelta(minutes=10))
    second = cp.store.get(WL, "team", by_pod["second"].metadata.name)
    assert get(cp, "second").status.phase == "Running"
    assert cond(second, "PodsReady").status == "True"


def test_a_pod_is_checked_by_jobframework_s_common_rules_too() -> None:
    # Kueue's pod webhook runs ValidateJobOnCreate as every integration does:
    # a pod cannot be an elastic job, and its admission gates are well formed.
    cp = pod_plane()
    cp.create(world())
    elastic = pod("e", annotations={"kueue.x-k8s.io/elastic-job": "true"})
    with pytest.raises(Invalid) as err:
        cp.store.create(elastic)
    assert str(err.value) == (
        'Pod "e" is invalid: metadata.annotations[kueue.x-k8s.io/elastic-job]: '
        'Forbidden: elastic job is not supported for "/v1, Kind=Pod"'
    )
    gated_by = pod("g", annotations={"kueue.x-k8s.io/admission-gated-by": "Not A Name"})
    with pytest.raises(Invalid) as err:
        cp.store.create(gated_by)
    assert "metadata.annotations[kueue.x-k8s.io/admission-gated-by]" in str(err.value)
