"""Kueue's TrainJob integration (framework ``trainer.kubeflow.org/trainjob``,
``pkg/controller/jobs/trainjob``): an adapter for the generic job reconciler
and the webhook's default (Kueue's empty runtime patch on every new
TrainJob). Kubeflow Trainer's controller, which makes the JobSet, runs in the
embedded cluster (``kuota.cluster.trainer``) over the JobSet operator."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kuota.controllers.integration import Integration, Wiring
from kuota.controllers.jobs.trainjob.trainjob_adapter import (
    TrainJobAdapter,
    empty_patch,
    kueue_patch,
)
from kuota.controllers.jobs.trainjob.trainjob_multikueue_adapter import (
    trainjob_multikueue_adapter,
)
from kuota.store import clone
from kuota.store.protocol import Operation
from kuota.store.resources import TRAIN_JOB

__all__ = ["INTEGRATION"]


class KueueRuntimePatch:
    """The TrainJob webhook's Default: Kueue's (empty) runtime patch added."""

    kinds = frozenset({TRAIN_JOB})
    operations = ("CREATE",)
    status_writes = False

    def __init__(self, parents: Any) -> None:
        self.parents = parents

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        if op != "CREATE" or not self.parents.watched(new) or kueue_patch(new) is not None:
            return new
        new = clone(new)
        new.spec.runtime_patches = [*(new.spec.runtime_patches or []), empty_patch()]
        return new


def _webhooks(w: Wiring) -> Sequence[Any]:
    return [KueueRuntimePatch(w.parents)]


INTEGRATION = Integration(
    "trainer.kubeflow.org/trainjob",
    adapter=TrainJobAdapter,
    webhooks=_webhooks,
    multikueue=trainjob_multikueue_adapter,
)
