"""KubeRay's submitter pod for a RayJob in ``K8sJobMode`` (``ray-operator/
controllers/ray/common/job.go``, mirrored by Kueue's ``getSubmitterTemplate``):
the job's ``submitterPodTemplate``, or one container ``ray-job-submitter`` in
the head's image requesting 500m CPU and 200Mi (limits 1 CPU, 1Gi), never
restarted.

Pure: no I/O.
"""

from __future__ import annotations

from kuota.api.base import Quantity
from kuota.api.k8s import Container, PodSpec, PodTemplateSpec, ResourceRequirements
from kuota.api.ray.ray_types import SUBMITTER_CONTAINER, RayJob

__all__ = ["submitter_resources", "submitter_template"]


def submitter_resources() -> ResourceRequirements:
    """defaultSubmitterResources."""
    return ResourceRequirements(
        limits={"cpu": Quantity.parse("1"), "memory": Quantity.parse("1Gi")},
        requests={"cpu": Quantity.parse("500m"), "memory": Quantity.parse("200Mi")},
    )


def submitter_template(job: RayJob) -> PodTemplateSpec:
    """The job's own submitter template, or KubeRay's default (not a copy)."""
    if job.spec.submitter_pod_template is not None:
        return job.spec.submitter_pod_template
    cluster = job.spec.ray_cluster_spec
    head = cluster.head_group_spec.template.spec if cluster is not None else None
    image = head.containers[0].image if head is not None and head.containers else None
    return PodTemplateSpec(
        spec=PodSpec(
            containers=[
                Container(name=SUBMITTER_CONTAINER, image=image, resources=submitter_resources())
            ],
            restart_policy="Never",
        )
    )
