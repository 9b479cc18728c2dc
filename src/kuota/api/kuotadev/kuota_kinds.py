"""kuota's own kinds (``kuota.dev``), declared once. A new kind of kuota's own adds
its module to this package and its ``KindSpec`` here."""

from __future__ import annotations

from kuota.api.kindspec import KindSpec, PrinterColumn, VersionSpec, gateless
from kuota.api.kuotadev import bizrq, nodegroup, nodeoperation

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
    KindSpec(
        group=bizrq.GROUP,
        kind=bizrq.KIND,
        plural="bizgroupresourcequotas",
        namespaced=False,
        internal=bizrq.BizGroupResourceQuota,
        versions=(
            VersionSpec(
                "v1alpha1",
                bizrq.BizGroupResourceQuota,
                storage=True,
                columns=(
                    PrinterColumn("Parent", "string", ".spec.parentBizGroup"),
                    PrinterColumn("Enforcement", "string", ".spec.enforcement"),
                    PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
                ),
            ),
        ),
        short_names=("bizrq",),
        status_subresource=True,
        validate=gateless(bizrq.validate_bizrq),
        default=bizrq.default_bizrq,
    ),
    KindSpec(
        group=nodegroup.GROUP,
        kind=nodegroup.KIND,
        plural="nodegroups",
        namespaced=False,
        internal=nodegroup.NodeGroup,
        versions=(
            VersionSpec(
                "v1alpha1",
                nodegroup.NodeGroup,
                storage=True,
                columns=(
                    PrinterColumn("Min", "integer", ".spec.minSize"),
                    PrinterColumn("Max", "integer", ".spec.maxSize"),
                    PrinterColumn("Nodes", "integer", ".status.nodes"),
                    PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
                ),
            ),
        ),
        short_names=("ng",),
        status_subresource=True,
        validate=gateless(nodegroup.validate_node_group),
    ),
)
