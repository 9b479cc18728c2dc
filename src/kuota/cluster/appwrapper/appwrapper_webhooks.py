"""The AppWrapper operator's validating webhook (``internal/webhook``), as a
store admission hook on create and update; ``kuota.api.appwrapper`` holds
the rules."""

from __future__ import annotations

from typing import Any, Final

from kuota.api.appwrapper import appwrapper_types as v
from kuota.store import Invalid
from kuota.store.protocol import Operation
from kuota.store.resources import APP_WRAPPER

__all__ = ["AppWrapperValidation"]

_KINDS: Final = frozenset({APP_WRAPPER})


class AppWrapperValidation:
    kinds = _KINDS
    operations = frozenset({"CREATE", "UPDATE"})
    validating = True
    status_writes = False

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        if op == "UPDATE" and old is not None:
            errs = v.validate_appwrapper_update(new, old)
        else:
            errs = v.validate_appwrapper(new)
        if errs:
            raise Invalid(f'{v.KIND}.{v.GROUP} "{new.metadata.name}"', errs)
        return new
