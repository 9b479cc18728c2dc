"""Kubeflow Trainer v2 (``trainer.kubeflow.org/v1alpha1``, kubeflow/trainer
``pkg/apis/trainer/v1alpha1``): TrainJob, TrainingRuntime and
ClusterTrainingRuntime, and the JobSet the trainer builds for a TrainJob
from its runtime (``pkg/runtime``: the runtime's JobSet template, the
trainer step's Jobs given ``numNodes`` pods, its ``node`` container the
TrainJob's image, command, args, env and ``resourcesPerNode``; then the
``runtimePatches`` applied to the replicated jobs' pod templates, and
``suspend``).

Typed: what the JobSet and Kueue read. Untyped (carried): the ML policy's
framework sources, pod group policies, initializers, status metrics.

Pure: no I/O.
"""

from __future__ import annotations

import copy
import operator
import re
from datetime import datetime
from typing import Annotated, Final

import msgspec

from kuota.api.base import Meta, Object, Rule, cel, dec_hook, enc_hook, list_map
from kuota.api.jobset import v1alpha2 as js
from kuota.api.k8s.corev1 import AnyList, AnyObject, ResourceRequirements, StrList, Toleration
from kuota.api.meta import Conditions, ObjectMeta

__all__ = [
    "API_VERSION",
    "GROUP",
    "ClusterTrainingRuntime",
    "TrainJob",
    "TrainingRuntime",
    "build_jobset",
    "default_trainjob",
    "runtime_key",
]

GROUP: Final = "trainer.kubeflow.org"
API_VERSION: Final = f"{GROUP}/v1alpha1"
CONTROLLER: Final = "trainer.kubeflow.org/trainjob-controller"
ANCESTOR_LABEL: Final = "trainer.kubeflow.org/trainjob-ancestor-step"
TRAINER_STEP: Final = "trainer"
NODE: Final = "node"  # the trainer's replicated job and container
KUEUE_PATCH_MANAGER: Final = "kueue.x-k8s.io/manager"  # Kueue's runtime patch
MULTIKUEUE: Final = "kueue.x-k8s.io/multikueue"
CLUSTER_RUNTIME: Final = "ClusterTrainingRuntime"
MAX_INT32: Final = 2**31 - 1

# The CRD's rules (manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml,
# kubeflow/trainer@8c0f5059): its +kubebuilder markers and CEL, with its messages.
_IMMUTABLE = cel(
    Rule("self == oldSelf", "field is immutable", lambda _: True, transition=operator.eq)
)
_MANAGED_BY = cel(
    Rule(
        "self in ['trainer.kubeflow.org/trainjob-controller', 'kueue.x-k8s.io/multikueue']",
        "ManagedBy must be trainer.kubeflow.org/trainjob-controller or "
        "kueue.x-k8s.io/multikueue if set",
        lambda v: v in (CONTROLLER, MULTIKUEUE),
    ),
    Rule("self == oldSelf", "field is immutable", lambda _: True, transition=operator.eq),
)
_PROCS = cel(
    Rule("self >= 1", "numProcPerNode must be greater than or equal to 1", lambda v: v >= 1)
)
_RFC1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
ROOT_RULES = cel(
    Rule(
        "self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",
        "metadata.name must match RFC 1035 DNS label format",
        lambda j: _RFC1035.fullmatch(j.metadata.name or "") is not None,
    ),
    Rule(
        "size(self.metadata.name) <= 63",
        "metadata.name must be no more than 63 characters",
        lambda j: len(j.metadata.name or "") <= 63,
    ),
)
Name253 = Annotated[str, Meta(max_length=253)]


class RuntimeRef(Object):
    name: Annotated[str, Meta(min_length=1, max_length=253)] = ""
    api_group: Name253 | None = None  # CRD default trainer.kubeflow.org
    kind: Name253 | None = None  # CRD default ClusterTrainingRuntime


class Trainer(Object):
    image: Annotated[str, Meta(max_length=500)] | None = None
    command: StrList | None = None
    args: StrList | None = None
    env: AnyList | None = None
    num_nodes: Annotated[int, Meta(ge=0, le=MAX_INT32)] | None = None
    resources_per_node: ResourceRequirements | None = None
    num_proc_per_node: Annotated[int, Meta(ge=-MAX_INT32 - 1, le=MAX_INT32), _PROCS] | None = None


class RuntimePatch(Object):
    manager: Annotated[str, Meta(min_length=1, max_length=253), _IMMUTABLE]
    time: datetime | None = None
    training_runtime_spec: AnyObject | None = None


class TrainJobSpec(Object):
    runtime_ref: Annotated[RuntimeRef, _IMMUTABLE] = msgspec.field(default_factory=RuntimeRef)
    initializer: Annotated[AnyObject, _IMMUTABLE] | None = None
    trainer: Trainer | None = None
    runtime_patches: (
        Annotated[list[RuntimePatch], Meta(max_length=16), list_map("manager")] | None
    ) = None
    suspend: bool | None = None  # CRD default false
    active_deadline_seconds: Annotated[int, Meta(ge=1), _IMMUTABLE] | None = None
    managed_by: Annotated[str, Meta(max_length=253), _MANAGED_BY] | None = None  # CRD default
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    pod_template_overrides: AnyList | None = None


class JobStatus(Object):
    name: str = ""
    ready: int | None = None
    succeeded: int | None = None
    failed: int | None = None
    active: int | None = None
    suspended: int | None = None


class TrainJobStatus(Object):
    conditions: Conditions | None = None
    jobs_status: list[JobStatus] | None = None
    trainer_status: AnyObject | None = None


class TrainJob(Object):
    api_version: str = API_VERSION
    kind: str = "TrainJob"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: TrainJobSpec = msgspec.field(default_factory=TrainJobSpec)
    status: TrainJobStatus | None = None


class JobSetTemplateSpec(Object):
    metadata: ObjectMeta | None = None
    spec: js.JobSetSpec = msgspec.field(default_factory=js.JobSetSpec)


class TrainingRuntimeSpec(Object):
    ml_policy: AnyObject | None = None
    pod_group_policy: AnyObject | None = None
    template: JobSetTemplateSpec = msgspec.field(default_factory=JobSetTemplateSpec)


class TrainingRuntime(Object):
    api_version: str = API_VERSION
    kind: str = "TrainingRuntime"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: TrainingRuntimeSpec = msgspec.field(default_factory=TrainingRuntimeSpec)


class ClusterTrainingRuntime(Object):
    api_version: str = API_VERSION
    kind: str = "ClusterTrainingRuntime"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: TrainingRuntimeSpec = msgspec.field(default_factory=TrainingRuntimeSpec)


def default_trainjob(job: TrainJob) -> TrainJob:
    """The CRD's defaults (in place; returns ``job``): runtimeRef's apiGroup
    and kind, suspend, managedBy."""
    spec = job.spec
    if spec.runtime_ref.api_group is None:
        spec.runtime_ref.api_group = GROUP
    if spec.runtime_ref.kind is None:
        spec.runtime_ref.kind = CLUSTER_RUNTIME
    if spec.suspend is None:
        spec.suspend = False
    if spec.managed_by is None:
        spec.managed_by = CONTROLLER
    return job


def runtime_key(job: TrainJob) -> tuple[str, str]:
    """(kind, namespace/name or name) of the job's runtime (a ClusterTrainingRuntime
    unless ``runtimeRef.kind`` says TrainingRuntime)."""
    ref = job.spec.runtime_ref
    if ref.kind == "TrainingRuntime":
        return "TrainingRuntime", f"{job.metadata.namespace}/{ref.name}"
    return "ClusterTrainingRuntime", ref.name


def _num_nodes(job: TrainJob, runtime: TrainingRuntimeSpec) -> int | None:
    if job.spec.trainer is not None and job.spec.trainer.num_nodes is not None:
        return job.spec.trainer.num_nodes
    n = (runtime.ml_policy or {}).get("numNodes")
    return n if isinstance(n, int) else None


def _is_trainer(rjob: js.ReplicatedJob) -> bool:
    return (rjob.template.metadata.labels or {}).get(
        ANCESTOR_LABEL
    ) == TRAINER_STEP or rjob.name == NODE


def build_jobset(job: TrainJob, runtime: TrainingRuntimeSpec) -> js.JobSet:
    """The JobSet the trainer makes for ``job`` (named and owned as the job)."""
    spec = msgspec.convert(
        msgspec.to_builtins(runtime.template.spec, enc_hook=enc_hook),
        js.JobSetSpec,
        dec_hook=dec_hook,
    )
    trainer = job.spec.trainer
    nodes = _num_nodes(job, runtime)
    for rjob in spec.replicated_jobs or ():
        if not _is_trainer(rjob):
            continue
        jspec = rjob.template.spec
        if nodes is not None:
            jspec.parallelism = nodes
            jspec.completions = nodes
        pod = jspec.template.spec
        if pod is None or trainer is None:
            continue
        for c in pod.containers:
            if c.name != NODE and len(pod.containers) > 1:
                continue
            if trainer.image:
                c.image = trainer.image
            if trainer.command:
                c.command = list(trainer.command)
            if trainer.args:
                c.args = list(trainer.args)
            if trainer.env:
                c.env = [*(c.env or []), *trainer.env]
            if trainer.resources_per_node is not None:
                c.resources = copy.deepcopy(trainer.resources_per_node)
    for patch in job.spec.runtime_patches or ():
        _apply_patch(spec, patch)
    spec.suspend = bool(job.spec.suspend)
    labels = {**(job.spec.labels or {})}
    return js.JobSet(
        metadata=ObjectMeta(
            name=job.metadata.name,
            namespace=job.metadata.namespace,
            labels=labels or None,
            annotations=dict(job.spec.annotations) if job.spec.annotations else None,
        ),
        spec=js.default_jobset(js.JobSet(spec=spec)).spec,
    )


def _apply_patch(spec: js.JobSetSpec, patch: RuntimePatch) -> None:
    """A runtime patch's replicated jobs: their pod templates' labels,
    annotations, node selector and tolerations (added), by replicated job name."""
    tmpl = (patch.training_runtime_spec or {}).get("template") or {}
    rjobs = ((tmpl.get("spec") or {}).get("replicatedJobs")) or []
    by_name = {r.name: r for r in spec.replicated_jobs or ()}
    for rp in rjobs:
        rjob = by_name.get(rp.get("name", ""))
        pod_patch = (((rp.get("template") or {}).get("spec") or {}).get("template")) or {}
        if rjob is None or not pod_patch:
            continue
        pod = rjob.template.spec.template
        meta = pod_patch.get("metadata") or {}
        if meta.get("labels"):
            pod.metadata.labels = {**(pod.metadata.labels or {}), **meta["labels"]}
        if meta.get("annotations"):
            pod.metadata.annotations = {**(pod.metadata.annotations or {}), **meta["annotations"]}
        pspec = pod_patch.get("spec") or {}
        if pod.spec is None:
            continue
        if pspec.get("nodeSelector"):
            pod.spec.node_selector = {**(pod.spec.node_selector or {}), **pspec["nodeSelector"]}
        if pspec.get("tolerations"):
            tols = msgspec.convert(pspec["tolerations"], list[Toleration], dec_hook=dec_hook)
            pod.spec.tolerations = [*(pod.spec.tolerations or []), *tols]
