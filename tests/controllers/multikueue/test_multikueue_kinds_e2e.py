"""MultiKueue for the job kinds beyond Job and JobSet, end to end: a manager
and a worker, each a real ``kuota serve`` on 127.0.0.1 (the manager reaching
the worker through a kubeconfig kept in a Secret).

A RayJob, a PyTorchJob, a TrainJob and an AppWrapper are submitted together
to the manager, queued where the ClusterQueue has a MultiKueue check: Kueue's
webhook sets each kind's managedBy to MultiKueue, the manager's own operators
leave them alone, each is dispatched to the worker (a copy with the
prebuilt-workload and origin labels, managedBy cleared), runs there under the
worker's operators, its status is mirrored back to the manager's object, and
the manager's job and Workload finish with it; the worker's copies are then
deleted. The cases of Kueue's test/e2e/multikueue/extended/e2e_test.go:
"Should run a RayJob on worker if admitted", "Should run a kubeflow
PyTorchJob on worker if admitted", "Should run a TrainJob on worker if
admitted", "Should run an appwrapper containing a job on worker if admitted".
"""

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
    owned_by,
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
  - batch/job
  - ray.io/rayjob
  - ray.io/raycluster
  - kubeflow.org/pytorchjob
  - trainer.kubeflow.org/trainjob
  - workload.codeflare.dev/appwrapper
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
MK = "kueue.x-k8s.io/multikueue"
QUEUE = {"kueue.x-k8s.io/queue-name": "user-queue"}


def _pod(duration: str, cpu: str = "100m", container: str = "c") -> dict[str, Any]:
    return {
        "metadata": {"annotations": {"kuota.dev/duration": duration}},
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": container,
                    "image": "busybox",
                    "resources": {"requests": {"cpu": cpu, "memory": "100Mi"}},
                }
            ],
        },
    }


def _meta(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "namespace": "default", "labels": dict(QUEUE), **extra}


RAYJOB = {
    "apiVersion": "ray.io/v1",
    "kind": "RayJob",
    "metadata": _meta("rayjob1", annotations={"kuota.dev/duration": "15s"}),
    "spec": {
        "suspend": True,
        "shutdownAfterJobFinishes": True,
        "entrypoint": 'python -c "import ray; ray.init(); print(ray.cluster_resources())"',
        "submitterPodTemplate": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {
                        "name": "submitter",
                        "image": "rayproject/ray:2.9.0",
                        "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}},
                    }
                ],
            }
        },
        "rayClusterSpec": {
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "ray-head",
                                "image": "rayproject/ray:2.9.0",
                                "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}},
                            }
                        ]
                    }
                },
            },
            "workerGroupSpecs": [
                {
                    "groupName": "small-group",
                    "replicas": 1,
                    "minReplicas": 1,
                    "maxReplicas": 1,
                    "rayStartParams": {},
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "ray-worker",
                                    "image": "rayproject/ray:2.9.0",
                                    "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}},
                                }
                            ]
                        }
                    },
                }
            ],
        },
    },
}
PYTORCHJOB = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": _meta("pytorchjob1"),
    "spec": {
        "pytorchReplicaSpecs": {
            t: {
                "replicas": 1,
                "restartPolicy": "Never",
                "template": _pod("15s", container="pytorch"),
            }
            for t in ("Master", "Worker")
        }
    },
}
RUNTIME = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "ClusterTrainingRuntime",
    "metadata": {
        "name": "torch-distributed",
        "labels": {"trainer.kubeflow.org/framework": "torch"},
    },
    "spec": {
        "mlPolicy": {"numNodes": 1, "torch": {"numProcPerNode": "auto"}},
        "template": {
            "spec": {
                "replicatedJobs": [
                    {
                        "name": "node",
                        "template": {
                            "metadata": {
                                "labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}
                            },
                            "spec": {"template": _pod("1h")},
                        },
                    }
                ]
            }
        },
    },
}
TRAINJOB = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainJob",
    "metadata": _meta("trainjob-test"),
    "spec": {
        "runtimeRef": {"name": "torch-distributed", "kind": "ClusterTrainingRuntime"},
        "trainer": {"numNodes": 1, "resourcesPerNode": {"requests": {"cpu": "100m"}}},
        # the trainer's pods run 15s (a patch of the user's own, kept in the copy)
        "runtimePatches": [
            {
                "manager": "example.com/user",
                "trainingRuntimeSpec": {
                    "template": {
                        "spec": {
                            "replicatedJobs": [
                                {
                                    "name": "node",
                                    "template": {
                                        "spec": {
                                            "template": {
                                                "metadata": {
                                                    "annotations": {"kuota.dev/duration": "15s"}
                                                }
                                            }
                                        }
                                    },
                                }
                            ]
                        }
                    }
                },
            }
        ],
    },
}
APPWRAPPER = {
    "apiVersion": "workload.codeflare.dev/v1beta2",
    "kind": "AppWrapper",
    "metadata": _meta("aw"),
    "spec": {
        "components": [
            {
                "template": {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "metadata": {"name": "job-1"},
                    "spec": {
                        "parallelism": 2,
                        "completions": 2,
                        "template": _pod("15s"),
                    },
                }
            }
        ]
    },
}


@pytest.fixture
def mk(tmp_path: Path) -> Iterator[tuple[Served, Served]]:
    """The manager and one worker (worker2 of examples/multikueue; worker1
    has no Secret, so only worker2 connects), every kind enabled in both."""
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


def _admitted_on_worker2(manager: Served, kind: str, name: str) -> dict[str, Any]:
    wl: dict[str, Any] = wait_for(
        f"the {kind}'s workload admitted",
        lambda: (w := owned_by(manager, kind, name)) and cond(w, "Admitted") and w,
        60,
    )
    assert wl["status"]["clusterName"] == "worker2"
    [check] = wl["status"]["admissionChecks"]
    assert (check["state"], check["message"]) == ("Ready", 'The workload was admitted on "worker2"')
    return wl


def _remote_copy(worker: Served, resource: str, name: str, wl_name: str) -> dict[str, Any]:
    remote: dict[str, Any] = wait_for(
        f"the {resource} in worker2", lambda: get(worker, resource, name, "-n", "default"), 60
    )
    labels = remote["metadata"]["labels"]
    assert labels["kueue.x-k8s.io/multikueue-origin"] == "multikueue"
    annotations = remote["metadata"]["annotations"]  # (WorkloadIdentifierAnnotations)
    assert annotations["kueue.x-k8s.io/prebuilt-workload-name"] == wl_name
    return remote


def _finished(manager: Served, worker: Served, kind: str, resource: str, name: str) -> None:
    """The manager's Workload finished (Succeeded), and the worker's copies
    of the job and the Workload deleted."""
    try:
        done = wait_for(
            f"the {kind}'s workload Finished",
            lambda: cond(owned_by(manager, kind, name), "Finished"),
            90,
        )
    except AssertionError as err:  # say where it stuck: the worker, or the mirror
        remote = get(worker, resource, name, "-n", "default") or {}
        local = get(manager, resource, name, "-n", "default") or {}
        wls = {w["metadata"]["name"]: w.get("status") for w in workloads(worker)}
        raise AssertionError(
            f"{err}\nworker's {kind}: {remote.get('spec')} {remote.get('status')}\n"
            f"manager's {kind} status: {local.get('status')}\nworker's Workloads: {wls}"
        ) from err
    assert done["reason"] == "Succeeded", done
    wait_for(
        f"the {kind} gone from worker2",
        lambda: get(worker, resource, name, "-n", "default") is None,
        30,
    )


def test_rayjob_pytorchjob_trainjob_and_appwrapper_run_on_the_worker(
    mk: tuple[Served, Served],
) -> None:
    manager, worker = mk
    manager.ok("apply", "-f", "-", input=secret("worker2-secret", worker.kubeconfig))
    wait_for("worker2 Active", lambda: cond(get(manager, "multikueuecluster", "worker2"), "Active"))
    _apply(worker, RUNTIME)
    _apply(manager, RUNTIME)
    _apply(manager, RAYJOB, PYTORCHJOB, TRAINJOB, APPWRAPPER)

    # Kueue's webhook (ApplyDefaultForManagedBy): each kind's managedBy
    ray = get(manager, "rayjob", "rayjob1", "-n", "default")
    assert ray["spec"]["managedBy"] == MK
    torch = get(manager, "pytorchjob", "pytorchjob1", "-n", "default")
    assert torch["spec"]["runPolicy"]["managedBy"] == MK
    train = get(manager, "trainjob", "trainjob-test", "-n", "default")
    assert train["spec"]["managedBy"] == MK
    aw = get(manager, "appwrapper", "aw", "-n", "default")
    assert aw["spec"]["managedBy"] == MK

    # --- RayJob: dispatched, run by the worker's KubeRay, Complete mirrored
    wl = _admitted_on_worker2(manager, "RayJob", "rayjob1")
    remote = _remote_copy(worker, "rayjob", "rayjob1", wl["metadata"]["name"])
    assert "managedBy" not in remote["spec"]
    # --- PyTorchJob
    wl = _admitted_on_worker2(manager, "PyTorchJob", "pytorchjob1")
    remote = _remote_copy(worker, "pytorchjob", "pytorchjob1", wl["metadata"]["name"])
    assert "managedBy" not in remote["spec"]["runPolicy"]
    # --- TrainJob: the copy leaves Kueue's runtime patch to the worker's webhook
    wl = _admitted_on_worker2(manager, "TrainJob", "trainjob-test")
    remote = _remote_copy(worker, "trainjob", "trainjob-test", wl["metadata"]["name"])
    managers = [p["manager"] for p in remote["spec"]["runtimePatches"]]
    assert managers.count("kueue.x-k8s.io/manager") == 1, managers
    assert "example.com/user" in managers
    assert remote["spec"].get("managedBy") != MK
    # --- AppWrapper: Running mirrored while its Job runs in the worker
    wl = _admitted_on_worker2(manager, "AppWrapper", "aw")
    remote = _remote_copy(worker, "appwrapper", "aw", wl["metadata"]["name"])
    assert "managedBy" not in remote["spec"]
    wait_for(
        "the AppWrapper Running in the manager",
        lambda: (
            (get(manager, "appwrapper", "aw", "-n", "default").get("status") or {}).get("phase")
            in ("Running", "Succeeded")
        ),
        60,
    )

    _finished(manager, worker, "RayJob", "rayjob", "rayjob1")
    ray = get(manager, "rayjob", "rayjob1", "-n", "default")
    assert (ray["status"]["jobDeploymentStatus"], ray["status"]["jobStatus"]) == (
        "Complete",
        "SUCCEEDED",
    )

    _finished(manager, worker, "PyTorchJob", "pytorchjob", "pytorchjob1")
    torch = get(manager, "pytorchjob", "pytorchjob1", "-n", "default")
    master = torch["status"]["replicaStatuses"]["Master"]
    assert (master.get("active", 0), master["succeeded"]) == (0, 1)
    assert cond(torch, "Succeeded") is not None

    _finished(manager, worker, "TrainJob", "trainjob", "trainjob-test")
    train = get(manager, "trainjob", "trainjob-test", "-n", "default")
    assert cond(train, "Complete") is not None, train.get("status")

    _finished(manager, worker, "AppWrapper", "appwrapper", "aw")
    aw = get(manager, "appwrapper", "aw", "-n", "default")
    assert aw["status"]["phase"] == "Succeeded"
    assert aw["spec"]["suspend"] is False

    # the manager ran none of it
    assert get(manager, "pods", "-n", "default")["items"] == []
    assert get(manager, "rayclusters", "-n", "default")["items"] == []
    assert get(manager, "jobsets", "-n", "default")["items"] == []
