"""Builders and helpers shared by the store tests (and the crash writer)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from kuota.api.base import enc_hook
from kuota.api.decode import decode_object
from kuota.store import MemoryStore, ResourceType

# The keys the store tests name (re-exported: the tests import them from here).
from kuota.store.resources import CLUSTER_QUEUE as CLUSTER_QUEUE
from kuota.store.resources import JOB as JOB
from kuota.store.resources import WORKLOAD as WORKLOAD

T0 = datetime(2026, 1, 1, tzinfo=UTC)
MakeStore = Callable[..., MemoryStore]


class FakeClock:
    """Moves one second per reading, so every timestamp differs."""

    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def decode(raw: dict[str, Any]) -> Any:
    doc = decode_object(raw, source="test", index=0)
    assert doc.ok, [doc.shown(e) for e in doc.errors]
    return doc.obj


def job(
    name: str,
    namespace: str = "team-a",
    *,
    labels: dict[str, str] | None = None,
    parallelism: int = 1,
    finalizers: list[str] | None = None,
    owners: list[Any] | None = None,
    status: dict[str, Any] | None = None,
    generate_name: str = "",
) -> Any:
    meta: dict[str, Any] = {"namespace": namespace}
    if name:
        meta["name"] = name
    if generate_name:
        meta["generateName"] = generate_name
    if labels:
        meta["labels"] = labels
    if finalizers:
        meta["finalizers"] = finalizers
    if owners:
        meta["ownerReferences"] = [
            {
                "apiVersion": o.api_version,
                "kind": o.kind,
                "name": o.metadata.name,
                "uid": o.metadata.uid,
            }
            for o in owners
        ]
    raw: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {
            "parallelism": parallelism,
            "suspend": True,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "main",
                            "image": "trainer:1",
                            "resources": {"requests": {"cpu": "2", "memory": "8Gi"}},
                        }
                    ],
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
                }
            },
        },
    }
    if status is not None:
        raw["status"] = status
    return decode(raw)


def workload(name: str, namespace: str = "team-a", *, owners: list[Any] | None = None) -> Any:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": {"app": "train"}}
    if owners:
        meta["ownerReferences"] = [
            {
                "apiVersion": o.api_version,
                "kind": o.kind,
                "name": o.metadata.name,
                "uid": o.metadata.uid,
                "controller": True,
            }
            for o in owners
        ]
    return decode(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "Workload",
            "metadata": meta,
            "spec": {
                "queueName": "main",
                "podSets": [
                    {
                        "name": "workers",
                        "count": 4,
                        "template": {
                            "spec": {
                                "restartPolicy": "Never",
                                "containers": [
                                    {
                                        "name": "c",
                                        "image": "busybox",
                                        "resources": {"requests": {"cpu": "250m"}},
                                    }
                                ],
                            }
                        },
                    }
                ],
            },
        }
    )


def cluster_queue(name: str, cpu: str = "10", *, api_version: str = "v1beta2") -> Any:
    return decode(
        {
            "apiVersion": f"kueue.x-k8s.io/{api_version}",
            "kind": "ClusterQueue",
            "metadata": {"name": name},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {"name": "default", "resources": [{"name": "cpu", "nominalQuota": cpu}]}
                        ],
                    }
                ],
            },
        }
    )


def wire(obj: Any) -> bytes:
    return msgspec.json.encode(obj, enc_hook=enc_hook)


def state_of(store: MemoryStore) -> tuple[dict[tuple[ResourceType, str, str], bytes], int, Any]:
    """Everything a restart must reproduce: objects (wire form), rv and meta."""
    objects = {
        (rtype, o.metadata.namespace, o.metadata.name): wire(o) for rtype, o in store.objects()
    }
    return objects, store.resource_version, store.all_meta()


def uid_seq(uid: str) -> int:
    return int(uid.replace("-", ""), 16)
