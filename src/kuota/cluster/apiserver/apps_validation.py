"""The API server's validation of apps/v1 objects written to the store, as an
admission hook: Deployments, ReplicaSets, StatefulSets and ControllerRevisions
are checked on create and on update (``kuota.api.apps``), so a controller or a
user editing one gets the API server's answer (an immutable selector, a
StatefulSet's frozen spec fields). Status writes are not checked: only kuota's
controllers write them."""

from __future__ import annotations

from typing import Any

from kuota.api.apps import APPS_KINDS, VALIDATORS, validate_update
from kuota.store.protocol import Invalid, Operation, ResourceType, group_of

__all__ = ["AppsValidation"]


class AppsValidation:
    validating = True
    status_writes = False
    operations = frozenset({"CREATE", "UPDATE"})
    kinds: frozenset[ResourceType] = frozenset((group_of(av), k) for av, k in APPS_KINDS)

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        if old is None:
            errs = VALIDATORS[type(new)](new)
        elif new is old:
            return new
        else:
            errs = validate_update(new, old)
        if errs:
            raise Invalid(f'{new.kind}.apps "{new.metadata.name}"', errs)
        return new
