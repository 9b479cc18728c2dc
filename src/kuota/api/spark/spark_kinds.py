"""The SparkApplication kind, declared once as its CRD has it (kubebuilder
markers of kubeflow/spark-operator ``api/v1beta2``: short name ``sparkapp``,
status subresource, six printer columns); the operator's mutating webhook's
defaults are the kind's defaults."""

from __future__ import annotations

from kuota.api.kindspec import KindSpec, PrinterColumn, VersionSpec
from kuota.api.spark import spark_types as s

__all__ = ["SPARK_KINDS"]

SPARK_KINDS: tuple[KindSpec, ...] = (
    KindSpec(
        group=s.GROUP,
        kind=s.KIND,
        plural="sparkapplications",
        namespaced=True,
        internal=s.SparkApplication,
        versions=(
            VersionSpec(
                "v1beta2",
                s.SparkApplication,
                storage=True,
                columns=(
                    PrinterColumn("Suspend", "boolean", ".spec.suspend"),
                    PrinterColumn("Status", "string", ".status.applicationState.state"),
                    PrinterColumn("Attempts", "string", ".status.executionAttempts"),
                    PrinterColumn("Start", "string", ".status.lastSubmissionAttemptTime"),
                    PrinterColumn("Finish", "string", ".status.terminationTime"),
                    PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
                ),
            ),
        ),
        short_names=("sparkapp",),
        status_subresource=True,
        default=s.default_sparkapplication,
    ),
)
