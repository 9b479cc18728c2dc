"""Kueue's Deployment integration (framework ``deployment``,
``pkg/controller/jobs/deployment``): its webhooks mark a managed
Deployment's pod template; the pod integration admits each pod alone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kuota.controllers.integration import Integration, Wiring
from kuota.controllers.jobs.deployment.deployment_view import VIEW
from kuota.controllers.jobs.deployment.deployment_webhook import FRAMEWORK, deployment_webhooks

__all__ = ["INTEGRATION"]


def _webhooks(w: Wiring) -> Sequence[Any]:
    return deployment_webhooks(w.parents)


INTEGRATION = Integration(FRAMEWORK, webhooks=_webhooks, implicitly_enabled=("pod",), view=VIEW)
