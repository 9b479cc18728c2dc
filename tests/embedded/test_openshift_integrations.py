"""OpenShift's Red Hat build of Kueue with the Leader Worker Set Operator:
the operator's ``Kueue`` resource enables ``LeaderWorkerSet`` among its
frameworks, and only namespaces labelled ``kueue.openshift.io/managed=true``
are managed (openshift.md): there each LWS group is one Workload admitted
whole; elsewhere an LWS with a queue name runs as if Kueue were absent."""

from __future__ import annotations

from typing import Any

from kuota.api.kueue import types as kt
from kuota.api.openshift.operator_config import to_kueue_config
from kuota.embedded.controlplane import ControlPlane

from .test_lws_integration import lws
from .world import cluster_queue, control_plane, flavor, local_queue, namespace, node, obj

WL = (kt.GROUP, "Workload")
POD = ("", "Pod")
GATE = "kueue.x-k8s.io/admission"
MANAGED = {"kueue.openshift.io/managed": "true"}


def plane() -> ControlPlane:
    cr = obj(
        {
            "apiVersion": "kueue.openshift.io/v1",
            "kind": "Kueue",
            "metadata": {"name": "cluster"},
            "spec": {"config": {"integrations": {"frameworks": ["BatchJob", "LeaderWorkerSet"]}}},
        }
    )
    cfg, errs = to_kueue_config(cr)
    assert cfg is not None, errs
    return control_plane(cfg, openshift=True)


def world(ns: str, labels: dict[str, str] | None) -> list[Any]:
    return [
        namespace(ns, labels),
        flavor("h100", {"gpu": "h100"}),
        cluster_queue("cq", {"h100": 10}),  # one group of 10 GPUs
        local_queue(ns, "main", "cq"),
        *(node(f"n{i}", 8, {"gpu": "h100"}) for i in range(4)),
    ]


def pods(cp: ControlPlane, ns: str) -> dict[str, Any]:
    return {p.metadata.name: p for p in cp.store.list(POD, ns).items}


def gated(p: Any) -> bool:
    return any(g.name == GATE for g in p.spec.scheduling_gates or ())


def test_in_a_managed_namespace_each_group_is_admitted_whole() -> None:
    cp = plane()
    cp.create([*world("serving", MANAGED), lws(ns="serving", replicas=2, size=3)])
    cp.mgr.run_until_idle()
    wls = cp.store.list(WL, "serving").items
    assert len(wls) == 2  # one per group
    admitted = [w for w in wls if w.status and w.status.admission]
    assert len(admitted) == 1  # quota for one group of 10 GPUs
    by_group: dict[str, list[Any]] = {}
    for p in pods(cp, "serving").values():
        group = p.metadata.labels["leaderworkerset.sigs.k8s.io/group-index"]
        by_group.setdefault(group, []).append(p)
    assert sorted(len(v) for v in by_group.values()) == [3, 3]
    # All or nothing: one group all placed, the other all gated and unplaced.
    states = sorted(
        (all(not gated(p) and p.spec.node_name for p in v), all(gated(p) for p in v))
        for v in by_group.values()
    )
    assert states == [(False, True), (True, False)]


def test_outside_managed_namespaces_an_lws_runs_as_without_kueue() -> None:
    cp = plane()
    cp.create([*world("other", None), lws(ns="other", replicas=2, size=3)])
    cp.mgr.run_until_idle()
    assert cp.store.list(WL, "other").items == []
    ps = pods(cp, "other")
    assert len(ps) == 6 and not any(gated(p) for p in ps.values())
