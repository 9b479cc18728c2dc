"""The Ray-specific rules of Kueue's RayJob, RayCluster and RayService
validating webhooks (``rayjob_webhook.go``, ``raycluster_webhook.go``,
``rayservice_webhook.go``), for the objects Kueue manages (a queue name, or
``manageJobsWithoutQueueName``), as one store admission hook per kind; it
runs after jobframework's common rules (``JobValidation``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kuota.api import errors as e
from kuota.controllers.jobframework import ManagePolicy, refuse
from kuota.controllers.parentpolicy import ParentPolicy
from kuota.store.protocol import Operation, ResourceType

__all__ = ["RayValidation"]

Rules = Callable[[Any, bool], list[e.FieldError]]


class RayValidation:
    operations = ("CREATE", "UPDATE")
    validating = True
    status_writes = False

    def __init__(
        self, rtype: ResourceType, rules: Rules, policy: ManagePolicy, parents: ParentPolicy
    ) -> None:
        self.kinds = frozenset({rtype})
        self.rules = rules  # (object, elastic) -> errors
        self.policy = policy
        self.parents = parents

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        if not self.parents.watched(new) or not self.policy.job_managed(new.metadata.labels):
            return new
        errs = self.rules(new, self.parents.is_elastic(new))
        if errs:
            refuse(new, errs)
        return new
