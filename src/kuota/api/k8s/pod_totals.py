"""What a pod's containers ask for in all, as Kubernetes' resource helpers
count it (``k8s.io/component-helpers/resource`` PodRequests/PodLimits, before
pod-level resources and overhead): shared by the LimitRanger and the
ResourceQuota's usage, which add those as each does."""

from __future__ import annotations

from typing import Any


def container_totals(spec: Any, which: str) -> dict[str, int]:
    """Per resource, in nanos: the larger of (regular containers + sidecars)
    and the peak of each plain init container with the sidecars started
    before it. ``which``: "requests" or "limits"."""

    def amounts(c: Any) -> Any:
        res = c.resources
        return (getattr(res, which) if res is not None else None) or {}

    total: dict[str, int] = {}
    for c in spec.containers:
        for k, q in amounts(c).items():
            total[k] = total.get(k, 0) + q.nanos
    sidecars: dict[str, int] = {}
    peak: dict[str, int] = {}
    for c in spec.init_containers or ():
        if c.restart_policy == "Always":
            for k, q in amounts(c).items():
                total[k] = total.get(k, 0) + q.nanos
                sidecars[k] = sidecars.get(k, 0) + q.nanos
            during = sidecars
        else:
            during = dict(sidecars)
            for k, q in amounts(c).items():
                during[k] = during.get(k, 0) + q.nanos
        for k, v in during.items():
            peak[k] = max(peak.get(k, 0), v)
    for k, v in peak.items():
        total[k] = max(total.get(k, 0), v)
    return total
