"""MultiKueue for the kinds built on pods, end to end: a manager and a
worker, each a real ``kuota serve`` on 127.0.0.1 (the manager reaching the
worker through a kubeconfig kept in a Secret).

A plain pod, a pod group, a StatefulSet, a LeaderWorkerSet and a Deployment
are submitted to the manager, queued where the ClusterQueue has a MultiKueue
check. None has ``managedBy``: each is MultiKueue's, the manager's pods stay
gated while their copies run in the worker. The pods are copied as they are
(the prebuilt-workload annotation and origin label added) and their status
mirrored back (a Deployment is ready in the manager on its pods' status);
the StatefulSet and the LWS are copied with the manager's uid
(``kueue.x-k8s.io/multikueue-origin-uid``), so the worker's Kueue takes the
dispatched Workloads for theirs; every group of the LWS goes to the worker
its group 0 went to. Deleting the StatefulSet and the LWS in the manager
deletes their copies and Workloads in the worker. The cases of Kueue's
test/e2e/multikueue: "Should create a pod on worker if admitted", "Should
create a pod group on worker if admitted", "Should create pods on worker if
the deployment is admitted", "Should sync a StatefulSet to worker if
admitted" (baseline), "Should sync a LeaderWorkerSet and run replicas on
worker cluster", "Should dispatch all LeaderWorkerSet workloads to the same
worker" (extended)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.controllers.multikueue.test_multikueue_e2e import (
    EXAMPLE,
    cond,
    get,
    secret,
    serve_all,
    wait_for,
    workloads,
)
from tests.server.conftest import KUBECTL, Served

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

FRAMEWORKS = """\
integrations:
  frameworks:
  - pod
  - statefulset
  - leaderworkerset.x-k8s.io/leaderworkerset
  - deployment
"""
MANAGER_CONFIG = f"""\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
multiKueue:
  gcInterval: 2s
  workerLostTimeout: 3s
{FRAMEWORKS}"""
WORKER_CONFIG = f"""\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
{FRAMEWORKS}"""
QUEUE = {"kueue.x-k8s.io/queue-name": "user-queue"}
GATE = "kueue.x-k8s.io/admission"
ORIGIN = "kueue.x-k8s.io/multikueue-origin"
PREBUILT = "kueue.x-k8s.io/prebuilt-workload-name"
ORIGIN_UID = "kueue.x-k8s.io/multikueue-origin-uid"


def _container(name: str = "c") -> dict[str, Any]:
    return {
        "name": name,
        "image": "busybox",
        "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}},
    }


def _pod(name: str, duration: str, **labels: str) -> dict[str, Any]:
    ann = {"kuota.dev/duration": duration}
    if "kueue.x-k8s.io/pod-group-name" in labels:
        ann["kueue.x-k8s.io/pod-group-total-count"] = "2"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {**QUEUE, **labels},
            "annotations": ann,
        },
        "spec": {"restartPolicy": "Never", "containers": [_container()]},
    }


STATEFULSET = {
    "apiVersion": "apps/v1",
    "kind": "StatefulSet",
    "metadata": {"name": "sts", "namespace": "default", "labels": dict(QUEUE)},
    "spec": {
        "replicas": 3,
        "serviceName": "sts",
        "selector": {"matchLabels": {"app": "sts"}},
        "template": {
            "metadata": {"labels": {"app": "sts"}},
            "spec": {"containers": [_container()]},
        },
    },
}
DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "dep", "namespace": "default", "labels": dict(QUEUE)},
    "spec": {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "dep"}},
        "template": {
            "metadata": {"labels": {"app": "dep"}},
            "spec": {"containers": [_container()]},
        },
    },
}
LWS = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "lws", "namespace": "default", "labels": dict(QUEUE)},
    "spec": {
        "replicas": 3,
        "leaderWorkerTemplate": {
            "size": 2,
            "workerTemplate": {"spec": {"containers": [_container("worker")]}},
        },
    },
}


@pytest.fixture
def mk(tmp_path: Path) -> Iterator[tuple[Served, Served]]:
    """The manager and one worker (worker2 of examples/multikueue; worker1
    has no Secret, so only worker2 connects), the pod kinds enabled in both."""
    worlds = {}
    for name, src, config in (
        ("manager", EXAMPLE / "manager", MANAGER_CONFIG),
        ("worker2", EXAMPLE / "worker2", WORKER_CONFIG),
    ):
        world = tmp_path / f"{name}-world"
        shutil.copytree(src, world)
        (world / "config.yaml").write_text(config)
        worlds[name] = world
    with serve_all(worlds, tmp_path) as started:
        yield started["manager"], started["worker2"]


def _apply(s: Served, *docs: dict[str, Any]) -> None:
    s.ok("apply", "-f", "-", input=yaml.safe_dump_all(docs))


def _pods(s: Served, selector: str) -> list[dict[str, Any]]:
    out = get(s, "pods", "-n", "default", "-l", selector)
    return out["items"] if out else []


def _gated(pod: dict[str, Any]) -> bool:
    return any(g["name"] == GATE for g in pod["spec"].get("schedulingGates") or ())


def _workload(s: Served, name: str) -> dict[str, Any] | None:
    return next((w for w in workloads(s) if w["metadata"]["name"] == name), None)


def _admitted_on_worker2(manager: Served, name: str) -> dict[str, Any]:
    wl: dict[str, Any] = wait_for(
        f"{name} admitted",
        lambda: (w := _workload(manager, name)) and cond(w, "Admitted") and w,
        60,
    )
    assert wl["status"]["clusterName"] == "worker2"
    [check] = wl["status"]["admissionChecks"]
    assert (check["state"], check["message"]) == ("Ready", 'The workload was admitted on "worker2"')
    return wl


def _owned_by(s: Served, kind: str, name: str) -> list[dict[str, Any]]:
    return [
        w
        for w in workloads(s)
        if any(
            r["kind"] == kind and r["name"] == name
            for r in w["metadata"].get("ownerReferences") or ()
        )
    ]


def test_a_pod_a_pod_group_a_statefulset_an_lws_and_a_deployment_run_on_the_worker(
    mk: tuple[Served, Served],
) -> None:
    manager, worker = mk
    manager.ok("apply", "-f", "-", input=secret("worker2-secret", worker.kubeconfig))
    wait_for("worker2 Active", lambda: cond(get(manager, "multikueuecluster", "worker2"), "Active"))
    group = {"kueue.x-k8s.io/pod-group-name": "group"}
    _apply(
        manager,
        _pod("pod", "5s", app="single"),
        _pod("group-a", "20s", **group),
        _pod("group-b", "20s", **group),
        STATEFULSET,
        LWS,
        DEPLOYMENT,
    )

    # --- a plain pod: copied, run in the worker, its status mirrored; the
    # manager's stays gated
    [pod_wl] = wait_for("the pod's workload", lambda: _owned_by(manager, "Pod", "pod"), 30)
    _admitted_on_worker2(manager, pod_wl["metadata"]["name"])
    remote = wait_for("the pod in worker2", lambda: get(worker, "pod", "pod", "-n", "default"), 30)
    # (WorkloadIdentifierAnnotations, on by default: the prebuilt name an annotation)
    assert remote["metadata"]["labels"][ORIGIN] == "multikueue"
    assert remote["metadata"]["annotations"][PREBUILT] == pod_wl["metadata"]["name"]
    done = wait_for(
        "the manager's pod Succeeded",
        lambda: (
            (p := get(manager, "pod", "pod", "-n", "default"))
            and (p.get("status") or {}).get("phase") == "Succeeded"
            and p
        ),
        60,
    )
    assert _gated(done)
    scheduled = [c for c in done["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert [c["status"] for c in scheduled] == ["True"]  # the worker's, once it ran there
    wait_for(
        "the pod's workload Finished",
        lambda: cond(_workload(manager, pod_wl["metadata"]["name"]), "Finished"),
        30,
    )

    # --- a pod group: its Workload (named after the group) dispatched, every
    # pod copied; both Succeeded in the manager, still gated
    _admitted_on_worker2(manager, "group")
    for name in ("group-a", "group-b"):
        copy = wait_for(
            f"{name} in worker2", lambda n=name: get(worker, "pod", n, "-n", "default"), 30
        )
        assert copy["metadata"]["annotations"][PREBUILT] == "group"
    wait_for(
        "the group's pods Succeeded in the manager",
        lambda: (
            all(
                (p.get("status") or {}).get("phase") == "Succeeded" and _gated(p)
                for p in _pods(manager, "kueue.x-k8s.io/pod-group-name=group")
            )
            and len(_pods(manager, "kueue.x-k8s.io/pod-group-name=group")) == 2
        ),
        60,
    )
    wait_for("the group's workload Finished", lambda: cond(_workload(manager, "group"), "Finished"))

    # --- a StatefulSet: copied with the manager's uid, its Workload the
    # worker's; its pods run there, the manager's stay gated
    sts = get(manager, "statefulset", "sts", "-n", "default")
    [sts_wl] = wait_for("the set's workload", lambda: _owned_by(manager, "StatefulSet", "sts"), 30)
    sts_wl_name = sts_wl["metadata"]["name"]
    _admitted_on_worker2(manager, sts_wl_name)
    copy = wait_for(
        "the set in worker2", lambda: get(worker, "statefulset", "sts", "-n", "default")
    )
    assert copy["metadata"]["annotations"][ORIGIN_UID] == sts["metadata"]["uid"]
    assert copy["metadata"]["annotations"][PREBUILT] == sts_wl_name
    wait_for(
        "the set's 3 replicas ready in worker2",
        lambda: (
            (get(worker, "statefulset", "sts", "-n", "default").get("status") or {}).get(
                "readyReplicas"
            )
            == 3
        ),
        60,
    )
    assert [w["metadata"]["name"] for w in _owned_by(worker, "StatefulSet", "sts")] == [sts_wl_name]
    # (OrderedReady: the manager's set makes its next pod once one is ready: never)
    manager_pods = _pods(manager, "app=sts")
    assert manager_pods and all(_gated(p) for p in manager_pods)

    # --- an LWS: group 0's Workload dispatched first, the others to the same worker
    lws = get(manager, "leaderworkerset", "lws", "-n", "default")
    wls = wait_for(
        "the LWS's 3 workloads",
        lambda: (w := _owned_by(manager, "LeaderWorkerSet", "lws")) and len(w) == 3 and w,
        30,
    )
    names = sorted(w["metadata"]["name"] for w in wls)
    for name in names:
        _admitted_on_worker2(manager, name)
    copy = wait_for(
        "the LWS in worker2", lambda: get(worker, "leaderworkerset", "lws", "-n", "default")
    )
    assert copy["metadata"]["annotations"][ORIGIN_UID] == lws["metadata"]["uid"]
    assert PREBUILT not in copy["metadata"]["labels"]
    assert PREBUILT not in copy["metadata"]["annotations"]
    wait_for(
        "the LWS's 3 groups ready in worker2",
        lambda: (
            (get(worker, "leaderworkerset", "lws", "-n", "default").get("status") or {}).get(
                "readyReplicas"
            )
            == 3
        ),
        60,
    )
    in_worker = sorted(
        w["metadata"]["name"]
        for w in workloads(worker)
        if w["metadata"]["name"] in names and cond(w, "Admitted")
    )
    assert in_worker == names
    lws_pods = _pods(manager, "leaderworkerset.sigs.k8s.io/name=lws")
    assert len(lws_pods) == 6 and all(_gated(p) for p in lws_pods)

    # --- a Deployment: a Workload per pod, each pod run in the worker; the
    # manager's Deployment is ready on the pods' mirrored status
    wait_for(
        "the Deployment's 3 replicas ready in the manager",
        lambda: (
            (get(manager, "deployment", "dep", "-n", "default").get("status") or {}).get(
                "readyReplicas"
            )
            == 3
        ),
        60,
    )
    dep_pods = _pods(manager, "app=dep")
    assert len(dep_pods) == 3 and all(_gated(p) for p in dep_pods)
    for p in dep_pods:
        copy = get(worker, "pod", p["metadata"]["name"], "-n", "default")
        assert (copy["status"]["phase"], _gated(copy)) == ("Running", False)

    # --- deleting the set and the LWS in the manager deletes their copies
    manager.ok("delete", "statefulset", "sts", "-n", "default")
    manager.ok("delete", "leaderworkerset", "lws", "-n", "default")
    wait_for(
        "the set and the LWS gone from worker2",
        lambda: (
            get(worker, "statefulset", "sts", "-n", "default") is None
            and get(worker, "leaderworkerset", "lws", "-n", "default") is None
        ),
        60,
    )
    gone = {sts_wl_name, *names}
    wait_for(
        "their workloads gone from both",
        lambda: (
            not any(
                w["metadata"]["name"] in gone for w in [*workloads(manager), *workloads(worker)]
            )
        ),
        60,
    )
