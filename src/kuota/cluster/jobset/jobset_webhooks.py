"""The JobSet operator's webhooks, as store admission hooks: defaulting on
create (``mjobset.kb.io``) and validation on create and update
(``vjobset.kb.io``); ``kuota.api.jobset`` holds the rules."""

from __future__ import annotations

from typing import Any, Final

from kuota.api import errors as e
from kuota.api.jobset import v1alpha2 as v
from kuota.api.names import is_dns1123_subdomain
from kuota.store import Invalid, clone
from kuota.store.protocol import Operation
from kuota.store.resources import JOB_SET

__all__ = ["JobSetDefaulting", "JobSetValidation"]

_KINDS: Final = frozenset({JOB_SET})


class JobSetDefaulting:
    kinds = _KINDS
    operations = frozenset({"CREATE"})
    status_writes = False

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        return v.default_jobset(clone(new))


class JobSetValidation:
    kinds = _KINDS
    operations = frozenset({"CREATE", "UPDATE"})
    validating = True
    status_writes = False

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        if op == "UPDATE" and old is not None:
            errs = v.validate_jobset_update(new, old)
        else:
            errs = [
                e.invalid("metadata.name", new.metadata.name, m)
                for m in (is_dns1123_subdomain(new.metadata.name) if new.metadata.name else [])
            ]
            errs += v.validate_jobset(new)
        if errs:
            raise Invalid(f'{v.KIND}.{v.GROUP} "{new.metadata.name}"', errs)
        return new
