"""Capacity what-if, as OpenShift's cluster-capacity tool answers it: how many
more copies of a pod fit on the nodes, after the pods already there, and
what stops the next one on each node.

The world's bound pods (``spec.nodeName`` set, not finished) count where
they are; its pending pods are placed first, highest priority first, as
the scheduler would. Then copies of the pod are placed one after the other
with the same placement the embedded cluster uses (filters and the scoring
profile; no preemption: copies never evict anyone) until one fits nowhere.
That one's message is kube-scheduler's, preemption's part included (what
evicting pods could do, as cluster-capacity's "Termination reason" says).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kuota.api.core import Node, Pod
from kuota.cluster.kubescheduler.cluster_snapshot import ClusterSnapshot
from kuota.cluster.kubescheduler.kube_scheduler import KubeScheduler
from kuota.cluster.kubescheduler.placement import NO_NODES_AVAILABLE
from kuota.cluster.kubescheduler.podinfo import pod_priority
from kuota.cluster.kubescheduler.scoring import LOW_NODE_UTILIZATION, Profile
from kuota.cluster.nodeutil import pod_resource_requests
from kuota.cluster.podutil import is_terminal
from kuota.store import clone

__all__ = ["DEFAULT_LIMIT", "CapacityReport", "estimate"]

DEFAULT_LIMIT = 100_000  # copies tried at most (cluster-capacity's --max-limit)


@dataclass
class CapacityReport:
    """How many copies fit, where they went, and why the next one does not."""

    pod: str
    requests: dict[str, int]
    count: int = 0
    per_node: dict[str, int] = field(default_factory=dict)
    stop_reason: str = ""  # the next copy's FitError message ("" when the limit stopped it)
    why_not: dict[str, tuple[str, ...]] = field(default_factory=dict)  # node -> reasons
    limit: int = DEFAULT_LIMIT
    placed_first: int = 0  # the world's pending pods placed before the copies
    unplaced_first: int = 0  # ... and those that fit nowhere

    @property
    def limited(self) -> bool:
        return self.count >= self.limit


def _key(pod: Pod) -> str:
    m = pod.metadata
    return f"{m.namespace}/{m.name}"


def _bind(snap: ClusterSnapshot, sched: KubeScheduler, pod: Pod, node: str) -> None:
    bound = clone(pod)
    assert bound.spec is not None
    bound.spec.node_name = node
    snap.set_pod(_key(pod), bound, sched.bound_info(pod, node))


def estimate(
    pod: Pod,
    nodes: Iterable[Node],
    pods: Iterable[Pod] = (),
    *,
    namespaces: Mapping[str, Mapping[str, str]] | None = None,
    profile: Profile = LOW_NODE_UTILIZATION,
    limit: int = DEFAULT_LIMIT,
) -> CapacityReport:
    """Place copies of ``pod`` on ``nodes`` after ``pods`` (see the module docs)."""
    snap = ClusterSnapshot()
    for n in nodes:
        snap.set_node(n)
    for name, labels in (namespaces or {}).items():
        snap.set_namespace(name, labels)
    sched = KubeScheduler(profile, preemption=False)
    report = CapacityReport(pod=pod.metadata.name, requests=pod_resource_requests(pod), limit=limit)
    pending: list[Pod] = []
    for p in pods:
        if p.spec is None or is_terminal(p) or p.metadata.deletion_timestamp is not None:
            continue
        if p.spec.node_name:
            snap.set_pod(_key(p), p)
        else:
            pending.append(p)
    pending.sort(key=lambda p: (-pod_priority(p.spec), _key(p)))
    for p in pending:
        result = sched.place(p, snap)
        if result.node is not None:
            _bind(snap, sched, p, result.node)
            report.placed_first += 1
        else:
            report.unplaced_first += 1
    base = pod.metadata.name or "pod"
    while report.count < limit:
        copy = clone(pod)
        copy.metadata.name = f"{base}-{report.count}"
        copy.metadata.namespace = pod.metadata.namespace or "default"
        assert copy.spec is not None
        copy.spec.node_name = None
        result = sched.place(copy, snap)
        if result.node is None:
            # The message with DefaultPreemption's part (its dry run only:
            # the nomination it may come to is not acted on).
            report.stop_reason = KubeScheduler(profile).place(copy, snap).message
            report.why_not = {
                name: r.reasons for name, r in sorted(sched.diagnose(copy, snap).items())
            }
            break
        _bind(snap, sched, copy, result.node)
        report.count += 1
        report.per_node[result.node] = report.per_node.get(result.node, 0) + 1
    if not len(snap):
        report.stop_reason = NO_NODES_AVAILABLE
    return report
