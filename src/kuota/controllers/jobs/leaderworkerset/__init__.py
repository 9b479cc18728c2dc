"""Kueue's LeaderWorkerSet integration (framework
``leaderworkerset.x-k8s.io/leaderworkerset``,
``pkg/controller/jobs/leaderworkerset``): each group of a LeaderWorkerSet is
a pod group with its own Workload. The LWS operator it needs (its
controllers and webhooks) runs in the embedded cluster, as an operator
installed beside Kueue would (``kuota.cluster.lws``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kuota.controllers.integration import Integration, Wiring
from kuota.controllers.jobs.leaderworkerset.leaderworkerset_multikueue_adapter import (
    leaderworkerset_multikueue_adapter,
)
from kuota.controllers.jobs.leaderworkerset.leaderworkerset_reconciler import (
    LeaderWorkerSetReconciler,
)
from kuota.controllers.jobs.leaderworkerset.leaderworkerset_view import VIEW
from kuota.controllers.jobs.leaderworkerset.leaderworkerset_webhook import FRAMEWORK, lws_webhooks

__all__ = ["INTEGRATION"]


def _webhooks(w: Wiring) -> Sequence[Any]:
    return lws_webhooks(w.config, w.parents)


def _reconcilers(w: Wiring) -> Sequence[Any]:
    return [LeaderWorkerSetReconciler(w.config, w.parents)]


INTEGRATION = Integration(
    FRAMEWORK,
    webhooks=_webhooks,
    reconcilers=_reconcilers,
    implicitly_enabled=("pod",),
    view=VIEW,
    multikueue=leaderworkerset_multikueue_adapter,
)
