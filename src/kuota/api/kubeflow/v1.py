"""Kubeflow's training jobs (``kubeflow.org/v1``: PyTorchJob, TFJob,
PaddleJob, XGBoostJob, JAXJob): types, the training operator's defaulting
and its validating webhooks.

Types follow ``pkg/apis/kubeflow.org/v1`` of kubeflow/training-operator
(v1.8/1.9: a map of replica type to replica spec, the common RunPolicy with
``suspend`` and ``managedBy``, the common JobStatus); the rules follow its
``pkg/webhooks/<framework>``. The five kinds differ only in what a
:class:`Framework` row holds: the replica specs' field, the replica types
and their order (Kueue's, for its podSets), the container the operator
requires, the default restart and clean-pod policies, and which replica
type leads. Not modelled: the default container ports and the environment
variables the operator injects (kuota has no network).

Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Final, Literal

import msgspec

from kuota.api.base import LIST_ATOMIC, Meta, Object
from kuota.api.errors import FieldError, forbidden, invalid, key, not_supported, required
from kuota.api.k8s.corev1 import AnyObject, PodTemplateSpec
from kuota.api.meta import ConditionStatus, ObjectMeta
from kuota.api.names import is_dns1035_label

__all__ = [
    "FRAMEWORKS",
    "GROUP",
    "Framework",
    "KubeflowJob",
    "default_job",
    "framework_of",
    "replica_specs",
    "validate_job",
    "validate_job_update",
]

GROUP: Final = "kubeflow.org"
API_VERSION: Final = f"{GROUP}/v1"
OPERATOR: Final = "kubeflow.org/training-operator"  # KubeflowJobsController
MULTIKUEUE: Final = "kueue.x-k8s.io/multikueue"
MANAGERS: Final = (MULTIKUEUE, OPERATOR)

# Labels the training operator puts on the pods it makes.
_P = "training.kubeflow.org/"
REPLICA_INDEX_LABEL: Final = _P + "replica-index"
REPLICA_TYPE_LABEL: Final = _P + "replica-type"
OPERATOR_NAME_LABEL: Final = _P + "operator-name"
JOB_NAME_LABEL: Final = _P + "job-name"
JOB_ROLE_LABEL: Final = _P + "job-role"

RestartPolicy = Literal["Always", "OnFailure", "Never", "ExitCode", ""]
CleanPodPolicy = Literal["All", "Running", "None"]


@dataclass(frozen=True, slots=True)
class Framework:
    kind: str
    plural: str
    field: str  # the replica specs' struct field (snake case)
    types: tuple[str, ...]  # Kueue's order (OrderedReplicaTypes): its podSets' order
    container: str  # the container every replica needs (the default container)
    restart: RestartPolicy  # the default restart policy of a replica
    clean: CleanPodPolicy  # the default clean-pod policy
    leaders: tuple[str, ...]  # replica types whose success is the job's
    single_leader: bool  # a leader type has exactly one replica (webhook rule)
    check_types: bool  # the webhook refuses replica types not in ``types``
    api_version: str = "kubeflow.org/v1"
    # Per replica type, where a kind's defaults differ by type (MPIJob's
    # launcher restarts OnFailure, its workers default to 0 replicas).
    type_restart: tuple[tuple[str, RestartPolicy], ...] = ()
    type_replicas: tuple[tuple[str, int], ...] = ()
    operator: str = ""  # the operator-name label (default: <kind>-controller)

    @property
    def wire_field(self) -> str:
        head, *rest = self.field.split("_")
        return head + "".join(p.title() for p in rest)


FRAMEWORKS: Final[dict[str, Framework]] = {
    f.kind: f
    for f in (
        Framework(
            "PyTorchJob",
            "pytorchjobs",
            "pytorch_replica_specs",
            ("Master", "Worker"),
            "pytorch",
            "OnFailure",
            "None",
            ("Master",),
            True,
            True,
        ),
        Framework(
            "TFJob",
            "tfjobs",
            "tf_replica_specs",
            ("Chief", "Master", "PS", "Worker", "Evaluator"),
            "tensorflow",
            "Never",
            "Running",
            ("Chief", "Master"),
            False,
            False,
        ),
        Framework(
            "PaddleJob",
            "paddlejobs",
            "paddle_replica_specs",
            ("Master", "Worker"),
            "paddle",
            "OnFailure",
            "None",
            ("Master",),
            False,
            True,
        ),
        Framework(
            "XGBoostJob",
            "xgboostjobs",
            "xgb_replica_specs",
            ("Master", "Worker"),
            "xgboost",
            "Never",
            "None",
            ("Master",),
            True,
            True,
        ),
        Framework(
            "MPIJob",
            "mpijobs",
            "mpi_replica_specs",
            ("Launcher", "Worker"),
            "",
            "Never",
            "None",
            ("Launcher",),
            True,
            True,
            api_version="kubeflow.org/v2beta1",
            type_restart=(("Launcher", "OnFailure"), ("Worker", "Never")),
            type_replicas=(("Launcher", 1), ("Worker", 0)),
            operator="mpi-operator",
        ),
        Framework(
            "JAXJob",
            "jaxjobs",
            "jax_replica_specs",
            ("Worker",),
            "jax",
            "Never",
            "None",
            (),
            False,
            True,
        ),
    )
}


class ReplicaSpec(Object):
    replicas: Annotated[int, Meta(ge=0, le=2**31 - 1)] | None = None  # defaulted to 1
    template: PodTemplateSpec = msgspec.field(default_factory=PodTemplateSpec)
    restart_policy: RestartPolicy = ""  # defaulted per framework


class SchedulingPolicy(Object):
    min_available: int | None = None
    queue: str = ""
    min_resources: AnyObject | None = None
    priority_class: str = ""
    schedule_timeout_seconds: int | None = None


class RunPolicy(Object):
    clean_pod_policy: CleanPodPolicy | None = None
    ttl_seconds_after_finished: Annotated[int, Meta(ge=0)] | None = None
    active_deadline_seconds: Annotated[int, Meta(ge=1)] | None = None
    backoff_limit: Annotated[int, Meta(ge=0)] | None = None
    scheduling_policy: SchedulingPolicy | None = None
    suspend: bool = False  # CRD default
    managed_by: str | None = None


class JobCondition(Object):
    type: str  # Created, Running, Restarting, Succeeded, Failed, Suspended
    status: ConditionStatus
    reason: str = ""
    message: str = ""
    last_update_time: datetime | None = None
    last_transition_time: datetime | None = None


class ReplicaStatus(Object):
    active: int = 0
    succeeded: int = 0
    failed: int = 0
    label_selector: AnyObject | None = None
    selector: str = ""


class JobStatus(Object):
    conditions: Annotated[list[JobCondition], LIST_ATOMIC] | None = None
    replica_statuses: dict[str, ReplicaStatus] | None = None
    start_time: datetime | None = None
    completion_time: datetime | None = None
    last_reconcile_time: datetime | None = None


ReplicaSpecs = dict[str, ReplicaSpec]


class PyTorchJobSpec(Object):
    run_policy: RunPolicy = msgspec.field(default_factory=RunPolicy)
    pytorch_replica_specs: ReplicaSpecs | None = None
    elastic_policy: AnyObject | None = None
    nproc_per_node: str | None = None


class TFJobSpec(Object):
    run_policy: RunPolicy = msgspec.field(default_factory=RunPolicy)
    tf_replica_specs: ReplicaSpecs | None = None
    success_policy: str | None = None  # "" (worker 0) or "AllWorkers"
    enable_dynamic_worker: bool = False


class PaddleJobSpec(Object):
    run_policy: RunPolicy = msgspec.field(default_factory=RunPolicy)
    paddle_replica_specs: ReplicaSpecs | None = None
    elastic_policy: AnyObject | None = None


class XGBoostJobSpec(Object):
    run_policy: RunPolicy = msgspec.field(default_factory=RunPolicy)
    xgb_replica_specs: ReplicaSpecs | None = None


class JAXJobSpec(Object):
    run_policy: RunPolicy = msgspec.field(default_factory=RunPolicy)
    jax_replica_specs: ReplicaSpecs | None = None


class MPIRunPolicy(RunPolicy):
    suspend: bool | None = None  # type: ignore[assignment]  # (no CRD default in v2beta1)


class MPIJobSpec(Object):
    slots_per_worker: int | None = None
    run_launcher_as_worker: bool | None = None
    run_policy: MPIRunPolicy = msgspec.field(default_factory=MPIRunPolicy)
    mpi_replica_specs: ReplicaSpecs | None = None
    ssh_auth_mount_path: str = ""
    launcher_creation_policy: Literal["AtStartup", "WaitForWorkersReady", ""] = ""
    mpi_implementation: str = ""


class MPIJob(Object):
    api_version: str = "kubeflow.org/v2beta1"
    kind: str = "MPIJob"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: MPIJobSpec = msgspec.field(default_factory=MPIJobSpec)
    status: JobStatus | None = None


class PyTorchJob(Object):
    api_version: str = API_VERSION
    kind: str = "PyTorchJob"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PyTorchJobSpec = msgspec.field(default_factory=PyTorchJobSpec)
    status: JobStatus | None = None


class TFJob(Object):
    api_version: str = API_VERSION
    kind: str = "TFJob"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: TFJobSpec = msgspec.field(default_factory=TFJobSpec)
    status: JobStatus | None = None


class PaddleJob(Object):
    api_version: str = API_VERSION
    kind: str = "PaddleJob"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PaddleJobSpec = msgspec.field(default_factory=PaddleJobSpec)
    status: JobStatus | None = None


class XGBoostJob(Object):
    api_version: str = API_VERSION
    kind: str = "XGBoostJob"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: XGBoostJobSpec = msgspec.field(default_factory=XGBoostJobSpec)
    status: JobStatus | None = None


class JAXJob(Object):
    api_version: str = API_VERSION
    kind: str = "JAXJob"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: JAXJobSpec = msgspec.field(default_factory=JAXJobSpec)
    status: JobStatus | None = None


KubeflowJob = PyTorchJob | TFJob | PaddleJob | XGBoostJob | JAXJob | MPIJob
TYPES: Final[dict[str, type]] = {
    "PyTorchJob": PyTorchJob,
    "TFJob": TFJob,
    "PaddleJob": PaddleJob,
    "XGBoostJob": XGBoostJob,
    "JAXJob": JAXJob,
    "MPIJob": MPIJob,
}


def framework_of(job: Any) -> Framework:
    return FRAMEWORKS[job.kind]


def replica_specs(job: Any) -> ReplicaSpecs:
    """The job's replica specs (its kind's field), {} when none."""
    specs: ReplicaSpecs | None = getattr(job.spec, framework_of(job).field)
    return specs or {}


def ordered_types(job: Any) -> list[str]:
    """Kueue's ``OrderedReplicaTypes``: the kind's order, those present."""
    specs = replica_specs(job)
    return [t for t in framework_of(job).types if t in specs]


# ------------------------------------------------------------------- defaulting
def default_job(job: Any) -> Any:
    """``SetDefaults_<Kind>`` (in place; returns ``job``): the clean-pod
    policy, replica type names in their canonical case, one replica and the
    framework's restart policy per replica type; for PyTorchJob the elastic
    policy's min/max and ``nprocPerNode`` "auto"."""
    fw = framework_of(job)
    rp = job.spec.run_policy
    if rp.clean_pod_policy is None:
        rp.clean_pod_policy = fw.clean
    specs = getattr(job.spec, fw.field)
    if specs:
        canonical = {t.lower(): t for t in fw.types}
        renamed = {canonical.get(t.lower(), t): s for t, s in specs.items()}
        setattr(job.spec, fw.field, renamed)
        replicas, restart = dict(fw.type_replicas), dict(fw.type_restart)
        for t, spec in renamed.items():
            if spec.replicas is None:
                spec.replicas = replicas.get(t, 1)
            if not spec.restart_policy:
                spec.restart_policy = restart.get(t, fw.restart)
    if fw.kind == "PyTorchJob":
        _default_pytorch(job)
    elif fw.kind == "MPIJob":
        _default_mpi(job)
    return job


def _default_mpi(job: MPIJob) -> None:
    """``SetDefaults_MPIJob`` (mpi-operator v2beta1)."""
    spec = job.spec
    if spec.slots_per_worker is None:
        spec.slots_per_worker = 1
    if not spec.ssh_auth_mount_path:
        spec.ssh_auth_mount_path = "/root/.ssh"
    if not spec.mpi_implementation:
        spec.mpi_implementation = "OpenMPI"
    if not spec.launcher_creation_policy:
        spec.launcher_creation_policy = "AtStartup"


def _default_pytorch(job: PyTorchJob) -> None:
    ep = job.spec.elastic_policy
    if ep is not None:
        lo, hi = ep.get("minReplicas"), ep.get("maxReplicas")
        if lo is None or hi is None:
            worker = (job.spec.pytorch_replica_specs or {}).get("Worker")
            value = hi if hi is not None else lo
            if value is None and worker is not None:
                value = worker.replicas
            ep.setdefault("minReplicas", value)
            ep.setdefault("maxReplicas", value)
    if (ep is None or ep.get("nProcPerNode") is None) and job.spec.nproc_per_node is None:
        job.spec.nproc_per_node = "auto"


# ------------------------------------------------------------------- validation
def validate_job(job: Any) -> list[FieldError]:
    """The framework's validating webhook on create, on a defaulted job."""
    fw = framework_of(job)
    if fw.kind == "MPIJob":
        return validate_mpijob(job)
    errs: list[FieldError] = []
    name = job.metadata.name
    bad = is_dns1035_label(name) if name else []
    if bad:
        errs.append(invalid("metadata.name", name, f"should match: {','.join(bad)}"))
    errs += _managed_by(job.spec.run_policy.managed_by)
    if fw.kind == "PyTorchJob":
        ep = job.spec.elastic_policy
        if ep is not None and ep.get("nProcPerNode") is not None and job.spec.nproc_per_node:
            errs.append(
                forbidden(
                    "spec.elasticPolicy.nProcPerNode", "must not be used with spec.nprocPerNode"
                )
            )
    base = f"spec.{fw.wire_field}"
    specs = getattr(job.spec, fw.field)
    if specs is None:
        return [*errs, required(base, "must be required")]
    leaders = 0
    for rtype, spec in specs.items():
        role = key(base, rtype)
        containers_path = f"{role}.template.spec.containers"
        if fw.check_types and rtype not in fw.types:
            errs.append(not_supported(role, rtype, list(fw.types)))
        containers = spec.template.spec.containers if spec.template.spec is not None else []
        if not containers:
            errs.append(required(containers_path, "must be specified"))
        for i, c in enumerate(containers or ()):
            if not c.image:
                errs.append(required(f"{containers_path}[{i}].image", "must be required"))
        if not any(c.name == fw.container for c in containers or ()):
            errs.append(
                required(
                    containers_path, f"must have at least one container with name {fw.container}"
                )
            )
        if rtype in fw.leaders:
            leaders += 1
            if fw.single_leader and spec.replicas != 1:
                errs.append(forbidden(f"{role}.replicas", "must be 1"))
    if fw.kind == "TFJob" and leaders > 1:
        errs.append(forbidden(base, "must not have more than 1 Chief or Master role"))
    return errs


def _managed_by(value: str | None) -> list[FieldError]:
    if value is None or value in MANAGERS:
        return []
    return [not_supported("spec.runPolicy.managedBy", value, list(MANAGERS))]


def validate_job_update(new: Any, old: Any) -> list[FieldError]:
    """``ValidateUpdate``: the create rules, and ``managedBy`` immutable."""
    errs = validate_job(new)
    if new.spec.run_policy.managed_by != old.spec.run_policy.managed_by:
        errs.append(
            invalid(
                "spec.runPolicy.managedBy", new.spec.run_policy.managed_by, "field is immutable"
            )
        )
    return errs


_MPI_IMPLEMENTATIONS: Final = ("Intel", "MPICH", "OpenMPI")
_MPI_CLEAN: Final = ("All", "None", "Running")
_MPI_RESTART: Final = ("Never", "OnFailure")
_MPI_MANAGERS: Final = ("kubeflow.org/mpi-operator", MULTIKUEUE)


def validate_mpijob(job: MPIJob) -> list[FieldError]:
    """mpi-operator's ``ValidateMPIJob`` (v2beta1), on a defaulted job."""
    spec = job.spec
    errs: list[FieldError] = []
    specs = spec.mpi_replica_specs
    worker = (specs or {}).get("Worker")
    last = max((worker.replicas or 0) if worker is not None else 0, 1) - 1
    host = f"{job.metadata.name}-worker-{last}"
    bad = is_dns1035_label(host) if job.metadata.name else []
    if bad:
        errs.append(
            invalid(
                "metadata.name",
                job.metadata.name,
                f"will not able to create pod and service with invalid DNS label {host!r}: "
                + ", ".join(bad),
            )
        )
    base = "spec.mpiReplicaSpecs"
    if specs is None:
        errs.append(required(base, "must have replica specs"))
    else:
        launcher = specs.get("Launcher")
        if launcher is None:
            errs.append(required(key(base, "Launcher"), "must have Launcher replica spec"))
        else:
            errs += _mpi_replica(launcher, key(base, "Launcher"))
            if launcher.replicas is not None and launcher.replicas != 1:
                errs.append(
                    invalid(f"{key(base, 'Launcher')}.replicas", launcher.replicas, "must be 1")
                )
        if worker is not None:
            errs += _mpi_replica(worker, key(base, "Worker"))
            if worker.replicas is not None and worker.replicas <= 0:
                errs.append(
                    invalid(
                        f"{key(base, 'Worker')}.replicas",
                        worker.replicas,
                        "must be greater than or equal to 1",
                    )
                )
    if spec.slots_per_worker is None:
        errs.append(required("spec.slotsPerWorker", "must have number of slots per worker"))
    elif spec.slots_per_worker < 0:
        errs.append(
            invalid(
                "spec.slotsPerWorker", spec.slots_per_worker, "must be greater than or equal to 0"
            )
        )
    rp = spec.run_policy
    if rp.clean_pod_policy is None:
        errs.append(required("spec.runPolicy.cleanPodPolicy", "must have clean Pod policy"))
    elif rp.clean_pod_policy not in _MPI_CLEAN:
        errs.append(
            not_supported("spec.runPolicy.cleanPodPolicy", rp.clean_pod_policy, list(_MPI_CLEAN))
        )
    if rp.managed_by is not None and rp.managed_by not in _MPI_MANAGERS:
        errs.append(not_supported("spec.runPolicy.managedBy", rp.managed_by, sorted(_MPI_MANAGERS)))
    if not spec.ssh_auth_mount_path:
        errs.append(required("spec.sshAuthMountPath", "must have a mount path for SSH credentials"))
    if spec.mpi_implementation not in _MPI_IMPLEMENTATIONS:
        errs.append(
            not_supported(
                "spec.mpiImplementation", spec.mpi_implementation, list(_MPI_IMPLEMENTATIONS)
            )
        )
    return errs


def _mpi_replica(spec: ReplicaSpec, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if spec.replicas is None:
        errs.append(required(f"{path}.replicas", "must define number of replicas"))
    if spec.restart_policy not in _MPI_RESTART:
        errs.append(not_supported(f"{path}.restartPolicy", spec.restart_policy, list(_MPI_RESTART)))
    if spec.template.spec is None or not spec.template.spec.containers:
        errs.append(
            required(f"{path}.template.spec.containers", "must define at least one container")
        )
    return errs
