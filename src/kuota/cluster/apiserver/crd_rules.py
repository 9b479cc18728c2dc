"""The rules of CRDs' ``x-kubernetes-validations`` that read ``oldSelf``,
as a store admission hook: on updates with the stored object as ``oldSelf``
(apiextensions-apiserver's strategy ValidateUpdate), and those with
``optionalOldSelf`` on creates too, oldSelf none. The other rules run where
every write's body is read (``kuota.api.apiextensions.structural``); these
need to know the stored object, which only the store has. (``kuota
validate`` writes to no store: it runs no rule reading oldSelf.)"""

from __future__ import annotations

from typing import Any

import msgspec

from kuota.api.apiextensions import rules_schema
from kuota.api.apiextensions.cel_rules import CREATE, UPDATE, validate_rules
from kuota.api.base import enc_hook
from kuota.store.protocol import Invalid

__all__ = ["CRDTransitionRules"]


class CRDTransitionRules:
    validating = True
    status_writes = False
    operations = frozenset({"CREATE", "UPDATE"})

    def __call__(self, op: str, new: Any, old: Any | None) -> Any:
        if new is old:
            return new
        found = rules_schema(type(new))
        if found is None:
            return new
        group, schema = found
        raw_new = msgspec.to_builtins(new, enc_hook=enc_hook)
        if old is None:
            errs = validate_rules(raw_new, schema, None, phase=CREATE)
        else:
            raw_old = msgspec.to_builtins(old, enc_hook=enc_hook)
            errs = validate_rules(raw_new, schema, raw_old, phase=UPDATE)
        if errs:
            raise Invalid(f'{new.kind}.{group} "{new.metadata.name}"', errs)
        return new
