"""Kueue's MultiKueue adapter for plain pods and pod groups
(``pod_multikueue_adapter.go``).

A pod has no ``managedBy``: once its Workload has a MultiKueue check it is
MultiKueue's (``IsJobManagedByKueue`` is always true), and the manager's pod
reconciler keeps it gated (``ShouldSkipLocalExecution``). The Workload's
owner is a pod; when that pod is in a group, every pod of the group is
synced. Each pod is copied to the worker as it is (its metadata for
creation, its spec with Kueue's scheduling gate: the worker's Kueue ungates
it once the copy of the Workload is admitted there), with the
prebuilt-workload and origin labels; once the copy exists, its status is
the manager pod's, but for the PodScheduled condition while the manager's
pod is gated and the worker's not yet scheduled (the manager's autoscaler
must not see an unschedulable pod). Deleting deletes the worker's copy of
every pod of the group."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kuota.api.k8s import corev1 as kc
from kuota.controllers.jobs.pod import podmeta as pm
from kuota.controllers.multikueue_adapter import (
    MultiKueueAdapter,
    clone_meta_for_remote,
    create_remote,
    delete_remote,
    mirror_status,
    origin_of,
)
from kuota.store import clone
from kuota.store.resources import POD

if TYPE_CHECKING:
    from kuota.controllers.multikueue.remote_cluster import RemoteCluster
    from kuota.runtime.manager import Manager

__all__ = ["PodMultiKueueAdapter", "pod_multikueue_adapter"]

_SCHEDULED = "PodScheduled"


def _condition(pod: Any, ctype: str) -> kc.PodCondition | None:
    conds = pod.status.conditions if pod.status is not None else None
    return next((c for c in conds or () if c.type == ctype), None)


def mirrored_status(local: Any, remote: Any) -> Any:
    """The manager pod's status: the worker's, but for the manager's
    PodScheduled condition while the manager's pod is gated and the
    worker's is not scheduled yet."""
    status = clone(remote.status) if remote.status is not None else kc.PodStatus()
    mine = _condition(local, _SCHEDULED)
    theirs = _condition(remote, _SCHEDULED)
    if pm.is_gated(local) and mine is not None and (theirs is None or theirs.status != "True"):
        conds = [c for c in status.conditions or () if c.type != _SCHEDULED]
        at = next((i for i, c in enumerate(status.conditions or ()) if c.type == _SCHEDULED), None)
        conds.insert(len(conds) if at is None else at, clone(mine))
        status.conditions = conds
    return status


class PodMultiKueueAdapter(MultiKueueAdapter):
    __slots__ = ()

    def _group(self, mgr: Manager, pod: Any) -> list[Any]:
        """The pod, or every pod of its group (the manager's)."""
        name = pm.group_name(pod)
        if not name:
            return [pod]
        return [
            p for p in mgr.informer(POD).list(pod.metadata.namespace) if pm.group_name(p) == name
        ]

    def sync_job(self, mgr: Manager, rc: RemoteCluster, job: Any, wl_name: str) -> bool:
        mine = rc.get(POD, f"{job.metadata.namespace}/{job.metadata.name}")
        if mine is not None and origin_of(mine) != rc.origin:
            return True  # not ours (ValidateRemoteObjectOwnership): left alone
        ok = True
        for local in self._group(mgr, job):
            ok &= self._sync_pod(mgr, rc, local, wl_name)
        return ok

    def _sync_pod(self, mgr: Manager, rc: RemoteCluster, local: Any, wl_name: str) -> bool:
        """``syncLocalPodWithRemote``."""
        m = local.metadata
        remote = rc.get(POD, f"{m.namespace}/{m.name}")
        if remote is None:
            meta = clone_meta_for_remote(m, wl_name, rc.origin, ids=self.ids)
            copy = kc.Pod(api_version="v1", kind="Pod", metadata=meta, spec=clone(local.spec))
            return create_remote(rc, copy)
        if m.deletion_timestamp is not None:
            return True  # the manager's pod is going: nothing to mirror
        want = mirrored_status(local, remote)
        mirror_status(mgr, local, want if want != local.status else None)
        return True

    def remove_remote(self, mgr: Manager, rc: RemoteCluster, ns: str, name: str) -> bool:
        """``DeleteRemoteObject``: the worker's pod, or the worker's copies of
        every pod of the manager's group."""
        remote = rc.get(POD, f"{ns}/{name}")
        if remote is None or origin_of(remote) != rc.origin:
            return True
        group = pm.group_name(remote)
        if not group:
            return delete_remote(rc, POD, ns, name)
        ok = True
        for p in mgr.informer(POD).list(ns):
            if pm.group_name(p) == group:
                ok &= delete_remote(rc, POD, ns, p.metadata.name)
        return ok


def pod_multikueue_adapter() -> MultiKueueAdapter:
    return PodMultiKueueAdapter("Pod", "v1", POD, None)
