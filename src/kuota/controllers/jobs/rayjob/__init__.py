"""Kueue's RayJob integration (framework ``ray.io/rayjob``,
``pkg/controller/jobs/rayjob``): an adapter for the generic job reconciler
and the Ray rules of its webhook. KubeRay's operator (the RayJob and
RayCluster controllers) runs in the embedded cluster (``kuota.cluster.kuberay``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kuota.controllers.integration import Integration, Wiring
from kuota.controllers.jobs.raycluster.ray_validation import RayValidation
from kuota.controllers.jobs.rayjob.rayjob_adapter import RayJobAdapter
from kuota.controllers.jobs.rayjob.rayjob_rules import rayjob_errors
from kuota.controllers.multikueue_adapter import generic
from kuota.store.resources import RAY_JOB

__all__ = ["INTEGRATION"]


def _webhooks(w: Wiring) -> Sequence[Any]:
    return [RayValidation(RAY_JOB, rayjob_errors, w.policy, w.parents)]


INTEGRATION = Integration(
    "ray.io/rayjob",
    adapter=RayJobAdapter,
    webhooks=_webhooks,
    multikueue=generic(RayJobAdapter),
)
