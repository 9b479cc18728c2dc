"""The training operator's webhooks, as store admission hooks: its defaults
(the scheme's defaulting, on create and update) and each framework's
validating webhook (``validator.<kind>.training-operator.kubeflow.org``);
``kuota.api.kubeflow`` holds the rules."""

from __future__ import annotations

from typing import Any, Final

from kuota.api.kubeflow import v1
from kuota.cluster.kubeflow.training_operator import RTYPES
from kuota.store import Invalid, clone
from kuota.store.protocol import Operation

__all__ = ["TrainingJobDefaulting", "TrainingJobValidation"]

_KINDS: Final = frozenset(RTYPES.values())


class TrainingJobDefaulting:
    kinds = _KINDS
    operations = frozenset({"CREATE", "UPDATE"})
    status_writes = False

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        return v1.default_job(clone(new))


class TrainingJobValidation:
    kinds = _KINDS
    operations = frozenset({"CREATE", "UPDATE"})
    validating = True
    status_writes = False

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        if op == "UPDATE" and old is not None:
            errs = v1.validate_job_update(new, old)
        else:
            errs = v1.validate_job(new)
        if errs:
            raise Invalid(f'{new.kind}.{v1.GROUP} "{new.metadata.name}"', errs)
        return new
