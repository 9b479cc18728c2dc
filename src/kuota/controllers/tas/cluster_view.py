"""What Kueue's TAS cache reads of the cluster (its node cache and non-TAS
pod usage cache): each node's labels, allocatable, taints and readiness, and
the requests of the running pods Kueue did not place on a topology (a TAS
pod's usage is its workload's, counted from the admission)."""

from __future__ import annotations

from typing import Any

from kuota.api.kueue.topology import PREFERRED, REQUIRED, SLICE_REQUIRED, UNCONSTRAINED
from kuota.quota.requests import pod_requests, resource_value
from kuota.runtime.manager import Manager
from kuota.scheduler.tas.snapshot import PODS, TASNode
from kuota.store.resources import NODE, POD

_TAS_ANNOTATIONS = (REQUIRED, PREFERRED, SLICE_REQUIRED, UNCONSTRAINED)


def _node(n: Any) -> TASNode:
    st = n.status
    alloc = {r: resource_value(r, q) for r, q in ((st.allocatable if st else None) or {}).items()}
    ready = any(
        c.type == "Ready" and c.status == "True" for c in (st.conditions if st else None) or ()
    )
    spec = n.spec
    unschedulable = bool(spec is not None and spec.unschedulable)
    taints = list((spec.taints if spec is not None else None) or ())
    return TASNode(
        n.metadata.name, dict(n.metadata.labels or {}), alloc, taints, ready and not unschedulable
    )


def is_tas_pod(pod: Any) -> bool:
    """utiltas.IsTAS: the pod carries a topology annotation."""
    ann = pod.metadata.annotations or {}
    return any(k in ann for k in _TAS_ANNOTATIONS)


def tas_cluster(mgr: Manager) -> tuple[list[TASNode], dict[str, dict[str, int]]]:
    nodes = sorted((_node(n) for n in mgr.informer(NODE).list()), key=lambda n: n.name)
    usage: dict[str, dict[str, int]] = {}
    for pod in mgr.informer(POD).list():
        node = pod.spec.node_name if pod.spec is not None else None
        if not node or is_tas_pod(pod):
            continue
        phase = pod.status.phase if pod.status is not None else None
        if phase in ("Succeeded", "Failed"):
            continue
        u = usage.setdefault(node, {})
        for r, q in pod_requests(pod.spec).items():
            u[r] = u.get(r, 0) + q
        u[PODS] = u.get(PODS, 0) + 1
    return nodes, usage
