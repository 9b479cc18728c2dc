"""The MultiKueue adapters a manager dispatches with
(``jobframework.GetMultiKueueAdapters``): those of the enabled integrations
that declare one (``Integration.multikueue``; each kind's adapter lives in
its integration package), keyed by the owner's apiVersion and kind."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

from kuota.api.features import GATES
from kuota.api.kueue.config import KueueConfig
from kuota.api.meta import OwnerReference
from kuota.controllers.jobs.integrations import INTEGRATIONS
from kuota.controllers.multikueue_adapter import MultiKueueAdapter

__all__ = ["Adapters", "MultiKueueAdapter", "adapter_for", "adapters_for"]

Adapters = Mapping[tuple[str, str], MultiKueueAdapter]


def adapters_for(config: KueueConfig | None) -> Adapters:
    """The adapters of the integrations the Configuration lists (of every
    integration without one): one only implied (the pod integration a
    StatefulSet's enables) has none (``GetMultiKueueAdapters`` takes
    ``integrations.frameworks`` as it is)."""
    names = {i.name for i in INTEGRATIONS}
    ids = GATES["WorkloadIdentifierAnnotations"].default
    if config is not None:
        names = set(config.integrations.frameworks)
        ids = config.gate("WorkloadIdentifierAnnotations")
    out: dict[tuple[str, str], MultiKueueAdapter] = {}
    for i in INTEGRATIONS:
        if i.name in names and i.multikueue is not None:
            a = replace(i.multikueue(), ids=ids)
            out[(a.api_version, a.kind)] = a
    return out


JOB_OWNER_GVK: Final = "kueue.x-k8s.io/job-owner-gvk"
JOB_OWNER_NAME: Final = "kueue.x-k8s.io/job-owner-name"


def adapter_for(adapters: Adapters, wl: Any) -> tuple[MultiKueueAdapter | None, Any | None]:
    """The adapter of the Workload's owner and that owner reference: the
    job-owner annotations first (a StatefulSet's or an LWS's Workload is
    owned by its pods too), else its controller, else its first owner."""
    ann = wl.metadata.annotations or {}
    gvk, name = ann.get(JOB_OWNER_GVK), ann.get(JOB_OWNER_NAME)
    if gvk and name:
        a = next((a for a in adapters.values() if a.gvk == gvk), None)
        if a is not None:
            return a, OwnerReference(api_version=a.api_version, kind=a.kind, name=name, uid="")
    refs = wl.metadata.owner_references or []
    ref = next((r for r in refs if r.controller), refs[0] if refs else None)
    if ref is None:
        return None, None
    return adapters.get((ref.api_version, ref.kind)), ref
