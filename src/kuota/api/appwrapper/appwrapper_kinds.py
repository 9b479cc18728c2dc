"""The AppWrapper kind, declared once as its CRD has it (kubebuilder markers
of project-codeflare/appwrapper ``api/v1beta2``: short name ``aw``, status
subresource, five printer columns). Its webhook's create rules are the
kind's validation."""

from __future__ import annotations

from kuota.api.appwrapper import appwrapper_types as v
from kuota.api.kindspec import KindSpec, PrinterColumn, VersionSpec, gateless

__all__ = ["APPWRAPPER_KINDS"]


def _cond(ctype: str) -> str:
    return f'.status.conditions[?(@.type=="{ctype}")].status'


APPWRAPPER_KINDS: tuple[KindSpec, ...] = (
    KindSpec(
        group=v.GROUP,
        kind=v.KIND,
        plural="appwrappers",
        namespaced=True,
        internal=v.AppWrapper,
        versions=(
            VersionSpec(
                "v1beta2",
                v.AppWrapper,
                storage=True,
                columns=(
                    PrinterColumn("Status", "string", ".status.phase"),
                    PrinterColumn("Quota Reserved", "string", _cond("QuotaReserved")),
                    PrinterColumn("Resources Deployed", "string", _cond("ResourcesDeployed")),
                    PrinterColumn("Unhealthy", "string", _cond("Unhealthy")),
                    PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
                ),
            ),
        ),
        short_names=("aw",),
        status_subresource=True,
        validate=gateless(v.validate_appwrapper),
    ),
)
