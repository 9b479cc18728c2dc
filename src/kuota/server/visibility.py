"""Kueue's visibility API over kuota serve's HTTP: the query is the Kueue
controller's (controllers/visibility.py); its refusals become Statuses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kuota.controllers import visibility as vis
from kuota.server import status as st

GROUP = vis.GROUP


def pending_workloads(
    cp: Any,
    version: str,
    resource: str,
    namespace: str,
    name: str,
    sub: str,
    query: Mapping[str, str],
) -> dict[str, Any]:
    """The PendingWorkloadsSummary of a queue of ``cp``'s Kueue controller."""
    try:
        return vis.pending_workloads(cp.kueue.core, version, resource, namespace, name, sub, query)
    except vis.VisibilityError as err:
        raise st.ApiError(err.code, err.reason, err.message, details=err.details) from None
