"""Kueue's StatefulSet integration (framework ``statefulset``,
``pkg/controller/jobs/statefulset``): a StatefulSet is one pod group,
admitted all or nothing through one prebuilt Workload."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kuota.controllers.integration import Integration, Wiring
from kuota.controllers.jobs.statefulset.statefulset_multikueue_adapter import (
    statefulset_multikueue_adapter,
)
from kuota.controllers.jobs.statefulset.statefulset_reconciler import statefulset_reconcilers
from kuota.controllers.jobs.statefulset.statefulset_view import VIEW
from kuota.controllers.jobs.statefulset.statefulset_webhook import FRAMEWORK, statefulset_webhooks

__all__ = ["INTEGRATION"]


def _webhooks(w: Wiring) -> Sequence[Any]:
    return statefulset_webhooks(w.parents)


def _reconcilers(w: Wiring) -> Sequence[Any]:
    return statefulset_reconcilers(w.config, w.parents)


INTEGRATION = Integration(
    FRAMEWORK,
    webhooks=_webhooks,
    reconcilers=_reconcilers,
    implicitly_enabled=("pod",),
    view=VIEW,
    multikueue=statefulset_multikueue_adapter,
)
