"""An autoscaling RayJob or RayService as an elastic job
(ElasticJobsViaWorkloadSlices, Kueue's rayjob and rayservice integrations:
both ElasticWorkloadNameProviders, supported since v0.15.2 / v0.14.7). The
Ray autoscaler changes the replicas of the RayCluster the job owns, not the
job: Kueue reads the podSets' worker counts from that cluster
(raycluster.UpdatePodSets), notes the cluster's generation on the job
(``kueue.x-k8s.io/raycluster-generation``) and puts it in each new slice's
name, so each scale-up step queues a slice of its own while the extra
workers wait behind the elastic-job gate. The RayService webhook gates its
templates itself. (Kueue@ff69552e test/e2e/singlecluster/extended/
kuberay_test.go "Should run a rayjob with InTreeAutoscaling", "Should run a
rayjob with multi scale-up steps", "Should run a rayservice with
InTreeAutoscaling"; pkg/controller/jobs/rayjob/rayjob_controller_test.go
TestPodSets "with workload slicing and autoscaling enabled, update from
RayCluster"; rayservice_webhook.go Default.)"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from tests.controllers.jobs.ray.test_raycluster_elastic import _world
from tests.embedded.world import T0, config, control_plane, job, obj

from kuota.store import clone
from kuota.store.resources import POD, RAY_CLUSTER, RAY_JOB, RAY_SERVICE
from kuota.store.resources import WORKLOAD as WL

GATE = "kueue.x-k8s.io/elastic-job"
REPLACES = "kueue.x-k8s.io/workload-slice-replacement-for"
GENERATION = "kueue.x-k8s.io/raycluster-generation"


def _container(cpu: str) -> dict[str, Any]:
    return {"name": "ray", "image": "rayproject/ray", "resources": {"requests": {"cpu": cpu}}}


def _cluster_spec() -> dict[str, Any]:
    return {
        "enableInTreeAutoscaling": True,
        "headGroupSpec": {"template": {"spec": {"containers": [_container("1")]}}},
        "workerGroupSpecs": [
            {
                "groupName": "workers",
                "replicas": 1,
                "minReplicas": 0,
                "maxReplicas": 5,
                "template": {"spec": {"containers": [_container("500m")]}},
            }
        ],
    }


def _meta(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": "team",
        "labels": {"kueue.x-k8s.io/queue-name": "main"},
        "annotations": {"kueue.x-k8s.io/elastic-job": "true", "kuota.dev/duration": "2h"},
    }


def _rayjob() -> Any:
    return obj(
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayJob",
            "metadata": _meta("rj"),
            "spec": {
                "entrypoint": "python sample.py",
                "shutdownAfterJobFinishes": True,
                "submissionMode": "HTTPMode",
                "rayClusterSpec": _cluster_spec(),
            },
        }
    )


def _rayservice() -> Any:
    return obj(
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayService",
            "metadata": _meta("rs"),
            "spec": {"rayClusterConfig": _cluster_spec()},
        }
    )


def _cp() -> Any:
    frameworks = ["batch/job", "ray.io/rayjob", "ray.io/raycluster", "ray.io/rayservice"]
    cp = control_plane(config(integrations={"frameworks": frameworks}), cluster=True)
    cp.create(_world())
    return cp


def _cond(o: Any, ctype: str) -> Any:
    return next((c for c in (o.status.conditions or ()) if c.type == ctype), None)


def _slices(cp: Any, kind: str) -> list[Any]:
    wls = [
        w for w in cp.store.list(WL, "team").items if w.metadata.owner_references[0].kind == kind
    ]
    return sorted(wls, key=lambda w: w.metadata.creation_timestamp)


def _live(cp: Any, kind: str) -> list[Any]:
    return [w for w in _slices(cp, kind) if _cond(w, "Finished") is None]


def _the_cluster(cp: Any) -> Any:
    (rc,) = cp.store.list(RAY_CLUSTER, "team").items
    return rc


def _autoscale(cp: Any, replicas: int) -> None:
    """What the Ray autoscaler does: the cluster's worker replicas."""
    rc = clone(_the_cluster(cp))
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


def _scale_up_steps(cp: Any, kind: str) -> None:
    """Head 1 CPU + autoscaler 500m + one 500m worker = 2 of 5 CPUs; a Job
    holds 2 more for 30 minutes, so the second scale-up step waits."""
    cp.run(until=T0 + timedelta(minutes=5))
    (first,) = _slices(cp, kind)
    assert _cond(first, "Admitted").status == "True"
    assert _workers(cp) == {"gated": 0, "running": 1}

    _autoscale(cp, 2)  # 500m more: fits
    cp.run(until=T0 + timedelta(minutes=10))
    (second,) = _live(cp, kind)
    assert second.metadata.name != first.metadata.name
    assert second.metadata.annotations[REPLACES] == f"team/{first.metadata.name}"
    assert [(ps.name, ps.count) for ps in second.spec.pod_sets] == [("head", 1), ("workers", 2)]
    assert _cond(second, "Admitted").status == "True"
    assert _workers(cp) == {"gated": 0, "running": 2}

    _autoscale(cp, 4)  # a second step, 1 CPU more: 0.5 is free until the Job ends
    cp.run(until=T0 + timedelta(minutes=15))
    old, third = _live(cp, kind)
    assert old.metadata.name == second.metadata.name
    assert third.metadata.name not in (first.metadata.name, second.metadata.name)
    assert [ps.count for ps in third.spec.pod_sets] == [1, 4]
    assert _cond(third, "QuotaReserved").status == "False"
    assert _workers(cp) == {"gated": 2, "running": 2}

    cp.run(until=T0 + timedelta(minutes=40))  # the Job ends at 30m
    (live,) = _live(cp, kind)
    assert live.metadata.name == third.metadata.name
    assert _cond(live, "Admitted").status == "True"
    fin = _cond(cp.store.get(WL, "team", old.metadata.name), "Finished")
    assert (fin.status, fin.reason) == ("True", "WorkloadSliceReplaced")
    assert _workers(cp) == {"gated": 0, "running": 4}

    _autoscale(cp, 2)  # idle workers scaled down: the admitted slice shrinks in place
    cp.run(until=T0 + timedelta(minutes=45))
    (live,) = _live(cp, kind)
    assert live.metadata.name == third.metadata.name
    assert [ps.count for ps in live.spec.pod_sets] == [1, 2]
    assert _workers(cp) == {"gated": 0, "running": 2}


def test_an_autoscaled_rayjob_queues_a_slice_per_scale_up_step() -> None:
    cp = _cp()
    cp.create([_rayjob(), job("team", "other", 0, pods=2, duration="30m")])
    _scale_up_steps(cp, "RayJob")
    rj = cp.store.get(RAY_JOB, "team", "rj")
    rc = _the_cluster(cp)
    assert rj.metadata.annotations[GENERATION] == str(rc.metadata.generation)
    assert rj.spec.ray_cluster_spec.worker_group_specs[0].replicas == 1  # the job's own spec


def test_an_autoscaled_rayservice_queues_a_slice_per_scale_up_step() -> None:
    cp = _cp()
    cp.create([_rayservice(), job("team", "other", 0, pods=2, duration="30m")])
    _scale_up_steps(cp, "RayService")
    svc = cp.store.get(RAY_SERVICE, "team", "rs")
    rc = _the_cluster(cp)
    assert svc.metadata.annotations[GENERATION] == str(rc.metadata.generation)
    # KubeRay's RayService leaves the autoscaler's replicas alone.
    assert rc.spec.worker_group_specs[0].replicas == 2


def test_the_rayservice_webhook_gates_an_elastic_services_templates() -> None:
    cp = _cp()
    cp.create([_rayservice()])
    spec = cp.store.get(RAY_SERVICE, "team", "rs").spec.ray_cluster_config
    for t in (spec.head_group_spec.template, spec.worker_group_specs[0].template):
        assert [g.name for g in t.spec.scheduling_gates] == [GATE]
