"""The training operator's kinds, declared once as their CRDs have them
(status subresource, the State and Age printer columns). The operator's
defaulting runs as the conversion to the internal object."""

from __future__ import annotations

from kuota.api.kindspec import KindSpec, PrinterColumn, VersionSpec, gateless
from kuota.api.kubeflow import v1

__all__ = ["KUBEFLOW_KINDS"]

_COLUMNS = (
    PrinterColumn("State", "string", ".status.conditions[-1:].type"),
    PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
)

KUBEFLOW_KINDS: tuple[KindSpec, ...] = tuple(
    KindSpec(
        group=v1.GROUP,
        kind=fw.kind,
        plural=fw.plural,
        namespaced=True,
        internal=v1.TYPES[fw.kind],
        versions=(
            VersionSpec(
                fw.api_version.rpartition("/")[2],
                v1.TYPES[fw.kind],
                storage=True,
                to_internal=v1.default_job,
                columns=_COLUMNS,
            ),
        ),
        categories=("kubeflow",),
        status_subresource=True,
        validate=gateless(v1.validate_job),
    )
    for fw in v1.FRAMEWORKS.values()
)
