"""A Kubeflow training job as Kueue's jobframework sees it
(``kubeflowjob_controller.go``): a podSet per replica type in the kind's
order (named by the type, lowercased; ``replicas`` pods), started by merging
the admission into each replica's pod template, suspended through
``runPolicy.suspend``, finished by its Succeeded or Failed condition, its pods
ready once the Running condition is True."""

from __future__ import annotations

from typing import Any, Final

from kuota.api import errors as e
from kuota.api.kubeflow import v1
from kuota.api.kueue import types as kt
from kuota.controllers.jobframework import Finished, PodSetInfo, suspended_copy
from kuota.controllers.multikueue_adapter import ManagedBy
from kuota.controllers.podset_templates import merge_into, restored_template
from kuota.controllers.tas_requests import topology_request, validate_pod_sets
from kuota.store import clone
from kuota.store.kinds import resource_for
from kuota.store.protocol import ResourceType

MPI_OPERATOR: Final = "kubeflow.org/mpi-operator"  # kfmpi.KubeflowJobController


def _topology_request(spec: v1.ReplicaSpec) -> kt.PodSetTopologyRequest:
    """Kueue's PodSets: NewPodSetTopologyRequest(template meta) with the
    replica index as pod index label, always built (the label alone makes it
    non-empty), as in Kueue's TestPodSets."""
    # (annotations that do not parse give None here; the webhook refused those)
    tr = topology_request(spec.template.metadata.annotations) or kt.PodSetTopologyRequest()
    tr.pod_index_label = v1.REPLICA_INDEX_LABEL
    return tr


class KubeflowAdapter:
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.api_version = v1.FRAMEWORKS[kind].api_version
        self.rtype: ResourceType = resource_for(self.api_version, kind)
        # runPolicy.managedBy: mpi-operator's for an MPIJob (and Kueue's
        # MPIJob adapter names the field in full), the training operator's else
        if kind == "MPIJob":
            own, wire = MPI_OPERATOR, "spec.runPolicy.managedBy"
        else:
            own, wire = v1.OPERATOR, "spec.managedBy"
        self.managed_by_field = ManagedBy(("spec", "run_policy", "managed_by"), own, wire)

    def pod_sets(self, job: Any, partial_admission: bool) -> list[kt.PodSet]:
        specs = v1.replica_specs(job)
        return [
            kt.PodSet(
                name=t.lower(),
                template=clone(specs[t].template),
                count=specs[t].replicas if specs[t].replicas is not None else 1,
                topology_request=_topology_request(specs[t]),
            )
            for t in v1.ordered_types(job)
        ]

    def priority_class(self, job: Any) -> str:
        """KubeflowJob.PriorityClass: runPolicy.schedulingPolicy.priorityClass,
        else the first replica type (Kueue's order) whose template names one."""
        sp = job.spec.run_policy.scheduling_policy
        if sp is not None and sp.priority_class:
            return str(sp.priority_class)
        specs = v1.replica_specs(job)
        for t in v1.ordered_types(job):
            pod = specs[t].template.spec
            if pod is not None and pod.priority_class_name:
                return str(pod.priority_class_name)
        return ""

    def is_suspended(self, job: Any) -> bool:
        return bool(job.spec.run_policy.suspend)

    def is_active(self, job: Any) -> bool:
        st = job.status
        return st is not None and any(r.active != 0 for r in (st.replica_statuses or {}).values())

    def finished(self, job: Any) -> Finished | None:
        for c in (job.status.conditions if job.status else None) or ():
            if c.type in ("Succeeded", "Failed") and c.status == "True":
                return Finished(c.type != "Failed", c.message)
        return None

    def pods_ready(self, job: Any, wl: kt.Workload) -> bool:
        return any(
            c.type == "Running" and c.status == "True"
            for c in (job.status.conditions if job.status else None) or ()
        )

    def reclaimable_pods(self, job: Any) -> list[kt.ReclaimablePod] | None:
        return None  # (Kueue's Kubeflow jobs report none)

    def suspend_on_create(self, job: Any) -> Any:
        return suspended_copy(job, lambda j: j.spec.run_policy)

    def run(self, job: Any, infos: list[PodSetInfo]) -> Any:
        job = clone(job)
        job.spec.run_policy.suspend = False
        by_name = {i.name: i for i in infos}
        specs = v1.replica_specs(job)
        for t in v1.ordered_types(job):
            info = by_name.get(t.lower())
            if info is not None:
                merge_into(specs[t].template, info)
        return job

    def validate(self, job: Any, old: Any | None, elastic: bool) -> list[e.FieldError]:
        return []  # Kueue's Kubeflow webhooks add only the TAS rules to jobframework's

    def topology_errors(
        self, job: Any, elastic: bool = False, multi_layer: bool = True
    ) -> list[e.FieldError]:
        """ValidateOnCreate's TAS rules: each replica type's pod template
        (MPIJob's webhook also the pod-set groups)."""
        specs = f"spec.{v1.framework_of(job).wire_field}"
        paths = [f"{specs}[{t}].template.metadata" for t in v1.ordered_types(job)]
        entries = list(zip(paths, self.pod_sets(job, False), strict=True))
        groups = None
        if self.kind == "MPIJob":
            groups = {ps.name: f"{p}.annotations" for p, ps in entries}
        return validate_pod_sets(entries, groups, multi_layer)

    def update_errors(self, new: Any, old: Any) -> list[e.FieldError]:
        return []

    def stop(self, job: Any) -> Any | None:
        if self.is_suspended(job):
            return None
        job = clone(job)
        job.spec.run_policy.suspend = True
        return job

    def restore(self, job: Any, original: list[kt.PodSet]) -> Any | None:
        by_name = {p.name: p for p in original}
        new = clone(job)
        specs = v1.replica_specs(new)
        changed = False
        for t in v1.ordered_types(new):
            ps = by_name.get(t.lower())
            if ps is None:
                continue
            restored = restored_template(specs[t].template, ps.template)
            if restored != specs[t].template:
                specs[t].template = restored
                changed = True
        return new if changed else None
