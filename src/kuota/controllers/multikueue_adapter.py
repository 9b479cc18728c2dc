"""jobframework's ``MultiKueueAdapter`` (``pkg/controller/jobframework``): what
MultiKueue needs of one job kind to run a manager's job in a worker.

Every kind Kueue dispatches follows one pattern (``SyncJob``): the worker's
copy is the manager's job with its metadata cloned for creation
(``CloneObjectMetaForCreation``: name, namespace, labels, annotations), the
prebuilt-workload and origin labels set (``SetMultiKueueMeta``) and its
``managedBy`` cleared, so that the worker's own controller runs it; once the
copy exists its status is written back to the manager's job as it is. A kind
differs only in where its ``managedBy`` lives and in the odd field its copy
drops (a kind's subclass says so). Each integration declares its adapter
(``Integration.multikueue``); ``kuota.controllers.multikueue.job_adapters``
collects those of the enabled integrations."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kuota.api.kueue.multikueue_types import CONTROLLER_NAME as MULTIKUEUE_CONTROLLER
from kuota.api.kueue.multikueue_types import ORIGIN_LABEL
from kuota.api.meta import ObjectMeta
from kuota.controllers.jobframework import PREBUILT_WORKLOAD
from kuota.store import clone
from kuota.store.protocol import ResourceType

__all__ = ["ManagedBy", "MultiKueueAdapter", "clone_meta_for_remote", "generic"]


@dataclass(frozen=True, slots=True)
class ManagedBy:
    """Where a kind keeps ``managedBy`` (a path of attributes from the
    object) and the value that still means the kind's own controller
    (``CanDefaultManagedBy``: unset, or that value)."""

    path: tuple[str, ...]  # attributes, e.g. ("spec", "run_policy", "managed_by")
    own: str  # the kind's own controller name
    wire: str = "spec.managedBy"  # as IsJobManagedByKueue's message names it

    def get(self, job: Any) -> str | None:
        obj = job
        for attr in self.path:
            obj = getattr(obj, attr, None)
            if obj is None:
                return None
        return str(obj)

    def set(self, job: Any, value: str | None) -> None:
        """In place: the caller owns ``job`` (a clone)."""
        obj = job
        for attr in self.path[:-1]:
            obj = getattr(obj, attr)
        setattr(obj, self.path[-1], value)

    def can_default(self, job: Any) -> bool:
        return self.get(job) in (None, self.own)


def clone_meta_for_remote(meta: ObjectMeta, wl_name: str, origin: str) -> ObjectMeta:
    """``CloneObjectMetaForCreation`` + ``SetMultiKueueMeta``."""
    labels = dict(meta.labels or {})
    labels[PREBUILT_WORKLOAD] = wl_name
    labels[ORIGIN_LABEL] = origin
    return ObjectMeta(
        name=meta.name,
        namespace=meta.namespace,
        labels=labels,
        annotations=dict(meta.annotations) if meta.annotations else None,
    )


@dataclass(frozen=True, slots=True)
class MultiKueueAdapter:
    """The adapter of one kind (its GVK, its store resource, its managedBy)."""

    kind: str
    api_version: str
    rtype: ResourceType
    managed_by: ManagedBy

    def unmanaged_reason(self, job: Any) -> str | None:
        """``IsJobManagedByKueue``: None when MultiKueue manages the job."""
        by = self.managed_by.get(job) or ""
        if by == MULTIKUEUE_CONTROLLER:
            return None
        return f'Expecting {self.managed_by.wire} to be "{MULTIKUEUE_CONTROLLER}" not "{by}"'

    def remote_copy(self, local: Any, wl_name: str, origin: str) -> Any:
        """``SyncJob``'s copy for the worker: metadata for creation, the spec
        as it is, no status, ``managedBy`` cleared."""
        out = clone(local)
        out.metadata = clone_meta_for_remote(local.metadata, wl_name, origin)
        out.status = None
        self.managed_by.set(out, None)
        return self.prepare_copy(out)

    def prepare_copy(self, copy: Any) -> Any:
        """A kind's own change to its worker copy (none by default)."""
        return copy

    def status_update(self, local: Any, remote: Any, now: datetime) -> Any | None:
        """The manager job's new status (the remote's, as it is), or None
        when it stays."""
        return remote.status if remote.status != local.status else None


def generic(job_adapter: Callable[[], Any]) -> Callable[[], MultiKueueAdapter]:
    """An integration's ``multikueue`` for a kind that follows the pattern
    as it is: its job adapter's GVK, resource and ``managed_by_field``."""

    def make() -> MultiKueueAdapter:
        a = job_adapter()
        return MultiKueueAdapter(a.kind, a.api_version, a.rtype, a.managed_by_field)

    return make
