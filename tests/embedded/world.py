"""Small worlds for control-plane tests, as manifests decoded by the real decoder."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kuota.api.decode import decode_object
from kuota.api.kueue.config import KueueConfig, load_config
from kuota.embedded.controlplane import ControlPlane

T0 = datetime(2026, 1, 1, tzinfo=UTC)
GPU = "nvidia.com/gpu"


def obj(manifest: dict[str, Any]) -> Any:
    doc = decode_object(manifest, source="test", index=0)
    assert doc.ok, [str(e) for e in doc.errors]
    return doc.obj


def config(**extra: Any) -> KueueConfig:
    cfg, errs = load_config(
        {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration", **extra}
    )
    assert cfg is not None, errs
    return cfg


def namespace(name: str, labels: dict[str, str] | None = None) -> Any:
    return obj(
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "labels": labels or {}},
        }
    )


def flavor(name: str, labels: dict[str, str], taint: bool = False) -> Any:
    spec: dict[str, Any] = {"nodeLabels": labels}
    if taint:
        spec["nodeTaints"] = [{"key": "spot", "value": "true", "effect": "NoSchedule"}]
        spec["tolerations"] = [
            {"key": "spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
        ]
    return obj(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ResourceFlavor",
            "metadata": {"name": name},
            "spec": spec,
        }
    )


def cluster_queue(name: str, quotas: dict[str, int], cohort: str | None = None) -> Any:
    spec: dict[str, Any] = {
        "namespaceSelector": {},
        "resourceGroups": [
            {
                "coveredResources": ["cpu", GPU],
                "flavors": [
                    {
                        "name": f,
                        "resources": [
                            {"name": "cpu", "nominalQuota": "100"},
                            {"name": GPU, "nominalQuota": str(q)},
                        ],
                    }
                    for f, q in quotas.items()
                ],
            }
        ],
    }
    if cohort:
        spec["cohortName"] = cohort
    return obj(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ClusterQueue",
            "metadata": {"name": name},
            "spec": spec,
        }
    )


def local_queue(ns: str, name: str, cq: str) -> Any:
    return obj(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"namespace": ns, "name": name},
            "spec": {"clusterQueue": cq},
        }
    )


def node(name: str, gpus: int, labels: dict[str, str], taint: bool = False) -> Any:
    spec: dict[str, Any] = {}
    if taint:
        spec["taints"] = [{"key": "spot", "value": "true", "effect": "NoSchedule"}]
    alloc = {"cpu": "32", "memory": "256Gi", GPU: str(gpus), "pods": "110"}
    return obj(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "spec": spec,
            "status": {
                "capacity": alloc,
                "allocatable": alloc,
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }
    )


def job(
    ns: str,
    name: str,
    gpus: int,
    *,
    pods: int = 1,
    duration: str | None = "10m",
    queue: str | None = "main",
    labels: dict[str, str] | None = None,
    created: datetime | None = None,
) -> Any:
    meta: dict[str, Any] = {"namespace": ns, "name": name, "labels": dict(labels or {})}
    if queue:
        meta["labels"]["kueue.x-k8s.io/queue-name"] = queue
    if created is not None:
        meta["creationTimestamp"] = created.isoformat()
    annotations = {"kuota.dev/duration": duration} if duration else {}
    return obj(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": meta,
            "spec": {
                "parallelism": pods,
                "completions": pods,
                "template": {
                    "metadata": {"annotations": annotations},
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [
                            {
                                "name": "main",
                                "image": "busybox",
                                "resources": {
                                    "requests": {"cpu": "1", GPU: str(gpus)},
                                    "limits": {GPU: str(gpus)},
                                },
                            }
                        ],
                    },
                },
            },
        }
    )


def control_plane(cfg: KueueConfig | None = None, **kw: Any) -> ControlPlane:
    return ControlPlane(cfg or config(), T0, raise_errors=True, **kw)
