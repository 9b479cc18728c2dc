"""The embedded cluster wired into a manager and a store: the controllers
:func:`install` adds and the store hooks :func:`api_server_hooks` and
:func:`pod_strategy_hooks` give."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from kuota.cluster.apiserver.apps_validation import AppsValidation
from kuota.cluster.apiserver.crd_registration import CRDRegistration
from kuota.cluster.apiserver.crd_rules import CRDTransitionRules
from kuota.cluster.apiserver.limitrange import LIMIT_RANGE, PodResourceAdmission
from kuota.cluster.apiserver.node_registration import NodeRegistration
from kuota.cluster.apiserver.pod_admission import PodAdmission, ProjectNodeSelector
from kuota.cluster.apiserver.pod_strategy import SchedulingGatedCondition
from kuota.cluster.apiserver.resourcequota import ResourceQuotaAdmission, ResourceQuotaController
from kuota.cluster.appwrapper.appwrapper_controller import AppWrapperController
from kuota.cluster.appwrapper.appwrapper_webhooks import AppWrapperValidation
from kuota.cluster.autoscaler import ClusterAutoscaler
from kuota.cluster.controllers.cronjob_controller import CronJobController
from kuota.cluster.controllers.daemonset_controller import DaemonSetController
from kuota.cluster.controllers.deployment_controller import DeploymentController
from kuota.cluster.controllers.disruption import DisruptionController
from kuota.cluster.controllers.eviction import GracefulTermination
from kuota.cluster.controllers.job_controller import JobController
from kuota.cluster.controllers.kubelet import Kubelet, RunSource
from kuota.cluster.controllers.node_lifecycle import NodeLifecycle
from kuota.cluster.controllers.nodeops import NodeOperationController
from kuota.cluster.controllers.replicaset_controller import ReplicaSetController
from kuota.cluster.controllers.statefulset_controller import StatefulSetController
from kuota.cluster.controllers.taint_eviction import TaintEviction
from kuota.cluster.controllers.ttl_after_finished import TTLAfterFinished
from kuota.cluster.jobset.jobset_controller import JobSetController
from kuota.cluster.jobset.jobset_webhooks import JobSetDefaulting, JobSetValidation
from kuota.cluster.kubeflow.training_operator import TrainingOperator
from kuota.cluster.kubeflow.training_webhooks import TrainingJobDefaulting, TrainingJobValidation
from kuota.cluster.kuberay.raycluster_controller import RayClusterController
from kuota.cluster.kuberay.rayjob_controller import RayJobController
from kuota.cluster.kuberay.rayservice_controller import RayServiceController
from kuota.cluster.kubescheduler.placement import Placement
from kuota.cluster.kubescheduler.pod_scheduler import PodScheduler
from kuota.cluster.lws.lws_controller import LeaderWorkerSetController
from kuota.cluster.lws.lws_webhooks import (
    LeaderWorkerSetDefaulting,
    LeaderWorkerSetPodWebhook,
    LeaderWorkerSetValidation,
)
from kuota.cluster.nodeutil import DEFAULT_MAX_PODS, OPENSHIFT_MAX_PODS
from kuota.cluster.spark.spark_operator import SparkOperator
from kuota.cluster.trainer.trainjob_controller import TrainJobController
from kuota.webhooks.policy import ValidatingAdmissionPolicies

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager
    from kuota.store.protocol import ObjectStore


@dataclass(frozen=True, slots=True)
class EmbeddedCluster:
    """The controllers :func:`install` added."""

    scheduler: PodScheduler
    kubelet: Kubelet
    jobs: JobController
    node_lifecycle: NodeLifecycle = field(default_factory=NodeLifecycle)
    cronjobs: CronJobController = field(default_factory=CronJobController)
    daemonsets: DaemonSetController = field(default_factory=DaemonSetController)
    replicasets: ReplicaSetController = field(default_factory=ReplicaSetController)
    deployments: DeploymentController = field(default_factory=DeploymentController)
    statefulsets: StatefulSetController = field(default_factory=StatefulSetController)
    ttl: TTLAfterFinished = field(default_factory=TTLAfterFinished)
    node_operations: NodeOperationController = field(default_factory=NodeOperationController)
    graceful: GracefulTermination = field(default_factory=GracefulTermination)
    taint_eviction: TaintEviction = field(default_factory=TaintEviction)
    leader_worker_sets: LeaderWorkerSetController = field(default_factory=LeaderWorkerSetController)
    job_sets: JobSetController = field(default_factory=JobSetController)
    training: TrainingOperator = field(default_factory=TrainingOperator)
    ray_clusters: RayClusterController = field(default_factory=RayClusterController)
    ray_jobs: RayJobController = field(default_factory=RayJobController)
    ray_services: RayServiceController = field(default_factory=RayServiceController)
    app_wrappers: AppWrapperController = field(default_factory=AppWrapperController)
    spark_operator: SparkOperator = field(default_factory=SparkOperator)
    train_jobs: TrainJobController = field(default_factory=TrainJobController)
    autoscaler: ClusterAutoscaler = field(default_factory=ClusterAutoscaler)


def install(
    mgr: Manager,
    placement: Placement | None = None,
    *,
    runs: RunSource | None = None,
) -> EmbeddedCluster:
    """Add the pod scheduler (with ``placement``, default :class:`KubeScheduler`
    with the LowNodeUtilization profile), the
    kubelet (pod runs from ``runs``, default the pod's annotations), the
    Job controller, and the node lifecycle and taint eviction controllers to
    ``mgr``. Call before ``mgr.start()``."""
    cluster = EmbeddedCluster(PodScheduler(placement), Kubelet(runs), JobController())
    mgr.add(cluster.scheduler)
    mgr.add(cluster.kubelet)
    mgr.add(cluster.jobs)
    # Node conditions become taints; NoExecute taints evict (after tolerationSeconds).
    mgr.add(cluster.node_lifecycle)
    mgr.add(cluster.taint_eviction)
    # Jobs' friends (CronJobs, DaemonSets, TTL after finished), oc adm node
    # operations of the world, and evicted pods' graceful termination.
    for extra in (
        cluster.cronjobs,
        cluster.daemonsets,
        # Serving workloads: Deployments through ReplicaSets, StatefulSets.
        cluster.replicasets,
        cluster.deployments,
        cluster.statefulsets,
        cluster.ttl,
        cluster.node_operations,
        cluster.graceful,
        # The LeaderWorkerSet operator: its set and pod controllers.
        cluster.leader_worker_sets,
        cluster.leader_worker_sets.pods,
        # The JobSet operator: a JobSet's child Jobs.
        cluster.job_sets,
        # Kubeflow's training operator: PyTorchJob, TFJob, ... pods.
        cluster.training,
        # KubeRay's operator: RayClusters' pods, RayJobs' and RayServices' clusters.
        cluster.ray_clusters,
        cluster.ray_jobs,
        cluster.ray_services,
        # CodeFlare's AppWrapper controller: the wrapped objects.
        cluster.app_wrappers,
        # Spark Operator: a SparkApplication's driver and executors.
        cluster.spark_operator,
        # Kubeflow Trainer v2: a TrainJob's JobSet.
        cluster.train_jobs,
        # cluster-autoscaler: ProvisioningRequests and kuota.dev NodeGroups.
        cluster.autoscaler,
        # kube-controller-manager's resource quota controller (status.used)
        # and disruption controller (PodDisruptionBudgets' status).
        ResourceQuotaController(),
        DisruptionController(),
    ):
        mgr.add(extra)
    return cluster


def api_server_hooks(
    store: Callable[[], ObjectStore],
    *,
    openshift: bool = False,
    default_node_selector: Mapping[str, str] | None = None,
    now: Callable[[], datetime] | None = None,
) -> list[Any]:
    """The API server's part of the embedded cluster, as store admission
    hooks: node registration (kubelet-reported capacity and allocatable;
    ``maxPods`` 250 on OpenShift, else 110) and pod defaults, LimitRanger and
    QoS class. ``store()`` gives the store they read LimitRanges from (it is
    built after its hooks). On OpenShift (or with a cluster default node
    selector) pods also get their project's node selector."""
    max_pods = OPENSHIFT_MAX_PODS if openshift else DEFAULT_MAX_PODS
    priority = PodAdmission.over(store)
    hooks: list[Any] = [
        NodeRegistration(max_pods),
        CRDRegistration(),
        CRDTransitionRules(),
        # ValidatingAdmissionPolicies (validating: after every mutating hook).
        ValidatingAdmissionPolicies(store),
    ]
    if openshift or default_node_selector:
        # Before the scheduler sees the pod, as OpenShift's admission runs.
        hooks.append(ProjectNodeSelector(priority.lookup, default_node_selector or {}))
    return [
        *hooks,
        # apps/v1 validation on create and update (immutable fields).
        AppsValidation(),
        # The LWS operator's webhooks: LWS defaults and rules, its pods' labels and env.
        LeaderWorkerSetDefaulting(),
        LeaderWorkerSetValidation(),
        LeaderWorkerSetPodWebhook(),
        # The JobSet operator's webhooks.
        JobSetDefaulting(),
        JobSetValidation(),
        # The training operator's defaulting and webhooks.
        TrainingJobDefaulting(),
        TrainingJobValidation(),
        # The AppWrapper operator's validating webhook.
        AppWrapperValidation(),
        PodResourceAdmission(lambda ns: store().list(LIMIT_RANGE, ns).items),
        # Priority from PriorityClasses, the default not-ready/unreachable tolerations.
        priority,
        # ResourceQuota (validating: after LimitRanger's defaults).
        ResourceQuotaAdmission(store, now or (lambda: datetime.now(UTC))),
    ]


def pod_strategy_hooks(now: Callable[[], datetime]) -> list[Any]:
    """The pod registry's create strategy (``PrepareForCreate``), as store
    hooks: a gated pod gets ``PodScheduled=False``/``SchedulingGated``. The
    API server applies it after every mutating webhook, so register these
    after the webhooks that may add gates (Kueue's pod webhook)."""
    return [SchedulingGatedCondition(now)]
