"""A plain pod group asking for a topology (Kueue's pod integration with TAS:
the pod webhook's topology gate, the pod set's topology request from the
pod's own annotations, prepare() keeping the gate for the ungater): its two
pods land in one rack, where a group asking for none may be spread."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from embedded.world import T0, config, control_plane, obj
from kuota.store.resources import NODE, POD
from tas.world import RACK, node, setup

NODES = [node("b1-r1-x1", "b1", "r1"), node("b1-r2-x2", "b1", "r2"), node("b1-r2-x3", "b1", "r2")]


def _pod(name: str, group: str, annotations: dict[str, str]) -> Any:
    return obj(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": "default",
                "labels": {
                    "kueue.x-k8s.io/queue-name": "tas-user-queue",
                    "kueue.x-k8s.io/pod-group-name": group,
                },
                "annotations": {"kueue.x-k8s.io/pod-group-total-count": "2", **annotations},
            },
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}
                ],
            },
        }
    )


def test_pod_group_requiring_a_rack_runs_in_one_rack() -> None:
    cp = control_plane(config(integrations={"frameworks": ["batch/job", "pod"]}))
    cp.create(setup() + NODES)
    req = {"kueue.x-k8s.io/podset-required-topology": RACK}
    cp.create([_pod("p1", "g", req)])
    first = cp.store.get(POD, "default", "p1")
    gates = [g.name for g in first.spec.scheduling_gates]
    assert gates == ["kueue.x-k8s.io/admission", "kueue.x-k8s.io/topology"]
    cp.create([_pod("p2", "g", req)])
    cp.settle()
    cp.advance(T0 + timedelta(seconds=5))
    racks = {n.metadata.name: n.metadata.labels[RACK] for n in cp.store.list(NODE).items}
    pods = cp.store.list(POD, "default").items
    assert all(p.spec.node_name and not p.spec.scheduling_gates for p in pods)
    assert {racks[p.spec.node_name] for p in pods} == {"r2"}
