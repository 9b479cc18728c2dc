"""Kueue's Deployment integration (framework ``deployment``,
``pkg/controller/jobs/deployment``; integrations.md §3): a webhook only.

A managed Deployment's pod template gets the annotation
``kueue.x-k8s.io/pod-suspending-parent: deployment`` and the labels
``kueue.x-k8s.io/managed: "true"``, its queue name and priority class. Its
ReplicaSets' pods are then gated by the pod webhook and each is admitted on
its own, as a single-pod Workload, by the pod integration: N replicas are N
Workloads, each admitted or preempted independently; a preempted pod is
deleted and its ReplicaSet makes a new, gated one. The queue name may change
only while no replica is ready."""

from __future__ import annotations

from typing import Any, Final

from kuota.api.k8s.apps import Deployment
from kuota.controllers.jobframework import PRIORITY_CLASS, QUEUE_NAME
from kuota.controllers.jobs.pod import podmeta as pm
from kuota.controllers.parentpolicy import ParentPolicy, refuse
from kuota.store.protocol import Operation
from kuota.store.resources import DEPLOYMENT

FRAMEWORK: Final = "deployment"


class DeploymentWebhook:
    """The defaulting half (``mdeployment``, on create and update): the
    default LocalQueue and priority class, then the pod template of a managed
    Deployment marked for the pod integration."""

    kinds = frozenset({DEPLOYMENT})
    operations = ("CREATE", "UPDATE")
    status_writes = False

    def __init__(self, parents: ParentPolicy) -> None:
        self.parents = parents

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        if not isinstance(new, Deployment) or not self.parents.watched(new):
            return new
        new, suspend = self.parents.defaulted(new)
        if suspend and new.spec is not None:
            labels = new.metadata.labels or {}
            tmeta = new.spec.template.metadata
            tmeta.annotations = {**(tmeta.annotations or {}), pm.SUSPENDING_PARENT: FRAMEWORK}
            tlabels = {**(tmeta.labels or {}), pm.MANAGED: pm.MANAGED_VALUE}
            for key in (QUEUE_NAME, PRIORITY_CLASS):
                if labels.get(key):
                    tlabels[key] = labels[key]
            tmeta.labels = tlabels
        return new


class DeploymentValidation:
    """The validating half (``vdeployment``): a valid queue name; the queue
    name immutable (and never removed) once a replica is ready; the
    priority-class and admission-gated-by rules."""

    kinds = frozenset({DEPLOYMENT})
    operations = ("CREATE", "UPDATE")
    validating = True
    status_writes = False

    def __init__(self, parents: ParentPolicy) -> None:
        self.parents = parents

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        if not isinstance(new, Deployment) or not self.parents.watched(new):
            return new
        if op == "UPDATE" and old is not None:
            ready = (old.status.ready_replicas if old.status is not None else None) or 0
            errs = self.parents.update_errors(new, old, suspended=ready == 0)
        else:
            errs = self.parents.create_errors(new)
        if errs:
            refuse(new, errs)
        return new


def deployment_webhooks(parents: ParentPolicy) -> list[Any]:
    """The store admission hooks of the integration."""
    return [DeploymentWebhook(parents), DeploymentValidation(parents)]
