"""The embedded cluster: what a Kubernetes cluster runs besides Kueue, as
controllers of a :class:`kuota.runtime.manager.Manager` and hooks of the
object store, one room per component:

- ``kubescheduler/``: kube-scheduler (placement, filters, scores, preemption);
- ``controllers/``: kube-controller-manager's built-in controllers and the
  kubelet (Job, CronJob, DaemonSet, ReplicaSet, Deployment, StatefulSet,
  TTL, node lifecycle, taint eviction, node operations, graceful termination);
- ``apiserver/``: the API server's admission plugins and registry strategies;
- ``lws/``: the LeaderWorkerSet operator;
- ``podutil``, ``nodeutil``: what they all read of pods and nodes.

``wiring``: :func:`install` adds the controllers, :func:`api_server_hooks`
and :func:`pod_strategy_hooks` give the store hooks. The names below are
imported from their modules on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from kuota.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from kuota.cluster.controllers.cronjob_controller import CronJobController
    from kuota.cluster.controllers.daemonset_controller import DaemonSetController
    from kuota.cluster.controllers.deployment_controller import DeploymentController
    from kuota.cluster.controllers.job_controller import JobController
    from kuota.cluster.controllers.kubelet import Kubelet, PodRun, RunSource, annotation_run
    from kuota.cluster.controllers.node_lifecycle import NodeLifecycle
    from kuota.cluster.controllers.nodeops import NodeOperationController
    from kuota.cluster.controllers.replicaset_controller import ReplicaSetController
    from kuota.cluster.controllers.statefulset_controller import StatefulSetController
    from kuota.cluster.controllers.taint_eviction import TaintEviction
    from kuota.cluster.kubescheduler.cluster_snapshot import ClusterSnapshot
    from kuota.cluster.kubescheduler.kube_scheduler import KubeScheduler
    from kuota.cluster.kubescheduler.node_table import NodeState, NodeTable
    from kuota.cluster.kubescheduler.placement import FirstFit, Placement, PlacementResult
    from kuota.cluster.kubescheduler.pod_scheduler import PodScheduler
    from kuota.cluster.kubescheduler.scoring import (
        HIGH_NODE_UTILIZATION,
        LOW_NODE_UTILIZATION,
        NO_SCORING,
        Profile,
        profile_named,
    )
    from kuota.cluster.lws.lws_controller import LeaderWorkerSetController
    from kuota.cluster.wiring import EmbeddedCluster, api_server_hooks, install, pod_strategy_hooks

__all__ = [
    "HIGH_NODE_UTILIZATION",
    "LOW_NODE_UTILIZATION",
    "NO_SCORING",
    "ClusterSnapshot",
    "CronJobController",
    "DaemonSetController",
    "DeploymentController",
    "EmbeddedCluster",
    "FirstFit",
    "JobController",
    "KubeScheduler",
    "Kubelet",
    "LeaderWorkerSetController",
    "NodeLifecycle",
    "NodeOperationController",
    "NodeState",
    "NodeTable",
    "Placement",
    "PlacementResult",
    "PodRun",
    "PodScheduler",
    "Profile",
    "ReplicaSetController",
    "RunSource",
    "StatefulSetController",
    "TaintEviction",
    "annotation_run",
    "api_server_hooks",
    "install",
    "pod_strategy_hooks",
    "profile_named",
]

# Each export's module, imported on first use: a reader of one part of the
# cluster (a pod's scheduling-gate constant) must not import all of it.
_EXPORTS: Final[dict[str, str]] = {
    "HIGH_NODE_UTILIZATION": "kuota.cluster.kubescheduler.scoring",
    "LOW_NODE_UTILIZATION": "kuota.cluster.kubescheduler.scoring",
    "NO_SCORING": "kuota.cluster.kubescheduler.scoring",
    "ClusterSnapshot": "kuota.cluster.kubescheduler.cluster_snapshot",
    "CronJobController": "kuota.cluster.controllers.cronjob_controller",
    "DaemonSetController": "kuota.cluster.controllers.daemonset_controller",
    "DeploymentController": "kuota.cluster.controllers.deployment_controller",
    "EmbeddedCluster": "kuota.cluster.wiring",
    "FirstFit": "kuota.cluster.kubescheduler.placement",
    "JobController": "kuota.cluster.controllers.job_controller",
    "KubeScheduler": "kuota.cluster.kubescheduler.kube_scheduler",
    "Kubelet": "kuota.cluster.controllers.kubelet",
    "LeaderWorkerSetController": "kuota.cluster.lws.lws_controller",
    "NodeLifecycle": "kuota.cluster.controllers.node_lifecycle",
    "NodeOperationController": "kuota.cluster.controllers.nodeops",
    "NodeState": "kuota.cluster.kubescheduler.node_table",
    "NodeTable": "kuota.cluster.kubescheduler.node_table",
    "Placement": "kuota.cluster.kubescheduler.placement",
    "PlacementResult": "kuota.cluster.kubescheduler.placement",
    "PodRun": "kuota.cluster.controllers.kubelet",
    "PodScheduler": "kuota.cluster.kubescheduler.pod_scheduler",
    "Profile": "kuota.cluster.kubescheduler.scoring",
    "ReplicaSetController": "kuota.cluster.controllers.replicaset_controller",
    "RunSource": "kuota.cluster.controllers.kubelet",
    "StatefulSetController": "kuota.cluster.controllers.statefulset_controller",
    "TaintEviction": "kuota.cluster.controllers.taint_eviction",
    "annotation_run": "kuota.cluster.controllers.kubelet",
    "api_server_hooks": "kuota.cluster.wiring",
    "install": "kuota.cluster.wiring",
    "pod_strategy_hooks": "kuota.cluster.wiring",
    "profile_named": "kuota.cluster.kubescheduler.scoring",
}


__getattr__ = lazy_getattr(__name__, _EXPORTS)
