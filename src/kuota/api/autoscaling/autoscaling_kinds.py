"""The ``autoscaling.x-k8s.io`` kinds, declared once as cluster-autoscaler's
CRD has them (v1 stored, status subresource, the short name ``provreq``)."""

from __future__ import annotations

from kuota.api.autoscaling import provisioningrequest as pr
from kuota.api.kindspec import KindSpec, VersionSpec, gateless

__all__ = ["AUTOSCALING_KINDS"]

AUTOSCALING_KINDS: tuple[KindSpec, ...] = (
    KindSpec(
        group=pr.GROUP,
        kind=pr.KIND,
        plural="provisioningrequests",
        namespaced=True,
        internal=pr.ProvisioningRequest,
        versions=(VersionSpec("v1", pr.ProvisioningRequest, storage=True),),
        short_names=("provreq", "provreqs"),
        status_subresource=True,
        validate=gateless(pr.validate_provisioning_request),
    ),
)
