"""Kueue's MultiKueue (``pkg/controller/admissionchecks/multikueue``): a
manager dispatching the workloads of ClusterQueues with a
``kueue.x-k8s.io/multikueue`` admission check to worker clusters, each
reached through its MultiKueueCluster's kubeconfig."""

from __future__ import annotations

from kuota.api.kueue.config import KueueConfig
from kuota.controllers.multikueue.check_activity import MultiKueueCheckActivity
from kuota.controllers.multikueue.cluster_controller import ClusterController
from kuota.controllers.multikueue.settings import MultiKueueSettings
from kuota.controllers.multikueue.workload_controller import MultiKueueWorkloads

__all__ = [
    "ClusterController",
    "MultiKueueCheckActivity",
    "MultiKueueSettings",
    "MultiKueueWorkloads",
    "multikueue_controllers",
]


def multikueue_controllers(config: KueueConfig) -> list[object]:
    """The three controllers Kueue sets up when the MultiKueue gate is on."""
    if not config.gate("MultiKueue"):
        return []
    settings = MultiKueueSettings.from_config(config)
    clusters = ClusterController(settings)
    return [MultiKueueCheckActivity(), clusters, MultiKueueWorkloads(settings, clusters)]
