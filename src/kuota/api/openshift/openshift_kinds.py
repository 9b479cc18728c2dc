"""OpenShift's kinds kuota reads, declared once: the Kueue operator's cluster-scoped
``Kueue`` (read in place of Kueue's Configuration file) and the cluster's
``Scheduler`` configuration (its scoring profile). Both configure the control plane
when it starts; the store does not hold them."""

from __future__ import annotations

from kuota.api.kindspec import KindSpec, VersionSpec
from kuota.api.openshift import kueue_operator, operator_config, scheduler_config

__all__ = ["OPENSHIFT_KINDS"]

OPENSHIFT_KINDS: tuple[KindSpec, ...] = (
    KindSpec(
        group=kueue_operator.GROUP,
        kind=kueue_operator.KIND,
        plural="kueues",
        namespaced=False,
        internal=kueue_operator.Kueue,
        versions=(
            VersionSpec(
                "v1", kueue_operator.Kueue, storage=True, root_rules=kueue_operator.ROOT_RULES
            ),
        ),
        status_subresource=True,
        validate=operator_config.validate_kueue,
        stored=False,
    ),
    KindSpec(
        group=scheduler_config.GROUP,
        kind=scheduler_config.KIND,
        plural="schedulers",
        namespaced=False,
        internal=scheduler_config.Scheduler,
        versions=(VersionSpec("v1", scheduler_config.Scheduler, storage=True),),
        status_subresource=True,
        validate=scheduler_config.validate_scheduler,
        stored=False,
    ),
)
