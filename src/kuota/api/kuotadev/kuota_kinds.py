"""kuota's own kinds (``kuota.dev``), declared once. A new kind of kuota's own adds
its module to this package and its ``KindSpec`` here."""

from __future__ import annotations

from kuota.api.kindspec import KindSpec, PrinterColumn, VersionSpec, gateless
from kuota.api.kuotadev import nodeoperation

__all__ = ["KUOTA_KINDS"]


KUOTA_KINDS: tuple[KindSpec, ...] = (
    KindSpec(
        group=nodeoperation.GROUP,
        kind=nodeoperation.KIND,
        plural="nodeoperations",
        namespaced=False,
        internal=nodeoperation.NodeOperation,
        versions=(
            VersionSpec(
                "v1alpha1",
                nodeoperation.NodeOperation,
                storage=True,
                columns=(
                    PrinterColumn("Node", "string", ".spec.nodeName"),
                    PrinterColumn("Operation", "string", ".spec.operation"),
                    PrinterColumn("Phase", "string", ".status.phase"),
                    PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
                ),
            ),
        ),
        status_subresource=True,
        validate=gateless(nodeoperation.validate_node_operation),
    ),
)
