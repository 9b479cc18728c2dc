"""The transition rules of CRDs' ``x-kubernetes-validations`` (those
reading ``oldSelf``), as a store admission hook on updates: kube-apiserver
runs them with the stored object as ``oldSelf`` (apiextensions-apiserver's
strategy ValidateUpdate). The other rules run where every write's body is
read (``kuota.api.apiextensions.structural``); these need the stored
object, which only the store has."""

from __future__ import annotations

from typing import Any

import msgspec

from kuota.api.apiextensions import rules_schema
from kuota.api.apiextensions.cel_rules import validate_rules
from kuota.api.base import enc_hook
from kuota.store.protocol import Invalid

__all__ = ["CRDTransitionRules"]


class CRDTransitionRules:
    validating = True
    status_writes = False
    operations = frozenset({"UPDATE"})

    def __call__(self, op: str, new: Any, old: Any | None) -> Any:
        if old is None or new is old:
            return new
        found = rules_schema(type(new))
        if found is None:
            return new
        group, schema = found
        raw_new = msgspec.to_builtins(new, enc_hook=enc_hook)
        raw_old = msgspec.to_builtins(old, enc_hook=enc_hook)
        errs = [err for err in validate_rules(raw_new, schema, raw_old, transition_only=True)]
        if errs:
            raise Invalid(f'{new.kind}.{group} "{new.metadata.name}"', errs)
        return new
