"""The Ray rules of Kueue's RayJob webhook (``rayjob_webhook.go``
``validateCreate``) for a managed RayJob: a cluster of its own (no
``clusterSelector`` beside a ``rayClusterSpec``, one of them required),
deleted when the job finishes, and the cluster spec's rules."""

from __future__ import annotations

from kuota.api import errors as e
from kuota.api.ray import ray_types as r
from kuota.controllers.jobs.raycluster.rayspec_podsets import cluster_spec_errors

__all__ = ["rayjob_errors"]


def rayjob_errors(job: r.RayJob, elastic: bool) -> list[e.FieldError]:
    spec = job.spec
    selector, cluster = bool(spec.cluster_selector), spec.ray_cluster_spec
    if selector and cluster is not None:
        return [
            e.invalid(
                "spec.clusterSelector",
                spec.cluster_selector,
                "a kueue managed job should not use an existing cluster",
            )
        ]
    if selector:
        return []
    if cluster is None:
        return [
            e.required(
                "spec.rayClusterSpec",
                "rayClusterSpec is required for Kueue-managed jobs that don't use clusterSelector",
            )
        ]
    errs: list[e.FieldError] = []
    if not spec.shutdown_after_job_finishes:
        errs.append(
            e.invalid(
                "spec.shutdownAfterJobFinishes",
                False,
                "a kueue managed job should delete the cluster after finishing",
            )
        )
    return errs + cluster_spec_errors(cluster, "spec.rayClusterSpec", elastic)
