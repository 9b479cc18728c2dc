"""An autoscaling RayCluster as an elastic job (ElasticJobsViaWorkloadSlices,
Kueue's raycluster integration over pkg/workloadslicing): a worker group's
replicas raised (by the Ray autoscaler or a user) queue a new Workload slice
while the cluster runs on, the new workers made but held by the
``kueue.x-k8s.io/elastic-job`` scheduling gate; admitted, the slice replaces
the old one and the workers run. Lowered, the admitted slice shrinks in place.
(Kueue@ff69552e test/integration/singlecluster/controller/jobs/raycluster/
raycluster_controller_test.go "Should support raycluster scale-down and
scale-up"; the gate: raycluster_webhook.go Default and validateElasticJob.)"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from tests.embedded.world import T0, config, control_plane, job, node, obj

from kuota.store import Invalid, clone
from kuota.store.resources import POD, RAY_CLUSTER
from kuota.store.resources import WORKLOAD as WL

GATE = "kueue.x-k8s.io/elastic-job"
REPLACES = "kueue.x-k8s.io/workload-slice-replacement-for"


def _world() -> list[Any]:
    return [
        obj({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}),
        obj(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ResourceFlavor",
                "metadata": {"name": "default"},
            }
        ),
        obj(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ClusterQueue",
                "metadata": {"name": "cq"},
                "spec": {
                    "namespaceSelector": {},
                    "resourceGroups": [
                        {
                            "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                            "flavors": [
                                {
                                    "name": "default",
                                    "resources": [
                                        {"name": "cpu", "nominalQuota": "5"},
                                        {"name": "memory", "nominalQuota": "100Gi"},
                                        {"name": "nvidia.com/gpu", "nominalQuota": "8"},
                                    ],
                                }
                            ],
                        }
                    ],
                },
            }
        ),
        obj(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "LocalQueue",
                "metadata": {"name": "main", "namespace": "team"},
                "spec": {"clusterQueue": "cq"},
            }
        ),
        node("n1", 8, {}),
    ]


def _container(cpu: str) -> dict[str, Any]:
    return {"name": "ray", "image": "rayproject/ray", "resources": {"requests": {"cpu": cpu}}}


def _cluster(workers: int, elastic: bool = True) -> Any:
    meta: dict[str, Any] = {
        "name": "rc",
        "namespace": "team",
        "labels": {"kueue.x-k8s.io/queue-name": "main"},
    }
    if elastic:
        meta["annotations"] = {"kueue.x-k8s.io/elastic-job": "true"}
    return obj(
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayCluster",
            "metadata": meta,
            "spec": {
                "enableInTreeAutoscaling": True,
                "headGroupSpec": {"template": {"spec": {"containers": [_container("1")]}}},
                "workerGroupSpecs": [
                    {
                        "groupName": "workers",
                        "replicas": workers,
                        "minReplicas": 0,
                        "maxReplicas": 5,
                        "template": {"spec": {"containers": [_container("1")]}},
                    }
                ],
            },
        }
    )


def _cp() -> Any:
    cp = control_plane(
        config(integrations={"frameworks": ["batch/job", "ray.io/raycluster"]}), cluster=True
    )
    cp.create(_world())
    return cp


def _cond(o: Any, ctype: str) -> Any:
    return next((c for c in (o.status.conditions or ()) if c.type == ctype), None)


def _slices(cp: Any) -> list[Any]:
    wls = [
        w
        for w in cp.store.list(WL, "team").items
        if w.metadata.owner_references[0].kind == "RayCluster"
    ]
    return sorted(wls, key=lambda w: w.metadata.creation_timestamp)


def _scale(cp: Any, replicas: int) -> None:
    rc = clone(cp.store.get(RAY_CLUSTER, "team", "rc"))
    rc.spec.worker_group_specs[0].replicas = replicas
    cp.store.update(rc)


def _workers(cp: Any) -> dict[str, int]:
    out = {"gated": 0, "running": 0}
    for p in cp.store.list(POD, "team").items:
        if (p.metadata.labels or {}).get("ray.io/group") != "workers":
            continue
        if any(g.name == GATE for g in p.spec.scheduling_gates or ()):
            out["gated"] += 1
        elif p.status is not None and p.status.phase == "Running":
            out["running"] += 1
    return out


def test_autoscaled_workers_wait_gated_for_their_slice() -> None:
    cp = _cp()
    # The head (1 CPU and the autoscaler's 500m) and one worker: 2.5 of 5 CPUs;
    # the Job takes 2 more for 30 minutes.
    cp.create([_cluster(1), job("team", "other", 0, pods=2, duration="30m")])
    cp.run(until=T0 + timedelta(minutes=5))
    (first,) = _slices(cp)
    assert _cond(first, "Admitted").status == "True"
    rc = cp.store.get(RAY_CLUSTER, "team", "rc")
    for t in (rc.spec.head_group_spec.template, rc.spec.worker_group_specs[0].template):
        assert [g.name for g in t.spec.scheduling_gates] == [GATE]
    assert _workers(cp) == {"gated": 0, "running": 1}

    _scale(cp, 3)  # two more workers: 2 CPUs, 0.5 free
    cp.run(until=T0 + timedelta(minutes=10))
    old, new = _slices(cp)
    assert new.metadata.annotations[REPLACES] == f"team/{old.metadata.name}"
    assert [(ps.name, ps.count) for ps in new.spec.pod_sets] == [("head", 1), ("workers", 3)]
    assert _cond(new, "QuotaReserved").status == "False"
    assert _cond(old, "Admitted").status == "True"
    assert _workers(cp) == {"gated": 2, "running": 1}

    cp.run(until=T0 + timedelta(minutes=40))  # the Job ends at 30m
    old, new = _slices(cp)
    assert _cond(new, "Admitted").status == "True"
    fin = _cond(old, "Finished")
    assert (fin.status, fin.reason) == ("True", "WorkloadSliceReplaced")
    assert _workers(cp) == {"gated": 0, "running": 3}

    _scale(cp, 2)  # scaled down: the admitted slice shrinks in place
    cp.run(until=T0 + timedelta(minutes=45))
    (live,) = [w for w in _slices(cp) if _cond(w, "Finished") is None]
    assert live.metadata.name == new.metadata.name
    assert [ps.count for ps in live.spec.pod_sets] == [1, 2]
    assert _workers(cp) == {"gated": 0, "running": 2}


def test_an_elastic_raycluster_must_keep_the_gate() -> None:
    """validateElasticJob: the webhook refuses an elastic RayCluster whose
    templates lost the gate."""
    cp = _cp()
    cp.create([_cluster(1)])
    cp.run(until=T0 + timedelta(minutes=1))
    rc = clone(cp.store.get(RAY_CLUSTER, "team", "rc"))
    rc.spec.worker_group_specs[0].template.spec.scheduling_gates = None
    with pytest.raises(Invalid) as err:
        cp.store.update(rc)
    assert (
        "spec.workerGroupSpecs[0].template.spec.schedulingGates: Invalid value: null: "
        "an elastic job must have the ElasticJobSchedulingGate"
    ) in str(err.value)
