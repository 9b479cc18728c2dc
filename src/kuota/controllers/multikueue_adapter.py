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
collects those of the enabled integrations.

Kinds without ``managedBy`` (plain pods and pod groups, StatefulSets,
LeaderWorkerSets) are always MultiKueue's once their Workload has its check
(their adapter's ``managed_by`` is None): the manager keeps their pods gated
(``ShouldSkipLocalExecution``), and their adapters override ``sync_job``,
``remove_remote`` and ``workload_keys`` (a pod group is many objects; an LWS
has a Workload per group, ``expected_workloads``/``workload_index``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Final

from kuota.api.kueue.multikueue_types import CONTROLLER_NAME as MULTIKUEUE_CONTROLLER
from kuota.api.kueue.multikueue_types import ORIGIN_LABEL, ORIGIN_UID_ANNOTATION
from kuota.api.meta import ObjectMeta
from kuota.controllers.jobframework import PREBUILT_WORKLOAD
from kuota.store import AlreadyExists, NotFound, StoreError, clone
from kuota.store.protocol import ResourceType

if TYPE_CHECKING:
    from kuota.controllers.multikueue.remote_cluster import RemoteCluster
    from kuota.runtime.manager import Manager

__all__ = [
    "ManagedBy",
    "MultiKueueAdapter",
    "clone_meta_for_remote",
    "create_remote",
    "delete_remote",
    "generic",
    "is_remote_copy",
    "mirror_status",
    "origin_of",
    "owner_uid",
]


def _warn(event: str, **kw: Any) -> None:
    # structlog imported on a failed write only: `kuota get` imports this
    # module (through the pod integration's adapter) and must stay light.
    import structlog

    structlog.get_logger("kuota.multikueue").warning(event, **kw)


_LABEL_VALUE_MAX: Final = 63


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


def clone_meta_for_remote(
    meta: ObjectMeta,
    wl_name: str | None,
    origin: str,
    origin_uid: str | None = None,
    *,
    ids: bool = False,
) -> ObjectMeta:
    """``CloneObjectMetaForCreation`` + ``SetMultiKueueMeta`` (the prebuilt
    Workload's name an annotation under WorkloadIdentifierAnnotations
    (``ids``) or when too long for a label: SetPrebuiltWorkloadName);
    ``wl_name`` None: no prebuilt Workload (an LWS's copy); ``origin_uid``:
    the manager's uid, for a kind whose Workload names hash it."""
    labels = dict(meta.labels or {})
    annotations = dict(meta.annotations or {})
    if wl_name is not None:
        if ids or len(wl_name) > _LABEL_VALUE_MAX:
            annotations[PREBUILT_WORKLOAD] = wl_name
        else:
            labels[PREBUILT_WORKLOAD] = wl_name
    labels[ORIGIN_LABEL] = origin
    if origin_uid is not None:
        annotations[ORIGIN_UID_ANNOTATION] = origin_uid
    return ObjectMeta(
        name=meta.name,
        namespace=meta.namespace,
        labels=labels,
        annotations=annotations or None,
    )


def origin_of(obj: Any) -> str:
    return (obj.metadata.labels or {}).get(ORIGIN_LABEL, "")


def is_remote_copy(obj: Any) -> bool:
    """A worker's copy of a manager's job (it has the origin label)."""
    return ORIGIN_LABEL in (obj.metadata.labels or {})


def owner_uid(obj: Any) -> str:
    """``GetOwnerUID`` (StatefulSet, LeaderWorkerSet): the uid its Workload
    names hash: a worker's copy's is the manager's (its origin-uid
    annotation), so the copy of the Workload dispatched is its Workload."""
    m = obj.metadata
    if is_remote_copy(obj):
        uid = (m.annotations or {}).get(ORIGIN_UID_ANNOTATION)
        if uid is not None:
            return uid
    return m.uid


def create_remote(rc: RemoteCluster, obj: Any) -> bool:
    """A create in the worker: False when it failed (the caller retries)."""
    try:
        rc.store.create(obj)
    except AlreadyExists:
        return True  # made by an earlier round; its watch event is on the way
    except StoreError as err:
        m = obj.metadata
        _warn(
            "multikueue write failed",
            cluster=rc.name,
            object=f"{m.namespace}/{m.name}",
            error=str(err),
        )
        return False
    return True


def delete_remote(rc: RemoteCluster, rtype: ResourceType, ns: str, name: str) -> bool:
    """A delete in the worker (gone already is done): False when it failed."""
    try:
        rc.store.delete(rtype, ns, name)
    except NotFound:
        pass
    except StoreError as err:
        _warn("multikueue delete failed", cluster=rc.name, name=name, error=str(err))
        return False
    rc.caches[rtype].pop(f"{ns}/{name}", None)
    return True


@dataclass(frozen=True, slots=True)
class MultiKueueAdapter:
    """The adapter of one kind (its GVK, its store resource, its managedBy:
    None for a kind without one, always MultiKueue's)."""

    kind: str
    api_version: str
    rtype: ResourceType
    managed_by: ManagedBy | None
    # WorkloadIdentifierAnnotations: where a copy names its prebuilt Workload.
    # Only the pod-based kinds' copies honour it: kuota's job reconciler
    # reads the prebuilt-workload label alone (Kueue's, with the gate on,
    # the annotation first).
    ids: bool = False
    # MultiKueueMultiWorkloadAdapter: a job with a Workload per component
    multi_workload: ClassVar[bool] = False

    @property
    def gvk(self) -> str:
        """``schema.GroupVersionKind.String()``, as the job-owner-gvk annotation has it."""
        group, _, version = self.api_version.rpartition("/")
        return f"{group}/{version}, Kind={self.kind}"

    def unmanaged_reason(self, job: Any) -> str | None:
        """``IsJobManagedByKueue``: None when MultiKueue manages the job."""
        if self.managed_by is None:
            return None
        by = self.managed_by.get(job) or ""
        if by == MULTIKUEUE_CONTROLLER:
            return None
        return f'Expecting {self.managed_by.wire} to be "{MULTIKUEUE_CONTROLLER}" not "{by}"'

    def remote_copy(self, local: Any, wl_name: str, origin: str) -> Any:
        """``SyncJob``'s copy for the worker: metadata for creation, the spec
        as it is, no status, ``managedBy`` cleared."""
        out = clone(local)
        out.metadata = clone_meta_for_remote(local.metadata, wl_name, origin, ids=self.ids)
        out.status = None
        if self.managed_by is not None:
            self.managed_by.set(out, None)
        return self.prepare_copy(out)

    def prepare_copy(self, copy: Any) -> Any:
        """A kind's own change to its worker copy (none by default)."""
        return copy

    def status_update(self, local: Any, remote: Any, now: datetime) -> Any | None:
        """The manager job's new status (the remote's, as it is), or None
        when it stays."""
        return remote.status if remote.status != local.status else None

    def sync_job(self, mgr: Manager, rc: RemoteCluster, job: Any, wl_name: str) -> bool:
        """``SyncJob``: the job made in the worker, else its status copied
        back. False when a write to the worker failed (retried); a write to
        the manager that conflicts raises (store errors)."""
        key = f"{job.metadata.namespace}/{job.metadata.name}"
        remote = rc.get(self.rtype, key)
        if remote is not None:
            if origin_of(remote) != rc.origin:
                return True  # not ours (ValidateRemoteObjectOwnership): left alone
            mirror_status(mgr, job, self.status_update(job, remote, mgr.clock.now()))
            return True
        return create_remote(rc, self.remote_copy(job, wl_name, rc.origin))

    def remove_remote(self, mgr: Manager, rc: RemoteCluster, ns: str, name: str) -> bool:
        """``DeleteRemoteObjectIfOwned``: the worker's copy, when this manager made it."""
        remote = rc.get(self.rtype, f"{ns}/{name}")
        if remote is None or origin_of(remote) != rc.origin:
            return True
        return delete_remote(rc, self.rtype, ns, name)

    def workload_keys(self, obj: Any) -> list[str]:
        """``WorkloadKeysFor``: the Workloads (namespace/name) a worker's copy
        belongs to (its prebuilt-workload label)."""
        m = obj.metadata
        name = (m.labels or {}).get(PREBUILT_WORKLOAD) or (m.annotations or {}).get(
            PREBUILT_WORKLOAD, ""
        )
        return [f"{m.namespace}/{name}"] if name else []

    def expected_workloads(self, job: Any) -> int | None:
        """``MultiKueueMultiWorkloadAdapter.GetExpectedWorkloadCount``: None
        for a kind with one Workload per job."""
        return None

    def workload_index(self, wl: Any) -> int:
        """``GetWorkloadIndex``: -1 for a kind with one Workload per job."""
        return -1


def mirror_status(mgr: Manager, obj: Any, status: Any | None) -> None:
    """The manager object's status written (None: it stays). A conflict or
    a vanished object raises: the workload controller tries again."""
    if status is None:
        return
    new = clone(obj)
    new.status = status
    mgr.store.update_status(new)


def generic(job_adapter: Callable[[], Any]) -> Callable[[], MultiKueueAdapter]:
    """An integration's ``multikueue`` for a kind that follows the pattern
    as it is: its job adapter's GVK, resource and ``managed_by_field``."""

    def make() -> MultiKueueAdapter:
        a = job_adapter()
        return MultiKueueAdapter(a.kind, a.api_version, a.rtype, a.managed_by_field)

    return make
