"""Kueue's validating webhooks and its CRDs' transition rules, as a store
admission hook: what a real API server with Kueue installed refuses on update
(an immutable field changed, a reserved Workload's podSets edited, an
admission gate added after creation...).

Creates are not checked here: objects users write were validated when their
files were read (``kuota.api.decode``), and those kuota's own controllers
write are built valid. Updates need the stored object, which only the store
has. Status writes are skipped: only kuota's controllers write statuses, each
an update the rules allow by construction, and checking every one would cost
about 40 us a write (the bench worlds make hundreds of thousands).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kuota.api.kueue import types as kt
from kuota.api.kueue.updates import validate_update
from kuota.store.kinds import resource_for
from kuota.store.protocol import Invalid, Operation, ResourceType


class KueueUpdateValidation:
    validating = True
    status_writes = False
    operations = frozenset({"UPDATE"})
    kinds: frozenset[ResourceType] = frozenset(resource_for(kt.V1BETA2, k) for k in kt.KINDS)

    def __init__(self, gates: Mapping[str, bool]) -> None:
        self.gates = gates

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        if old is None or new is old:
            return new
        errs = validate_update(new, old, self.gates)
        if errs:
            raise Invalid(f'{new.kind}.{kt.GROUP} "{new.metadata.name}"', errs)
        return new
