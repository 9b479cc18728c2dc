"""``kueue.x-k8s.io/v1alpha1`` Cohort: Cohorts were served as v1alpha1 before
v1beta1 (``spec.parent`` rather than ``spec.parentName``); old manifests still say
so, and kuota reads them by converting to the internal Cohort."""

from __future__ import annotations

from typing import Any

import msgspec

from kuota.api.kueue import types as kt

__all__ = ["API_VERSION", "CohortAlpha", "CohortSpecAlpha", "cohort_from_alpha"]

API_VERSION = f"{kt.GROUP}/v1alpha1"


# Module level: msgspec resolves the annotations by name.
class CohortSpecAlpha(kt.Object, kw_only=True):
    parent: kt.CohortReference | None = None
    resource_groups: kt.ResourceGroups | None = None
    fair_sharing: kt.FairSharing | None = None


class CohortAlpha(kt.Object, kw_only=True):
    api_version: str = API_VERSION
    kind: str = "Cohort"
    metadata: kt.ObjectMeta = msgspec.field(default_factory=kt.ObjectMeta)
    spec: CohortSpecAlpha = msgspec.field(default_factory=CohortSpecAlpha)


def cohort_from_alpha(o: Any) -> kt.Cohort:
    s = o.spec
    return kt.Cohort(
        api_version=kt.V1BETA2,
        metadata=o.metadata,
        spec=kt.CohortSpec(
            parent_name=s.parent, resource_groups=s.resource_groups, fair_sharing=s.fair_sharing
        ),
    )
