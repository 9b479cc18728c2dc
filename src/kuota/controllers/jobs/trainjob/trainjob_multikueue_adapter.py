"""Kueue's MultiKueue adapter for the TrainJob (``trainjob_multikueue_adapter.go``):
the worker's copy drops Kueue's runtime patch, so that the worker's webhook
adds its own (its admission's node selectors and tolerations go there)."""

from __future__ import annotations

from typing import Any

from kuota.api.trainer import trainer_types as t
from kuota.controllers.jobs.trainjob.trainjob_adapter import TrainJobAdapter
from kuota.controllers.multikueue_adapter import MultiKueueAdapter

__all__ = ["TrainJobMultiKueueAdapter", "trainjob_multikueue_adapter"]


class TrainJobMultiKueueAdapter(MultiKueueAdapter):
    __slots__ = ()

    def prepare_copy(self, copy: Any) -> Any:
        patches = [p for p in copy.spec.runtime_patches or () if p.manager != t.KUEUE_PATCH_MANAGER]
        copy.spec.runtime_patches = patches or None
        return copy


def trainjob_multikueue_adapter() -> MultiKueueAdapter:
    a = TrainJobAdapter
    return TrainJobMultiKueueAdapter(a.kind, a.api_version, a.rtype, a.managed_by_field)
