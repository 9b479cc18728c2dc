"""Kueue's pod integration (framework ``pod``, ``pkg/controller/jobs/pod``):
plain pods and pod groups, gated by its webhook until their Workload is
admitted; the pods of Deployments, StatefulSets and LeaderWorkerSets too.

``podmeta``: the pod labels and annotations Kueue reads and writes;
``podwebhook``: the webhooks; ``podgroup``: a pod or a pod group as one job;
``pod_reconciler``: the reconciler, ``podwrites``: its writes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from kuota.api.kueue.config.frameworks import external_kinds
from kuota.controllers.integration import Integration, Wiring
from kuota.controllers.jobs.pod.pod_multikueue_adapter import pod_multikueue_adapter
from kuota.controllers.jobs.pod.pod_reconciler import PodReconciler
from kuota.controllers.jobs.pod.podwebhook import PodValidation, PodWebhook

__all__ = ["INTEGRATION"]

FRAMEWORK: Final = "pod"


def _webhooks(w: Wiring) -> Sequence[Any]:
    ids = w.config.gate("WorkloadIdentifierAnnotations")
    return [
        PodWebhook(
            w.policy,
            w.lookup,
            w.enabled,
            ids=ids,
            default_priority_class=w.config.gate("WorkloadPriorityClassDefaulting"),
            external=external_kinds(w.config.integrations.external_frameworks),
        ),
        PodValidation(w.parents, ids=ids),
    ]


def _reconcilers(w: Wiring) -> Sequence[Any]:
    # Enabled only through deployment/statefulset/LWS: it manages only the
    # pods those suspend (Kueue's implicitly enabled framework).
    implicit = FRAMEWORK not in w.config.integrations.frameworks
    return [PodReconciler(w.config, w.policy, implicit=implicit)]


# Its webhooks run after the API server's own admission (priority,
# LimitRanger): the pod's role hash covers what they set.
INTEGRATION = Integration(
    FRAMEWORK,
    webhooks=_webhooks,
    reconcilers=_reconcilers,
    after_api_server=True,
    multikueue=pod_multikueue_adapter,
)
