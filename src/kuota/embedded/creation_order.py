"""The order a world is created in, as an admin would apply it: namespaces
and classes first, then flavors, cohorts and queues, then nodes, then
workloads (so a Job finds its namespace's default LocalQueue, as it would in
a cluster). Its own module so that the fast replay, which sorts a design so,
does not import the whole control plane."""

from __future__ import annotations

from typing import Any, Final

__all__ = ["NAME_LABEL", "creation_rank"]

NAME_LABEL: Final = "kubernetes.io/metadata.name"

_RANK: Final = {
    "Namespace": 0,
    "PriorityClass": 1,
    "WorkloadPriorityClass": 1,
    "RuntimeClass": 1,
    "LimitRange": 2,
    "DeviceClass": 1,
    "ResourceClaimTemplate": 2,
    "ResourceSlice": 2,
    "ResourceFlavor": 3,
    "AdmissionCheck": 3,
    "ProvisioningRequestConfig": 3,
    "Cohort": 4,
    "ClusterQueue": 5,
    "LocalQueue": 6,
    "Node": 7,
    "NodeGroup": 7,
}


def creation_rank(obj: Any) -> int:
    return _RANK.get(obj.kind, 10)
