"""A small embedded cluster for tests: a MemoryStore and a Manager on a
VirtualClock with the cluster's controllers installed; objects are built from
manifests with the real decoder and created through the store."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kuota.api.decode import decode_object
from kuota.api.k8s import Job, Node, Pod
from kuota.cluster import EmbeddedCluster, Placement, RunSource, install
from kuota.cluster.podutil import JOB, NODE, POD
from kuota.runtime.clock import VirtualClock
from kuota.runtime.manager import Manager
from kuota.store import MemoryStore, NotFound

T0 = datetime(2025, 1, 1, tzinfo=UTC)
NS = "default"


def decode(manifest: dict[str, Any]) -> Any:
    doc = decode_object(manifest, source="test", index=0)
    assert doc.ok, [str(e) for e in doc.errors]
    return doc.obj


def node_manifest(
    name: str,
    *,
    cpu: str = "4",
    memory: str = "16Gi",
    pods: str | None = None,
    extra: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
    ready: str | None = None,
    capacity_only: bool = False,
) -> dict[str, Any]:
    resources = {"cpu": cpu, "memory": memory, **(extra or {})}
    if pods is not None:
        resources["pods"] = pods
    status: dict[str, Any] = {"capacity" if capacity_only else "allocatable": resources}
    if ready is not None:
        status["conditions"] = [{"type": "Ready", "status": ready}]
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
        "status": status,
    }


def pod_spec(
    *,
    cpu: str | None = "1",
    extra: dict[str, str] | None = None,
    node_selector: dict[str, str] | None = None,
    tolerations: list[dict[str, Any]] | None = None,
    priority: int | None = None,
    affinity: dict[str, Any] | None = None,
) -> dict[str, Any]:
    requests = {**({"cpu": cpu} if cpu else {}), **(extra or {})}
    container: dict[str, Any] = {"name": "main", "image": "busybox"}
    if requests:
        container["resources"] = {"requests": requests, "limits": dict(requests)}
    spec: dict[str, Any] = {"restartPolicy": "Never", "containers": [container]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    if tolerations:
        spec["tolerations"] = tolerations
    if priority is not None:
        spec["priority"] = priority
    if affinity:
        spec["affinity"] = affinity
    return spec


def pod_manifest(
    name: str, *, duration: str | None = None, fail: bool = False, **spec: Any
) -> dict[str, Any]:
    annotations = {}
    if duration is not None:
        annotations["kuota.dev/duration"] = duration
    if fail:
        annotations["kuota.dev/fail"] = "true"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "annotations": annotations},
        "spec": pod_spec(**spec),
    }


def job_manifest(
    name: str,
    *,
    parallelism: int | None = None,
    completions: int | None = None,
    duration: str | None = "60s",
    fail: bool = False,
    backoff_limit: int | None = None,
    suspend: bool | None = None,
    indexed: bool = False,
    active_deadline: int | None = None,
    **spec: Any,
) -> dict[str, Any]:
    annotations = {}
    if duration is not None:
        annotations["kuota.dev/duration"] = duration
    if fail:
        annotations["kuota.dev/fail"] = "true"
    job_spec: dict[str, Any] = {
        "template": {
            "metadata": {"annotations": annotations, "labels": {"app": name}},
            "spec": pod_spec(**spec),
        }
    }
    for key, value in (
        ("parallelism", parallelism),
        ("completions", completions),
        ("backoffLimit", backoff_limit),
        ("suspend", suspend),
        ("activeDeadlineSeconds", active_deadline),
    ):
        if value is not None:
            job_spec[key] = value
    if indexed:
        job_spec["completionMode"] = "Indexed"
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": NS},
        "spec": job_spec,
    }


class World:
    """One embedded cluster in virtual time."""

    def __init__(self, placement: Placement | None = None, runs: RunSource | None = None) -> None:
        self.clock = VirtualClock(T0)
        self.store = MemoryStore(self.clock.now)
        self.mgr = Manager(self.store, self.clock, raise_errors=True)
        self.cluster: EmbeddedCluster = install(self.mgr, placement, runs=runs)

    # ------------------------------------------------------------ writing
    def apply(self, *manifests: dict[str, Any]) -> None:
        for m in manifests:
            self.store.create(decode(m))

    def run(self, until: timedelta | None = None) -> str:
        """Run until nothing more can happen, or until ``T0 + until`` (the
        clock then reads exactly that, even if nothing happened meanwhile)."""
        if until is None:
            return self.mgr.run()
        reason = self.mgr.run(until=T0 + until)
        self.clock.wait_until(T0 + until)
        return reason

    def advance(self, delta: timedelta) -> None:
        """Run until the clock has moved ``delta`` past now."""
        self.run(self.elapsed + delta)

    @property
    def elapsed(self) -> timedelta:
        return self.clock.now() - T0

    # ------------------------------------------------------------ reading
    def pod(self, name: str) -> Pod:
        pod: Pod = self.store.get(POD, NS, name)
        return pod

    def node(self, name: str) -> Node:
        node: Node = self.store.get(NODE, "", name)
        return node

    def job(self, name: str) -> Job:
        job: Job = self.store.get(JOB, NS, name)
        return job

    def exists(self, rtype: tuple[str, str], name: str, ns: str = NS) -> bool:
        try:
            self.store.get(rtype, ns, name)
        except NotFound:
            return False
        return True

    def pods_of(self, job: str) -> list[Pod]:
        items: list[Pod] = self.store.list(
            POD, NS, label_selector=f"batch.kubernetes.io/job-name={job}"
        ).items
        return items

    def condition(self, pod: str, ctype: str) -> Any:
        st = self.pod(pod).status
        for c in (st.conditions if st is not None else None) or ():
            if c.type == ctype:
                return c
        return None

    def job_conditions(self, name: str) -> dict[str, Any]:
        st = self.job(name).status
        return {c.type: c for c in (st.conditions if st is not None else None) or ()}


@pytest.fixture
def world() -> Iterator[World]:
    yield World()
