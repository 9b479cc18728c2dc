"""The MultiKueue adapters a manager dispatches with
(``jobframework.GetMultiKueueAdapters``): those of the enabled integrations
that declare one (``Integration.multikueue``; each kind's adapter lives in
its integration package), keyed by the owner's apiVersion and kind."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kuota.api.kueue.config import KueueConfig
from kuota.controllers.integrationmanager import enabled_frameworks
from kuota.controllers.jobs.integrations import INTEGRATIONS
from kuota.controllers.multikueue_adapter import MultiKueueAdapter

__all__ = ["Adapters", "MultiKueueAdapter", "adapter_for", "adapters_for"]

Adapters = Mapping[tuple[str, str], MultiKueueAdapter]


def adapters_for(config: KueueConfig | None) -> Adapters:
    """The adapters of the integrations the Configuration enables (of
    every integration without one)."""
    names = {i.name for i in INTEGRATIONS}
    if config is not None:
        names = set(enabled_frameworks(INTEGRATIONS, config.integrations.frameworks))
    out: dict[tuple[str, str], MultiKueueAdapter] = {}
    for i in INTEGRATIONS:
        if i.name in names and i.multikueue is not None:
            a = i.multikueue()
            out[(a.api_version, a.kind)] = a
    return out


def adapter_for(adapters: Adapters, wl: Any) -> tuple[MultiKueueAdapter | None, Any | None]:
    """The adapter of the Workload's owner (its controller, else its first
    owner), and that owner reference."""
    refs = wl.metadata.owner_references or []
    ref = next((r for r in refs if r.controller), refs[0] if refs else None)
    if ref is None:
        return None, None
    return adapters.get((ref.api_version, ref.kind)), ref
