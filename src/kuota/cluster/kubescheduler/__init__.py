"""kube-scheduler in the embedded cluster: the PodScheduler controller
(``pod_scheduler``) binds pending pods where a :class:`Placement` says,
by default :class:`KubeScheduler` (``kube_scheduler``): its filters
(``filters``, ``spread``, ``interpod``), scores (``scoring``) and
DefaultPreemption (``default_preemption``) over the scheduler's cache
(``node_table``, ``cluster_snapshot``, ``podinfo``); ``cluster_capacity``
asks it how many more copies of a pod fit."""

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
