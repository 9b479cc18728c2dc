"""An HPA targeting a group's object charges the object at the HPA's
``maxReplicas`` (the production design checks that ``maxReplicas`` fits the
quota): creating or raising an HPA asks the group for the difference, and is
refused, all or nothing, when it does not fit; lowering it gives back. The
object's own scaling (its replicas, through an update or the scale
subresource) is then charged by its delta as any update, from that floor."""

from __future__ import annotations

from typing import Any, Final

from kuota.controllers.kuotadev.bizrq.object_webhook import ObjectQuotaWebhook, group_of
from kuota.quota.bizgroups.usage import subtract
from kuota.store import NotFound
from kuota.store.kinds import resource_for
from kuota.store.resources import HPA

__all__ = ["HpaQuotaWebhook", "hpa_target"]

_PATH: Final = "spec.maxReplicas"


def hpa_target(store: Any, hpa: Any) -> Any | None:
    ref = hpa.spec.scale_target_ref
    api_version = ref.api_version or ""
    try:
        rtype = resource_for(api_version, ref.kind) if api_version else None
    except (KeyError, ValueError, NotFound):
        return None
    if rtype is None:
        return None
    try:
        return store.get(rtype, hpa.metadata.namespace, ref.name)
    except NotFound:
        return None


class HpaQuotaWebhook:
    validating: Final = True
    operations: Final = frozenset(("CREATE", "UPDATE"))
    kinds: Final = frozenset((HPA,))

    def __init__(self, objects: ObjectQuotaWebhook) -> None:
        self._objects = objects

    def __call__(self, op: str, new: Any, old: Any | None) -> Any:
        hook = self._objects
        target = hpa_target(hook.store(), new)
        if target is None or target.kind not in {k for _, k in hook.owner_kinds}:
            return new  # no object to charge (yet): its creation is checked then
        group = group_of(target)
        if not group:
            return new
        name = new.metadata.name
        before = hook.usage(target, (name, old))
        after = hook.usage(target, (name, new))
        delta = subtract(after, before)
        if delta:
            hook.charge_delta(new, group, delta, path=_PATH)
        return new
