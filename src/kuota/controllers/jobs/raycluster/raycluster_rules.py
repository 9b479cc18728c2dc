"""The Ray rules of Kueue's RayCluster webhook (``raycluster_webhook.go``
``validateCreate``) for a managed RayCluster: in-tree autoscaling only as an
elastic job (and not under MultiKueue), at most 8 podSets, no worker group
named ``head``."""

from __future__ import annotations

from kuota.api import errors as e
from kuota.api.ray import ray_types as r
from kuota.controllers.jobs.raycluster.rayspec_podsets import group_errors
from kuota.controllers.parentpolicy import ELASTIC_JOB

__all__ = ["raycluster_errors"]


def raycluster_errors(rc: r.RayCluster, elastic: bool) -> list[e.FieldError]:
    spec = rc.spec
    errs: list[e.FieldError] = []
    if elastic:
        if spec.enable_in_tree_autoscaling and spec.managed_by == r.MULTIKUEUE:
            errs.append(
                e.forbidden(
                    "spec.enableInTreeAutoscaling",
                    "in-tree autoscaling is not supported for a MultiKueue-managed elastic "
                    "RayCluster",
                )
            )
    elif spec.enable_in_tree_autoscaling:
        errs.append(
            e.invalid(
                "spec.enableInTreeAutoscaling",
                True,
                "a kueue-managed RayCluster can use autoscaling only as an elastic job: enable "
                "the ElasticJobsViaWorkloadSlices feature gate and set the "
                f'"{ELASTIC_JOB}": "true" annotation',
            )
        )
    return errs + group_errors(spec, "spec")
