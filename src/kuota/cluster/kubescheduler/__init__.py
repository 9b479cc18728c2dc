"""kube-scheduler in the embedded cluster: the PodScheduler controller
(``pod_scheduler``) binds pending pods where a :class:`Placement` says,
by default :class:`KubeScheduler` (``kube_scheduler``): its filters
(``filters``, ``spread``, ``interpod``), scores (``scoring``) and
DefaultPreemption (``default_preemption``) over the scheduler's cache
(``node_table``, ``cluster_snapshot``, ``podinfo``); ``cluster_capacity``
asks it how many more copies of a pod fit. The names below are imported
from their modules on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from kuota.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from kuota.cluster.kubescheduler.cluster_snapshot import ClusterSnapshot
    from kuota.cluster.kubescheduler.kube_scheduler import KubeScheduler
    from kuota.cluster.kubescheduler.node_table import NodeState, NodeTable
    from kuota.cluster.kubescheduler.placement import FirstFit, Placement, PlacementResult
    from kuota.cluster.kubescheduler.pod_scheduler import PodScheduler

__all__ = [
    "ClusterSnapshot",
    "FirstFit",
    "KubeScheduler",
    "NodeState",
    "NodeTable",
    "Placement",
    "PlacementResult",
    "PodScheduler",
]

# Each export's module, imported on first use (see kuota.cluster).
_EXPORTS: Final[dict[str, str]] = {
    "ClusterSnapshot": "kuota.cluster.kubescheduler.cluster_snapshot",
    "KubeScheduler": "kuota.cluster.kubescheduler.kube_scheduler",
    "NodeState": "kuota.cluster.kubescheduler.node_table",
    "NodeTable": "kuota.cluster.kubescheduler.node_table",
    "FirstFit": "kuota.cluster.kubescheduler.placement",
    "Placement": "kuota.cluster.kubescheduler.placement",
    "PlacementResult": "kuota.cluster.kubescheduler.placement",
    "PodScheduler": "kuota.cluster.kubescheduler.pod_scheduler",
}


__getattr__ = lazy_getattr(__name__, _EXPORTS)
