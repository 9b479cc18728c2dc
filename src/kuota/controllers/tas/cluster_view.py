"""What Kueue's TAS cache reads of the cluster (its node cache and non-TAS
pod usage cache), read from the informers when a cycle runs in a world with
TAS flavors: each node's labels, allocatable, taints and readiness, and the
requests of the bound pods Kueue did not place on a topology (a TAS pod's
usage is its workload's, counted from the admission)."""

from __future__ import annotations

from kuota.runtime.informer import key_of
from kuota.runtime.manager import Manager
from kuota.scheduler.tas.snapshot import TASNode, non_tas_pod_usage, tas_node
from kuota.store.resources import NODE, POD


def tas_cluster(
    mgr: Manager,
) -> tuple[dict[str, TASNode], dict[str, tuple[str, dict[str, int]]]]:
    nodes = {n.metadata.name: tas_node(n) for n in mgr.informer(NODE).list()}
    pods: dict[str, tuple[str, dict[str, int]]] = {}
    for pod in mgr.informer(POD).list():
        usage = non_tas_pod_usage(pod)
        if usage is not None:
            pods[key_of(pod)] = usage
    return nodes, pods
