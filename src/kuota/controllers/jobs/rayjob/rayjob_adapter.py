"""A RayJob as Kueue's jobframework sees it (``pkg/controller/jobs/rayjob/
rayjob_controller.go``): the podSets of its cluster spec (head, then each
worker group) and, in ``K8sJobMode``, the submitter's (its
``submitterPodTemplate`` or KubeRay's default submitter: the head's image,
500m CPU and 200Mi); in ``SidecarMode`` the submitter runs in the head,
whose podSet counts its container. Started by merging the admission into
every template and unsuspending, stopped by suspending (KubeRay then deletes
the RayCluster), finished when ``jobDeploymentStatus`` is Complete or
Failed (succeeded with ``jobStatus`` SUCCEEDED), its pods ready when its
cluster is ready."""

from __future__ import annotations

from typing import Final

from kuota.api import errors as e
from kuota.api.k8s import Container
from kuota.api.kueue import types as kt
from kuota.api.ray import ray_types as r
from kuota.api.ray.ray_submitter import submitter_resources, submitter_template
from kuota.controllers.jobframework import Finished, PodSetInfo, suspended_copy
from kuota.controllers.jobs.raycluster import rayspec_podsets as rs
from kuota.controllers.jobs.raycluster.owned_cluster import OwnedCluster
from kuota.controllers.multikueue_adapter import ManagedBy
from kuota.controllers.podset_templates import merge_into, restored_template
from kuota.store import clone
from kuota.store.protocol import ResourceType
from kuota.store.resources import RAY_JOB

__all__ = ["RayJobAdapter"]

SUBMITTER: Final = "submitter"  # submitterJobPodSetName


def _mode(job: r.RayJob) -> str:
    return job.spec.submission_mode or "K8sJobMode"


class RayJobAdapter(OwnedCluster):
    rtype: ResourceType = RAY_JOB
    kind = "RayJob"
    api_version = r.API_VERSION
    managed_by_field = ManagedBy(("spec", "managed_by"), r.OPERATOR)

    def pod_sets(self, job: r.RayJob, partial_admission: bool) -> list[kt.PodSet]:
        spec = job.spec.ray_cluster_spec or r.RayClusterSpec()
        out = rs.build_pod_sets(spec, job.metadata.annotations or {})
        mode = _mode(job)
        if mode == "K8sJobMode":
            out.append(kt.PodSet(name=SUBMITTER, template=clone(submitter_template(job)), count=1))
        elif mode == "SidecarMode":
            head = out[0].template.spec
            if head is not None:
                head.containers = [
                    *head.containers,
                    Container(name=r.SUBMITTER_CONTAINER, resources=submitter_resources()),
                ]
        cluster = job.status.ray_cluster_name if job.status else None
        return self._elastic_pod_sets(out, job.metadata, spec, cluster)

    def custom_annotations(self, job: r.RayJob) -> dict[str, str]:
        """GetCustomAnnotations: its cluster's generation."""
        cluster = job.status.ray_cluster_name if job.status else None
        return self._cluster_annotations(job.metadata, cluster)

    def workload_name_extra(self, job: r.RayJob) -> str:
        """GetWorkloadNameExtraPart."""
        return self._name_extra(job.metadata)

    def _expected(self, job: r.RayJob) -> int:
        spec = job.spec.ray_cluster_spec or r.RayClusterSpec()
        return rs.expected_pod_sets(spec) + (1 if _mode(job) == "K8sJobMode" else 0)

    def skip(self, job: r.RayJob) -> bool:
        """JobWithSkip: a job on an existing cluster (``clusterSelector``)
        is not Kueue's to admit."""
        return bool(job.spec.cluster_selector)

    def on_hold(self, job: r.RayJob) -> bool:
        """JobWithOnHold: KubeRay refused the spec (ValidationFailed)."""
        return job.status is not None and job.status.job_deployment_status == "ValidationFailed"

    def is_suspended(self, job: r.RayJob) -> bool:
        return job.spec.suspend

    def is_active(self, job: r.RayJob) -> bool:
        status = job.status.job_deployment_status if job.status else None
        return status not in (None, "", "Suspended")

    def finished(self, job: r.RayJob) -> Finished | None:
        st = job.status
        if st is None or st.job_deployment_status not in ("Complete", "Failed"):
            return None
        return Finished(st.job_status == "SUCCEEDED", st.message or "")

    def pods_ready(self, job: r.RayJob, wl: kt.Workload) -> bool:
        st = job.status
        return (
            st is not None
            and st.ray_cluster_status is not None
            and (st.ray_cluster_status.state == "ready")
        )

    def reclaimable_pods(self, job: r.RayJob) -> list[kt.ReclaimablePod] | None:
        return None

    def suspend_on_create(self, job: r.RayJob) -> r.RayJob:
        return suspended_copy(job, lambda j: j.spec)

    def run(self, job: r.RayJob, infos: list[PodSetInfo]) -> r.RayJob:
        job = clone(job)
        job.spec.suspend = False
        if len(infos) != self._expected(job) or job.spec.ray_cluster_spec is None:
            return job  # BadPodSetsInfoLenError: the Workload no longer fits the job
        rs.run_cluster_spec(job.spec.ray_cluster_spec, infos)
        if _mode(job) == "K8sJobMode":
            template = clone(submitter_template(job))
            merge_into(template, infos[-1])
            job.spec.submitter_pod_template = template
        return job

    def validate(self, job: r.RayJob, old: r.RayJob | None, elastic: bool) -> list[e.FieldError]:
        return []  # the Ray rules need the manage policy: RayJobValidation

    def topology_errors(
        self, job: r.RayJob, elastic: bool = False, multi_layer: bool = True
    ) -> list[e.FieldError]:
        """validateTopologyRequest of its cluster spec, for every RayJob."""
        spec = job.spec.ray_cluster_spec
        if spec is None:
            return []
        pod_sets = self.pod_sets(job, False)
        return rs.topology_errors(spec, pod_sets, "spec.rayClusterSpec", multi_layer=multi_layer)

    def update_errors(self, new: r.RayJob, old: r.RayJob) -> list[e.FieldError]:
        return []

    def stop(self, job: r.RayJob) -> r.RayJob | None:
        if job.spec.suspend:
            return None
        job = clone(job)
        job.spec.suspend = True
        return job

    def restore(self, job: r.RayJob, original: list[kt.PodSet]) -> r.RayJob | None:
        if len(original) != self._expected(job) or job.spec.ray_cluster_spec is None:
            return None
        new = clone(job)
        assert new.spec.ray_cluster_spec is not None
        changed = rs.restore_cluster_spec(
            new.spec.ray_cluster_spec, original[: rs.expected_pod_sets(new.spec.ray_cluster_spec)]
        )
        if _mode(new) == "K8sJobMode" and new.spec.submitter_pod_template is not None:
            current = new.spec.submitter_pod_template
            restored = restored_template(current, original[-1].template)
            if restored != current:
                new.spec.submitter_pod_template = restored
                changed = True
        return new if changed else None
