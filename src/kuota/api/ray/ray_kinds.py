"""KubeRay's kinds, declared once as their CRDs have them (kubebuilder markers
of ``ray-operator/apis/ray/v1``: category ``all``, status subresource, the
printer columns). The CRD defaults run as the conversion to the internal
object."""

from __future__ import annotations

from kuota.api.kindspec import KindSpec, PrinterColumn, VersionSpec
from kuota.api.ray import ray_types as r

__all__ = ["RAY_KINDS"]

_AGE = PrinterColumn("age", "date", ".metadata.creationTimestamp")

RAY_KINDS: tuple[KindSpec, ...] = (
    KindSpec(
        group=r.GROUP,
        kind="RayCluster",
        plural="rayclusters",
        namespaced=True,
        internal=r.RayCluster,
        versions=(
            VersionSpec(
                "v1",
                r.RayCluster,
                storage=True,
                to_internal=r.default_raycluster,
                columns=(
                    PrinterColumn("desired workers", "integer", ".status.desiredWorkerReplicas"),
                    PrinterColumn(
                        "available workers", "integer", ".status.availableWorkerReplicas"
                    ),
                    PrinterColumn("cpus", "string", ".status.desiredCPU"),
                    PrinterColumn("memory", "string", ".status.desiredMemory"),
                    PrinterColumn("gpus", "string", ".status.desiredGPU"),
                    PrinterColumn("tpus", "string", ".status.desiredTPU", priority=1),
                    PrinterColumn("status", "string", ".status.state"),
                    _AGE,
                    PrinterColumn("head pod IP", "string", ".status.head.podIP", priority=1),
                    PrinterColumn(
                        "head service IP", "string", ".status.head.serviceIP", priority=1
                    ),
                ),
            ),
        ),
        categories=("all",),
        status_subresource=True,
    ),
    KindSpec(
        group=r.GROUP,
        kind="RayJob",
        plural="rayjobs",
        namespaced=True,
        internal=r.RayJob,
        versions=(
            VersionSpec(
                "v1",
                r.RayJob,
                storage=True,
                to_internal=r.default_rayjob,
                columns=(
                    PrinterColumn("job status", "string", ".status.jobStatus"),
                    PrinterColumn("deployment status", "string", ".status.jobDeploymentStatus"),
                    PrinterColumn("ray cluster name", "string", ".status.rayClusterName"),
                    PrinterColumn("start time", "string", ".status.startTime"),
                    PrinterColumn("end time", "string", ".status.endTime"),
                    _AGE,
                ),
            ),
        ),
        categories=("all",),
        status_subresource=True,
    ),
    KindSpec(
        group=r.GROUP,
        kind="RayService",
        plural="rayservices",
        namespaced=True,
        internal=r.RayService,
        versions=(
            VersionSpec(
                "v1",
                r.RayService,
                storage=True,
                to_internal=r.default_rayservice,
                columns=(
                    PrinterColumn("service status", "string", ".status.serviceStatus"),
                    PrinterColumn("num serve endpoints", "string", ".status.numServeEndpoints"),
                ),
            ),
        ),
        categories=("all",),
        status_subresource=True,
    ),
)
