"""MultiKueue's adapter of each job kind (Kueue's ``<kind>_multikueue_adapter.go``
and their ``_test.go``: SyncJob, IsJobManagedByKueue), the kinds the end to
end test does not run, and the managedBy defaulting of each kind's webhook
(``ApplyDefaultForManagedBy``, Kueue's ``MultiKueueBatchJobWithManagedBy``
and the kinds' ``CanDefaultManagedBy``).

Dispatch runs the MultiKueue workload reconciler against a worker stood in
by a memory store (as test_workload_dispatch.py); the defaulting runs the
embedded control plane's webhooks on create."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from tests.controllers.multikueue.test_workload_dispatch import (
    ORIGIN,
    Setup,
    Worker,
    obj,
    remote_copy,
    state,
    workload,
)
from tests.embedded.world import config, control_plane

from kuota.store.kinds import resource_for

MK = "kueue.x-k8s.io/multikueue"
KF = "kubeflow.org/v1"


def _pod(container: str) -> dict[str, Any]:
    return {
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {"name": container, "image": "x", "resources": {"requests": {"cpu": "1"}}}
            ],
        }
    }


def _kubeflow(field: str, container: str, types: tuple[str, ...]) -> dict[str, Any]:
    return {field: {t: {"replicas": 1, "template": _pod(container)} for t in types}}


def _ray_cluster() -> dict[str, Any]:
    return {
        "headGroupSpec": {"template": _pod("ray-head")},
        "workerGroupSpecs": [
            {"groupName": "g", "replicas": 1, "minReplicas": 1, "maxReplicas": 1}
            | {"template": _pod("ray-worker")}
        ],
    }


_KF_STATUS = {
    "conditions": [{"type": "Running", "status": "True", "reason": "Running"}],
    "replicaStatuses": {"Master": {"active": 1}},
}


class Kind:
    """A kind's manifest (managed by MultiKueue or not), where its managedBy
    is on the wire, and a status its worker's controller could write."""

    def __init__(
        self,
        api_version: str,
        kind: str,
        spec: Callable[[], dict[str, Any]],
        path: tuple[str, ...],
        status: dict[str, Any],
        framework: str,
    ) -> None:
        self.api_version, self.kind, self.spec = api_version, kind, spec
        self.path, self.status, self.framework = path, status, framework

    def manifest(self, managed_by: str | None = MK, ns: str = "ns", **labels: str) -> Any:
        spec = self.spec()
        if managed_by is not None:
            at = spec
            for p in self.path[1:-1]:
                at = at.setdefault(p, {})
            at[self.path[-1]] = managed_by
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "metadata": {"name": "job1", "namespace": ns, "uid": "uid1", "labels": labels},
            "spec": spec,
        }

    def managed_by(self, o: Any) -> Any:
        at = o
        for p in ("spec", *_snake(self.path[1:])):
            at = getattr(at, p, None)
        return at


def _snake(path: tuple[str, ...]) -> list[str]:
    return [
        "run_policy" if p == "runPolicy" else "managed_by" if p == "managedBy" else p for p in path
    ]


KINDS = {
    k.kind: k
    for k in (
        Kind(
            KF,
            "TFJob",
            lambda: _kubeflow("tfReplicaSpecs", "tensorflow", ("Chief", "Worker")),
            ("spec", "runPolicy", "managedBy"),
            {**_KF_STATUS, "replicaStatuses": {"Chief": {"active": 1}}},
            "kubeflow.org/tfjob",
        ),
        Kind(
            KF,
            "PaddleJob",
            lambda: _kubeflow("paddleReplicaSpecs", "paddle", ("Master", "Worker")),
            ("spec", "runPolicy", "managedBy"),
            _KF_STATUS,
            "kubeflow.org/paddlejob",
        ),
        Kind(
            KF,
            "XGBoostJob",
            lambda: _kubeflow("xgbReplicaSpecs", "xgboost", ("Master", "Worker")),
            ("spec", "runPolicy", "managedBy"),
            _KF_STATUS,
            "kubeflow.org/xgboostjob",
        ),
        Kind(
            KF,
            "JAXJob",
            lambda: _kubeflow("jaxReplicaSpecs", "jax", ("Worker",)),
            ("spec", "runPolicy", "managedBy"),
            {**_KF_STATUS, "replicaStatuses": {"Worker": {"active": 1}}},
            "kubeflow.org/jaxjob",
        ),
        Kind(
            "kubeflow.org/v2beta1",
            "MPIJob",
            lambda: _kubeflow("mpiReplicaSpecs", "mpi", ("Launcher", "Worker")),
            ("spec", "runPolicy", "managedBy"),
            {**_KF_STATUS, "replicaStatuses": {"Launcher": {"active": 1}}},
            "kubeflow.org/mpijob",
        ),
        Kind(
            "ray.io/v1",
            "RayCluster",
            _ray_cluster,
            ("spec", "managedBy"),
            {"state": "ready", "readyWorkerReplicas": 1},
            "ray.io/raycluster",
        ),
        Kind(
            "ray.io/v1",
            "RayService",
            lambda: {"rayClusterConfig": _ray_cluster()},
            ("spec", "managedBy"),
            {"serviceStatus": "Running"},
            "ray.io/rayservice",
        ),
        Kind(
            "jobset.x-k8s.io/v1alpha2",
            "JobSet",
            lambda: {
                "replicatedJobs": [
                    {"name": "w", "replicas": 1, "template": {"spec": {"template": _pod("c")}}}
                ]
            },
            ("spec", "managedBy"),
            {"restarts": 2},
            "jobset.x-k8s.io/jobset",
        ),
    )
}


def _owned_workload(k: Kind, *conds: tuple[str, str], check: str = "Pending") -> Any:
    wl = workload(*conds, check=check)
    ref = wl.metadata.owner_references[0]
    ref.api_version, ref.kind = k.api_version, k.kind
    return wl


def _admitted_remote(w: Worker) -> None:
    made = w.store.create(remote_copy())
    made.status = remote_copy(("QuotaReserved", "QuotaReserved"), ("Admitted", "Admitted")).status
    w.store.update_status(made)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_job_is_copied_to_the_admitting_worker_and_its_status_mirrored(kind: str) -> None:
    """SyncJob: the copy has the prebuilt-workload and origin labels and no
    managedBy, the spec otherwise the manager's; once it exists its status
    is the manager job's."""
    k = KINDS[kind]
    rtype = resource_for(k.api_version, k.kind)
    w1 = Worker("worker1")
    _admitted_remote(w1)
    s = Setup(w1)
    local = obj(k.manifest())
    s.add(local, _owned_workload(k))
    wl = s.run()
    assert state(wl) == ("Ready", 'The workload was admitted on "worker1"')
    [remote] = w1.store.list(rtype).items
    # (WorkloadIdentifierAnnotations, on by default: the prebuilt name an annotation)
    assert remote.metadata.labels == {"kueue.x-k8s.io/multikueue-origin": ORIGIN}
    assert remote.metadata.annotations["kueue.x-k8s.io/prebuilt-workload-name"] == "wl1"
    assert k.managed_by(remote) is None
    expected = obj(k.manifest(managed_by=None)).spec
    assert remote.spec == expected

    with_status = obj({**k.manifest(managed_by=None), "status": k.status})
    remote.status = with_status.status
    w1.store.update_status(remote)
    s.run()
    mirrored = s.store.get(rtype, "ns", "job1")
    assert mirrored.status == with_status.status
    assert k.managed_by(mirrored) == MK  # the manager's own stays MultiKueue's


@pytest.mark.parametrize(
    ("kind", "field"),
    [
        ("MPIJob", "spec.runPolicy.managedBy"),
        ("TFJob", "spec.managedBy"),
        ("RayCluster", "spec.managedBy"),
    ],
)
def test_a_job_not_managed_by_multikueue_is_rejected(kind: str, field: str) -> None:
    """IsJobManagedByKueue: the kind names its field as Kueue's adapter does
    (the Kubeflow training jobs' adapter says spec.managedBy, MPIJob's the
    full runPolicy path)."""
    k = KINDS[kind]
    s = Setup(Worker("worker1"))
    s.add(obj(k.manifest(managed_by=None)), _owned_workload(k))
    assert state(s.run()) == (
        "Rejected",
        f'The owner is not managed by Kueue: Expecting {field} to be "{MK}" not "", '
        'Previously: "Pending"',
    )


def test_the_adapters_are_those_of_the_enabled_integrations() -> None:
    """GetMultiKueueAdapters(enabledIntegrations)."""
    from kuota.controllers.multikueue.job_adapters import adapters_for

    got = adapters_for(config(integrations={"frameworks": ["batch/job", "kubeflow.org/mpijob"]}))
    assert sorted(got) == [("batch/v1", "Job"), ("kubeflow.org/v2beta1", "MPIJob")]
    every = adapters_for(None)
    assert {kind for _, kind in every} == {
        "Job",
        "JobSet",
        "PyTorchJob",
        "TFJob",
        "PaddleJob",
        "XGBoostJob",
        "JAXJob",
        "MPIJob",
        "RayJob",
        "RayCluster",
        "RayService",
        "AppWrapper",
        "TrainJob",
        "Pod",
        "StatefulSet",
        "LeaderWorkerSet",
    }


# ------------------------------------------------------------------ the webhooks
def _mk_world(cp: Any) -> None:
    g = "kueue.x-k8s.io/v1beta2"
    quota = [{"name": "cpu", "nominalQuota": 100}]
    docs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}},
        {"apiVersion": g, "kind": "ResourceFlavor", "metadata": {"name": "f"}},
        {
            "apiVersion": g,
            "kind": "AdmissionCheck",
            "metadata": {"name": "mk"},
            "spec": {
                "controllerName": MK,
                "parameters": {
                    "apiGroup": "kueue.x-k8s.io",
                    "kind": "MultiKueueConfig",
                    "name": "c",
                },
            },
        },
        {
            "apiVersion": g,
            "kind": "MultiKueueConfig",
            "metadata": {"name": "c"},
            "spec": {"clusters": ["w1"]},
        },
    ]
    for cq, checks in (("mk-cq", ["mk"]), ("plain-cq", [])):
        strategy = {"admissionChecks": [{"name": c} for c in checks]}
        docs.append(
            {
                "apiVersion": g,
                "kind": "ClusterQueue",
                "metadata": {"name": cq},
                "spec": {
                    "namespaceSelector": {},
                    "resourceGroups": [
                        {
                            "coveredResources": ["cpu"],
                            "flavors": [{"name": "f", "resources": quota}],
                        }
                    ],
                    **({"admissionChecksStrategy": strategy} if checks else {}),
                },
            }
        )
        docs.append(
            {
                "apiVersion": g,
                "kind": "LocalQueue",
                "metadata": {"name": cq.removesuffix("-cq"), "namespace": "ns"},
                "spec": {"clusterQueue": cq},
            }
        )
    cp.create([obj(d) for d in docs])


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_webhook_defaults_managed_by_where_the_cluster_queue_has_a_multikueue_check(
    kind: str,
) -> None:
    """ApplyDefaultForManagedBy: queued to a ClusterQueue with a MultiKueue
    check, a job without managedBy is MultiKueue's; queued elsewhere it
    keeps none."""
    k = KINDS[kind]
    cp = control_plane(config(integrations={"frameworks": [k.framework]}))
    _mk_world(cp)
    rtype = resource_for(k.api_version, k.kind)
    cp.create([obj(k.manifest(managed_by=None, **{"kueue.x-k8s.io/queue-name": "mk"}))])
    assert k.managed_by(cp.store.get(rtype, "ns", "job1")) == MK
    other = k.manifest(managed_by=None, **{"kueue.x-k8s.io/queue-name": "plain"})
    other["metadata"]["name"] = "job2"
    cp.create([obj(other)])
    assert k.managed_by(cp.store.get(rtype, "ns", "job2")) is None
