"""The store's keys, named: the (group, version, resource) of every kind kuota
serves, so that callers write ``WORKLOAD``, never a literal tuple. Each is
the very tuple the kind was registered with (``kinds.resource_for``)."""

from __future__ import annotations

from typing import Final

from kuota.store.kinds import resource_for
from kuota.store.protocol import ResourceType

_KUEUE: Final = "kueue.x-k8s.io/v1beta2"

# Kueue
ADMISSION_CHECK: Final[ResourceType] = resource_for(_KUEUE, "AdmissionCheck")
CLUSTER_QUEUE: Final[ResourceType] = resource_for(_KUEUE, "ClusterQueue")
COHORT: Final[ResourceType] = resource_for(_KUEUE, "Cohort")
LOCAL_QUEUE: Final[ResourceType] = resource_for(_KUEUE, "LocalQueue")
RESOURCE_FLAVOR: Final[ResourceType] = resource_for(_KUEUE, "ResourceFlavor")
TOPOLOGY: Final[ResourceType] = resource_for(_KUEUE, "Topology")
WORKLOAD: Final[ResourceType] = resource_for(_KUEUE, "Workload")
WORKLOAD_PRIORITY_CLASS: Final[ResourceType] = resource_for(_KUEUE, "WorkloadPriorityClass")

# core/v1
CONFIG_MAP: Final[ResourceType] = resource_for("v1", "ConfigMap")
EVENT: Final[ResourceType] = resource_for("v1", "Event")
LIMIT_RANGE: Final[ResourceType] = resource_for("v1", "LimitRange")
NAMESPACE: Final[ResourceType] = resource_for("v1", "Namespace")
NODE: Final[ResourceType] = resource_for("v1", "Node")
POD: Final[ResourceType] = resource_for("v1", "Pod")
SECRET: Final[ResourceType] = resource_for("v1", "Secret")
SERVICE: Final[ResourceType] = resource_for("v1", "Service")

# Other Kubernetes groups
CONTROLLER_REVISION: Final[ResourceType] = resource_for("apps/v1", "ControllerRevision")
DAEMON_SET: Final[ResourceType] = resource_for("apps/v1", "DaemonSet")
HPA: Final[ResourceType] = resource_for("autoscaling/v2", "HorizontalPodAutoscaler")
DEPLOYMENT: Final[ResourceType] = resource_for("apps/v1", "Deployment")
REPLICA_SET: Final[ResourceType] = resource_for("apps/v1", "ReplicaSet")
STATEFUL_SET: Final[ResourceType] = resource_for("apps/v1", "StatefulSet")
CRON_JOB: Final[ResourceType] = resource_for("batch/v1", "CronJob")
JOB: Final[ResourceType] = resource_for("batch/v1", "Job")
PRIORITY_CLASS: Final[ResourceType] = resource_for("scheduling.k8s.io/v1", "PriorityClass")
RUNTIME_CLASS: Final[ResourceType] = resource_for("node.k8s.io/v1", "RuntimeClass")
RESOURCE_CLAIM_TEMPLATE: Final[ResourceType] = resource_for(
    "resource.k8s.io/v1", "ResourceClaimTemplate"
)
RESOURCE_SLICE: Final[ResourceType] = resource_for("resource.k8s.io/v1", "ResourceSlice")
DEVICE_CLASS: Final[ResourceType] = resource_for("resource.k8s.io/v1", "DeviceClass")

# Other projects' and kuota's own
LEADER_WORKER_SET: Final[ResourceType] = resource_for(
    "leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"
)
JOB_SET: Final[ResourceType] = resource_for("jobset.x-k8s.io/v1alpha2", "JobSet")
PYTORCH_JOB: Final[ResourceType] = resource_for("kubeflow.org/v1", "PyTorchJob")
TF_JOB: Final[ResourceType] = resource_for("kubeflow.org/v1", "TFJob")
PADDLE_JOB: Final[ResourceType] = resource_for("kubeflow.org/v1", "PaddleJob")
XGBOOST_JOB: Final[ResourceType] = resource_for("kubeflow.org/v1", "XGBoostJob")
JAX_JOB: Final[ResourceType] = resource_for("kubeflow.org/v1", "JAXJob")
MPI_JOB: Final[ResourceType] = resource_for("kubeflow.org/v2beta1", "MPIJob")
RAY_CLUSTER: Final[ResourceType] = resource_for("ray.io/v1", "RayCluster")
RAY_JOB: Final[ResourceType] = resource_for("ray.io/v1", "RayJob")
RAY_SERVICE: Final[ResourceType] = resource_for("ray.io/v1", "RayService")
TRAIN_JOB: Final[ResourceType] = resource_for("trainer.kubeflow.org/v1alpha1", "TrainJob")
TRAINING_RUNTIME: Final[ResourceType] = resource_for(
    "trainer.kubeflow.org/v1alpha1", "TrainingRuntime"
)
CLUSTER_TRAINING_RUNTIME: Final[ResourceType] = resource_for(
    "trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime"
)
APP_WRAPPER: Final[ResourceType] = resource_for("workload.codeflare.dev/v1beta2", "AppWrapper")
SPARK_APPLICATION: Final[ResourceType] = resource_for(
    "sparkoperator.k8s.io/v1beta2", "SparkApplication"
)
NODE_OPERATION: Final[ResourceType] = resource_for("kuota.dev/v1alpha1", "NodeOperation")
BIZRQ: Final[ResourceType] = resource_for("kuota.dev/v1alpha1", "BizGroupResourceQuota")
NODE_GROUP: Final[ResourceType] = resource_for("kuota.dev/v1alpha1", "NodeGroup")

# Kueue's provisioning admission check and cluster-autoscaler's request
PROVISIONING_REQUEST_CONFIG: Final[ResourceType] = resource_for(_KUEUE, "ProvisioningRequestConfig")
PROVISIONING_REQUEST: Final[ResourceType] = resource_for(
    "autoscaling.x-k8s.io/v1", "ProvisioningRequest"
)
POD_TEMPLATE: Final[ResourceType] = resource_for("v1", "PodTemplate")

# MultiKueue
MULTIKUEUE_CLUSTER: Final[ResourceType] = resource_for(_KUEUE, "MultiKueueCluster")
MULTIKUEUE_CONFIG: Final[ResourceType] = resource_for(_KUEUE, "MultiKueueConfig")
