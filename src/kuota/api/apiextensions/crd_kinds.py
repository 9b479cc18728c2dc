"""The CustomResourceDefinition kind itself, declared once."""

from __future__ import annotations

from kuota.api.apiextensions.crd_types import GROUP, KIND, CustomResourceDefinition
from kuota.api.apiextensions.crd_validation import validate_crd
from kuota.api.kindspec import KindSpec, PrinterColumn, VersionSpec, gateless

__all__ = ["APIEXTENSIONS_KINDS"]

APIEXTENSIONS_KINDS: tuple[KindSpec, ...] = (
    KindSpec(
        group=GROUP,
        kind=KIND,
        plural="customresourcedefinitions",
        namespaced=False,
        internal=CustomResourceDefinition,
        versions=(
            VersionSpec(
                "v1",
                CustomResourceDefinition,
                storage=True,
                columns=(PrinterColumn("Created At", "date", ".metadata.creationTimestamp"),),
            ),
        ),
        short_names=("crd", "crds"),
        categories=("api-extensions",),
        status_subresource=True,
        validate=gateless(validate_crd),
    ),
)
