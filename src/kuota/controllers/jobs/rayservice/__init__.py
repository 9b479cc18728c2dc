"""Kueue's RayService integration (framework ``ray.io/rayservice``,
``pkg/controller/jobs/rayservice``): an adapter for the generic job
reconciler and the Ray rules of its webhook (those of its cluster spec, at
``spec.rayClusterSpec`` as Kueue names the path). KubeRay's RayService
controller runs in the embedded cluster (``kuota.cluster.kuberay``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kuota.api import errors as e
from kuota.api.ray import ray_types as r
from kuota.controllers.integration import Integration, Wiring
from kuota.controllers.jobs.raycluster.ray_validation import RayValidation
from kuota.controllers.jobs.raycluster.rayspec_podsets import cluster_spec_errors
from kuota.controllers.jobs.rayservice.rayservice_adapter import RayServiceAdapter
from kuota.controllers.multikueue_adapter import generic
from kuota.store.resources import RAY_SERVICE

__all__ = ["INTEGRATION"]


def _rules(svc: r.RayService, elastic: bool) -> list[e.FieldError]:
    return cluster_spec_errors(svc.spec.ray_cluster_config, "spec.rayClusterSpec", elastic)


def _webhooks(w: Wiring) -> Sequence[Any]:
    return [RayValidation(RAY_SERVICE, _rules, w.policy, w.parents)]


INTEGRATION = Integration(
    "ray.io/rayservice",
    adapter=RayServiceAdapter,
    webhooks=_webhooks,
    multikueue=generic(RayServiceAdapter),
)
