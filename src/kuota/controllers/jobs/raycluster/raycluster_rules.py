"""The Ray rules of Kueue's RayCluster webhook (``raycluster_webhook.go``
``validateCreate``) for a managed RayCluster: in-tree autoscaling only as an
elastic job (and not under MultiKueue), at most 8 podSets, no worker group
named ``head``."""

from __future__ import annotations

from kuota.api import errors as e
from kuota.api.ray import ray_types as r
from kuota.controllers.jobs.raycluster.rayspec_podsets import group_errors
from kuota.controllers.parentpolicy import ELASTIC_JOB
from kuota.controllers.workloadslicing import has_gate

__all__ = ["raycluster_errors"]

_NO_GATE = "an elastic job must have the ElasticJobSchedulingGate"


def _gate_errors(spec: r.RayClusterSpec) -> list[e.FieldError]:
    """validateElasticJob: every worker group's and the head's template
    carries the elastic-job scheduling gate (the webhook's default adds it)."""
    errs: list[e.FieldError] = []
    templates = [
        (f"spec.workerGroupSpecs[{i}].template.spec.schedulingGates", wg.template)
        for i, wg in enumerate(spec.worker_group_specs or ())
    ]
    templates.append(
        ("spec.headGroupSpec.template.spec.schedulingGates", spec.head_group_spec.template)
    )
    for path, t in templates:
        if not has_gate(t.spec):
            gates = t.spec.scheduling_gates if t.spec is not None else None
            errs.append(e.invalid(path, [g.name for g in gates] if gates else None, _NO_GATE))
    return errs


def raycluster_errors(rc: r.RayCluster, elastic: bool) -> list[e.FieldError]:
    spec = rc.spec
    errs: list[e.FieldError] = []
    if elastic:
        errs += _gate_errors(spec)
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
