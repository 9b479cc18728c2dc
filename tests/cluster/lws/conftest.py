"""A cluster with the API server's admission hooks for LeaderWorkerSets,
and the manifests and readers the LWS tests share."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from kuota.api.core import Pod
from kuota.api.decode import decode_object
from kuota.api.lws import LeaderWorkerSet
from kuota.cluster import api_server_hooks, install
from kuota.cluster.lws.lws_objects import LWS, STATEFULSET
from kuota.cluster.podutil import POD
from kuota.runtime.clock import VirtualClock
from kuota.runtime.manager import Manager
from kuota.store import MemoryStore, clone

from ..conftest import NS, T0, World, node_manifest

P = "leaderworkerset.sigs.k8s.io/"


class LwsWorld(World):
    """The cluster with the API server's admission hooks (the LWS webhooks among them)."""

    def __init__(self) -> None:
        self.clock = VirtualClock(T0)
        self.store = MemoryStore(self.clock.now, admission=api_server_hooks(lambda: self.store))
        self.mgr = Manager(self.store, self.clock, raise_errors=True)
        self.cluster = install(self.mgr)

    def lws(self, name: str = "vllm") -> LeaderWorkerSet:
        obj: LeaderWorkerSet = self.store.get(LWS, NS, name)
        return obj

    def sts(self, name: str) -> Any:
        return self.store.get(STATEFULSET, NS, name)

    def pods(self, lws: str = "vllm") -> dict[str, Pod]:
        items = self.store.list(POD, NS, label_selector=f"{P}name={lws}").items
        return {p.metadata.name: p for p in items if p.metadata.deletion_timestamp is None}

    def phases(self, lws: str = "vllm") -> dict[str, str]:
        return {n: p.status.phase for n, p in self.pods(lws).items()}

    def uids(self, lws: str = "vllm") -> dict[str, str]:
        return {n: p.metadata.uid for n, p in self.pods(lws).items()}

    def update_lws(self, change: Any, name: str = "vllm") -> None:
        obj = clone(self.lws(name))
        change(obj.spec)
        self.store.update(obj)

    def events(self, reason: str) -> list[str]:
        evs = self.store.list(("", "Event"), NS).items
        evs.sort(key=lambda ev: int(ev.metadata.resource_version))
        return [ev.message for ev in evs if ev.reason == reason]

    def conditions(self, name: str = "vllm") -> dict[str, tuple[str, str]]:
        st = self.lws(name).status
        return {c.type: (c.status, c.reason) for c in st.conditions or ()}


@pytest.fixture
def world() -> LwsWorld:
    w = LwsWorld()
    w.apply(node_manifest("n1", cpu="64", memory="256Gi"))
    return w


def container(name: str = "c", image: str = "vllm:1", cpu: str = "1") -> dict[str, Any]:
    return {"name": name, "image": image, "resources": {"requests": {"cpu": cpu}}}


def lws_manifest(
    name: str = "vllm",
    *,
    replicas: int | None = 2,
    size: int | None = 3,
    annotations: dict[str, str] | None = None,
    leader: dict[str, Any] | None = None,
    worker_spec: dict[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    lwt: dict[str, Any] = {"workerTemplate": {"spec": worker_spec or {"containers": [container()]}}}
    if size is not None:
        lwt["size"] = size
    if leader is not None:
        lwt["leaderTemplate"] = leader
    for k in ("restartPolicy", "subGroupPolicy"):
        if k in spec:
            lwt[k] = spec.pop(k)
    body: dict[str, Any] = {"leaderWorkerTemplate": lwt, **spec}
    if replicas is not None:
        body["replicas"] = replicas
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": name, "namespace": NS, "annotations": annotations or {}},
        "spec": body,
    }


def env_of(pod: Pod, container_index: int = 0) -> list[tuple[str, str]]:
    env = pod.spec.containers[container_index].env or []
    return [(v["name"], v.get("value", "")) for v in env]


def sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def errors_of(manifest: dict[str, Any]) -> list[str]:
    doc = decode_object(manifest, source="test", index=0)
    return [str(e) for e in doc.errors]


def group_pods(group: int, lws: str = "vllm", size: int = 3) -> list[str]:
    return [f"{lws}-{group}", *(f"{lws}-{group}-{w}" for w in range(1, size))]


def restart_container(world: LwsWorld, name: str) -> None:
    """The kubelet restarted the pod's container (a crash, a failed probe)."""
    pod = clone(world.pod(name))
    count = max((cs["restartCount"] for cs in pod.status.container_statuses or ()), default=0)
    pod.status.container_statuses = [{"name": "c", "restartCount": count + 1, "ready": True}]
    world.store.update_status(pod)
