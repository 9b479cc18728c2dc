"""Kueue's StatefulSet webhooks (``statefulset_webhook.go``) and the set's
Workload name: the webhook marks a managed StatefulSet's pod template with
``kueue.x-k8s.io/pod-suspending-parent: statefulset`` (its pods are then
created gated) and, while it is managed, refuses changing ``replicas``
(except scaling to or from 0) and the pod spec's shape."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from kuota.api import errors as e
from kuota.api.k8s.apps import StatefulSet
from kuota.controllers.jobframework import WORKLOAD, owner_workload_name
from kuota.controllers.jobs.pod import podmeta as pm
from kuota.controllers.multikueue_adapter import owner_uid
from kuota.controllers.parentpolicy import IMMUTABLE, ParentPolicy, refuse, spec_shape_errors
from kuota.quota.workload import find_condition
from kuota.store.protocol import Operation, ResourceType
from kuota.store.resources import STATEFUL_SET

FRAMEWORK: Final = "statefulset"
STATEFULSET: Final[ResourceType] = STATEFUL_SET
KIND: Final = "StatefulSet"
API_VERSION: Final = "apps/v1"
ON_HOLD: Final = "OnHold"

_REPLICAS_PATH: Final = "spec.replicas"
_POD_SPEC_PATH: Final = "spec.template.spec"


# ------------------------------------------------------------------ the set's Workload
def workload_name(sts: Any, uid: str | None = None) -> str:
    """GetWorkloadName: ``statefulset-<name>-<hash5>`` over the set's uid
    (GetOwnerUID: a MultiKueue worker's copy hashes the manager's)."""
    return owner_workload_name(
        KIND, API_VERSION, sts.metadata.name, owner_uid(sts) if uid is None else uid
    )


def find_workload(get: Callable[[str, str], Any | None], sts: Any) -> tuple[str, Any | None]:
    """findWorkload: (name, Workload) of the set; a Workload under the legacy
    name (hashed without the uid) is still the set's; (name, None) when
    there is none."""
    ns = sts.metadata.namespace
    name = workload_name(sts)
    wl = get(ns, name)
    if wl is not None:
        return name, wl
    legacy = workload_name(sts, "")
    wl = get(ns, legacy)
    return (legacy, wl) if wl is not None else (name, None)


def managed_by_another_framework(sts: Any) -> str | None:
    """The framework (a LeaderWorkerSet) that suspends the set's pods, when
    it is not this one: such sets are left to it."""
    spec = sts.spec
    ann = (spec.template.metadata.annotations if spec is not None else None) or {}
    framework = ann.get(pm.SUSPENDING_PARENT)
    return framework if framework is not None and framework != FRAMEWORK else None


def is_on_hold(wl: Any) -> bool:
    """IsOnHold: the reservation was released on purpose; not to be requeued."""
    qr = find_condition(wl, "QuotaReserved")
    return qr is not None and qr.status == "False" and qr.reason == ON_HOLD


# ------------------------------------------------------------------ webhooks
class StatefulSetWebhook:
    """The defaulting half (``mstatefulset``, on create and update): the
    default LocalQueue and priority class; a managed set's pods created gated."""

    kinds = frozenset({STATEFULSET})
    operations = ("CREATE", "UPDATE")
    status_writes = False

    def __init__(self, parents: ParentPolicy) -> None:
        self.parents = parents

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        if not isinstance(new, StatefulSet) or not self.parents.watched(new):
            return new
        if managed_by_another_framework(new) is not None:
            return new
        new, suspend = self.parents.defaulted(new)
        if suspend and new.spec is not None:
            tmeta = new.spec.template.metadata
            tmeta.annotations = {**(tmeta.annotations or {}), pm.SUSPENDING_PARENT: FRAMEWORK}
        return new


class StatefulSetValidation:
    """The validating half (``vstatefulset``): the common rules (queue name,
    priority class, admission gates), and while the set is managed: its pod
    spec's shape is frozen, ``replicas`` changes only to or from 0, and a
    scale-up from 0 waits for the scale-down to end."""

    kinds = frozenset({STATEFULSET})
    operations = ("CREATE", "UPDATE")
    validating = True
    status_writes = False

    def __init__(self, parents: ParentPolicy) -> None:
        self.parents = parents

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        if not isinstance(new, StatefulSet) or not self.parents.watched(new):
            return new
        if managed_by_another_framework(new) is not None:
            return new
        if op == "UPDATE" and old is not None:
            errs = self._update_errors(new, old)
        else:
            errs = self.parents.create_errors(new)
        if errs:
            refuse(new, errs)
        return new

    def _update_errors(self, new: StatefulSet, old: StatefulSet) -> list[e.FieldError]:
        ready = (old.status.ready_replicas if old.status is not None else None) or 0
        errs = self.parents.update_errors(new, old, suspended=ready == 0)
        if new.spec is None or old.spec is None or not self.parents.should_suspend(new):
            return errs
        errs += spec_shape_errors(new.spec.template.spec, old.spec.template.spec, _POD_SPEC_PATH)
        before, after = old.spec.replicas, new.spec.replicas
        if before != 0 and after != 0 and before != after:
            errs.append(e.invalid(_REPLICAS_PATH, after, IMMUTABLE))
        if before == 0 and after > 0:
            if new.status is not None and new.status.replicas > 0:
                errs.append(e.forbidden(_REPLICAS_PATH, "scaling down is still in progress"))
            else:
                lookup = self.parents.lookup
                _, wl = find_workload(lambda ns, n: lookup(WORKLOAD, ns, n), old)
                if wl is not None and not is_on_hold(wl):
                    msg = "workload from previous scale-down is still being deleted"
                    errs.append(e.forbidden(_REPLICAS_PATH, msg))
        return errs


def statefulset_webhooks(parents: ParentPolicy) -> list[Any]:
    """The store admission hooks of the integration."""
    return [StatefulSetWebhook(parents), StatefulSetValidation(parents)]
