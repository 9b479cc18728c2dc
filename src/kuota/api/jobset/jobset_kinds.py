"""The JobSet kind, declared once as its CRD has it (kubebuilder markers of
``api/jobset/v1alpha2``: status subresource, five printer columns). Its
defaulting webhook runs as the conversion to the internal object."""

from __future__ import annotations

from kuota.api.jobset import v1alpha2 as v
from kuota.api.kindspec import KindSpec, PrinterColumn, VersionSpec, gateless

__all__ = ["JOBSET_KINDS"]

JOBSET_KINDS: tuple[KindSpec, ...] = (
    KindSpec(
        group=v.GROUP,
        kind=v.KIND,
        plural="jobsets",
        namespaced=True,
        internal=v.JobSet,
        versions=(
            VersionSpec(
                "v1alpha2",
                v.JobSet,
                storage=True,
                to_internal=v.default_jobset,
                columns=(
                    PrinterColumn("TerminalState", "string", ".status.terminalState"),
                    PrinterColumn("Restarts", "string", ".status.restarts"),
                    PrinterColumn(
                        "Completed", "string", '.status.conditions[?(@.type=="Completed")].status'
                    ),
                    PrinterColumn("Suspended", "string", ".spec.suspend"),
                    PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
                ),
            ),
        ),
        status_subresource=True,
        validate=gateless(v.validate_jobset),
    ),
)
