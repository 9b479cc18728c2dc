"""The TAS rules of every job webhook that checks them (Kueue's
``validateTopologyRequest`` of each integration over jobframework's
tas_validation.go), by kind, for what reads a manifest without a control
plane (``kuota validate``). A TrainJob's pod sets come from its runtime, which
a lone manifest does not have: its rules run in the control plane only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from kuota.api import errors as e
from kuota.api.kubeflow import v1 as kf
from kuota.api.lws import v1 as lw
from kuota.controllers.jobs.batchjob.job_adapter import BatchJobAdapter
from kuota.controllers.jobs.jobset.jobset_adapter import JobSetAdapter
from kuota.controllers.jobs.kubeflowjob.kubeflow_adapter import KubeflowAdapter
from kuota.controllers.jobs.leaderworkerset.leaderworkerset_webhook import topology_errors as lws
from kuota.controllers.jobs.raycluster.raycluster_adapter import RayClusterAdapter
from kuota.controllers.jobs.rayjob.rayjob_adapter import RayJobAdapter
from kuota.controllers.jobs.rayservice.rayservice_adapter import RayServiceAdapter
from kuota.controllers.jobs.sparkapplication.sparkapplication_adapter import (
    SparkApplicationAdapter,
)
from kuota.controllers.tas_requests import validate_annotations

__all__ = ["topology_errors"]

Rule = Callable[[Any, bool], list[e.FieldError]]  # (object, TASMultiLayerTopology)


def _adapter_rule(adapter: Any) -> Rule:
    return lambda obj, multi_layer: adapter.topology_errors(obj, False, multi_layer)


def _rules() -> dict[tuple[str, str], Rule]:
    batch = BatchJobAdapter()
    rules: dict[tuple[str, str], Rule] = {
        ("batch/v1", "Job"): _adapter_rule(batch),
        ("v1", "Pod"): lambda pod, ml: validate_annotations(
            "metadata", pod.metadata.annotations, ml
        ),
        (lw.API_VERSION, lw.KIND): lws,
    }
    for a in (
        JobSetAdapter(),
        RayClusterAdapter(),
        RayJobAdapter(),
        RayServiceAdapter(),
        SparkApplicationAdapter(),
    ):
        rules[(a.api_version, a.kind)] = _adapter_rule(a)
    for kind in kf.FRAMEWORKS:
        k = KubeflowAdapter(kind)
        rules[(k.api_version, kind)] = _adapter_rule(k)
    return rules


_RULES: Final = _rules()


def topology_errors(obj: Any, multi_layer: bool = True) -> list[e.FieldError]:
    """The TAS errors Kueue's webhook for ``obj``'s kind reports, [] for a
    kind without one (``multi_layer``: the TASMultiLayerTopology gate)."""
    rule = _RULES.get((getattr(obj, "api_version", ""), getattr(obj, "kind", "")))
    return rule(obj, multi_layer) if rule is not None else []
