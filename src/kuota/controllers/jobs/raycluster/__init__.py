"""Kueue's RayCluster integration (framework ``ray.io/raycluster``,
``pkg/controller/jobs/raycluster``): an adapter for the generic job
reconciler and the Ray rules of its webhook; ``rayspec_podsets`` holds what
the RayJob and RayService integrations share with it. A RayCluster a RayJob
or RayService made is theirs (its Kueue-managed owner speaks for it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kuota.controllers.integration import Integration, Wiring
from kuota.controllers.jobs.raycluster.ray_validation import RayValidation
from kuota.controllers.jobs.raycluster.raycluster_adapter import RayClusterAdapter
from kuota.controllers.jobs.raycluster.raycluster_rules import raycluster_errors
from kuota.controllers.multikueue_adapter import generic
from kuota.store.resources import RAY_CLUSTER

__all__ = ["INTEGRATION"]


def _webhooks(w: Wiring) -> Sequence[Any]:
    return [RayValidation(RAY_CLUSTER, raycluster_errors, w.policy, w.parents)]


INTEGRATION = Integration(
    "ray.io/raycluster",
    adapter=RayClusterAdapter,
    webhooks=_webhooks,
    multikueue=generic(RayClusterAdapter),
)
