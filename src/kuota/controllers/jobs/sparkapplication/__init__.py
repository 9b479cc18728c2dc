"""Kueue's SparkApplication integration (framework ``sparkoperator.k8s.io/
sparkapplication``, ``pkg/controller/jobs/sparkapplication``; alpha, behind
the SparkApplicationIntegration gate): an adapter for the generic job
reconciler and the Spark rules of its webhook. The Spark operator that
submits the application (its driver, then its executors) runs in the
embedded cluster (``kuota.cluster.spark``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kuota.controllers.integration import Integration, Wiring
from kuota.controllers.jobs.raycluster.ray_validation import RayValidation
from kuota.controllers.jobs.sparkapplication.spark_rules import spark_errors
from kuota.controllers.jobs.sparkapplication.sparkapplication_adapter import (
    SparkApplicationAdapter,
)
from kuota.store.resources import SPARK_APPLICATION

__all__ = ["INTEGRATION"]


def _webhooks(w: Wiring) -> Sequence[Any]:
    # (RayValidation: a kind's own rules for the objects Kueue manages)
    return [RayValidation(SPARK_APPLICATION, spark_errors, w.policy, w.parents)]


INTEGRATION = Integration(
    "sparkoperator.k8s.io/sparkapplication", adapter=SparkApplicationAdapter, webhooks=_webhooks
)
