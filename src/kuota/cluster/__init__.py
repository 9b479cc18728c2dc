"""The embedded cluster: nodes, kube-scheduler-like placement, a simulated
kubelet and the batch/v1 Job controller, as controllers of a
:class:`kuota.runtime.manager.Manager` over the object store."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kuota.cluster.job_controller import JobController
from kuota.cluster.kubelet import Kubelet, PodRun, RunSource, annotation_run
from kuota.cluster.nodes import NodeState, NodeTable
from kuota.cluster.placement import FirstFit, Placement, PlacementResult
from kuota.cluster.scheduler import PodScheduler

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = [
    "EmbeddedCluster",
    "FirstFit",
    "JobController",
    "Kubelet",
    "NodeState",
    "NodeTable",
    "Placement",
    "PlacementResult",
    "PodRun",
    "PodScheduler",
    "RunSource",
    "annotation_run",
    "install",
]


@dataclass(frozen=True, slots=True)
class EmbeddedCluster:
    """The controllers :func:`install` added."""

    scheduler: PodScheduler
    kubelet: Kubelet
    jobs: JobController


def install(
    mgr: Manager,
    placement: Placement | None = None,
    *,
    runs: RunSource | None = None,
) -> EmbeddedCluster:
    """Add the pod scheduler (with ``placement``, default first fit), the
    kubelet (pod runs from ``runs``, default the pod's annotations) and the
    Job controller to ``mgr``. Call before ``mgr.start()``."""
    cluster = EmbeddedCluster(PodScheduler(placement), Kubelet(runs), JobController())
    mgr.add(cluster.scheduler)
    mgr.add(cluster.kubelet)
    mgr.add(cluster.jobs)
    return cluster
