"""Kubeflow Trainer v2's kinds, declared once as their CRDs have them
(status subresource on TrainJob, its State and Age columns; the runtimes
cluster- and namespace-scoped)."""

from __future__ import annotations

from kuota.api.kindspec import KindSpec, PrinterColumn, VersionSpec
from kuota.api.trainer import trainer_types as t

__all__ = ["TRAINER_KINDS"]

TRAINER_KINDS: tuple[KindSpec, ...] = (
    KindSpec(
        group=t.GROUP,
        kind="TrainJob",
        plural="trainjobs",
        namespaced=True,
        internal=t.TrainJob,
        versions=(
            VersionSpec(
                "v1alpha1",
                t.TrainJob,
                storage=True,
                to_internal=t.default_trainjob,
                root_rules=t.ROOT_RULES,
                columns=(
                    PrinterColumn("State", "string", ".status.conditions[-1:].type"),
                    PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
                ),
            ),
        ),
        status_subresource=True,
    ),
    KindSpec(
        group=t.GROUP,
        kind="TrainingRuntime",
        plural="trainingruntimes",
        namespaced=True,
        internal=t.TrainingRuntime,
        versions=(VersionSpec("v1alpha1", t.TrainingRuntime, storage=True),),
    ),
    KindSpec(
        group=t.GROUP,
        kind="ClusterTrainingRuntime",
        plural="clustertrainingruntimes",
        namespaced=False,
        internal=t.ClusterTrainingRuntime,
        versions=(VersionSpec("v1alpha1", t.ClusterTrainingRuntime, storage=True),),
    ),
)
