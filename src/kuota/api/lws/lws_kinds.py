"""The LeaderWorkerSet kind, declared once as its CRD has it (kubebuilder markers
of ``api/leaderworkerset/v1``: short name ``lws``, status and scale subresources,
four printer columns). Its defaulting webhook runs as the conversion to the
internal object; it names DNS records, so its name is a DNS-1035 label."""

from __future__ import annotations

from kuota.api.kindspec import KindSpec, PrinterColumn, VersionSpec, gateless
from kuota.api.lws import v1
from kuota.api.names import is_dns1035_label

__all__ = ["LWS_KINDS"]

LWS_KINDS: tuple[KindSpec, ...] = (
    KindSpec(
        group=v1.GROUP,
        kind=v1.KIND,
        plural="leaderworkersets",
        namespaced=True,
        internal=v1.LeaderWorkerSet,
        versions=(
            VersionSpec(
                "v1",
                v1.LeaderWorkerSet,
                storage=True,
                to_internal=v1.default_leader_worker_set,
                columns=(
                    PrinterColumn("Ready", "integer", ".status.readyReplicas"),
                    PrinterColumn("Desired", "integer", ".spec.replicas"),
                    PrinterColumn("Up-to-date", "integer", ".status.updatedReplicas"),
                    PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
                ),
            ),
        ),
        short_names=("lws",),
        status_subresource=True,
        scale_subresource=True,
        validate=gateless(v1.validate_leader_worker_set),
        name_fn=is_dns1035_label,
    ),
)
