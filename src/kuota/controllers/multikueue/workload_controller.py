"""Kueue's MultiKueue workload reconciler (``multikueue/workload.go``).

For a Workload of the manager whose ClusterQueue requires a check of
controller ``kueue.x-k8s.io/multikueue``, once it holds quota there:

* the dispatcher nominates workers (AllAtOnce: every connected worker of
  the check's MultiKueueConfig; Incremental: ``stepSize`` more of them, in
  the config's order, every five minutes) and a copy of the Workload is
  created in each, labelled with the manager's origin;
* the first copy a worker admits wins: the other copies are deleted, the
  job is created in that worker (``managedBy`` dropped, the prebuilt
  Workload named), the check turns Ready with ``status.clusterName`` set,
  and the manager's job, unsuspended, runs nowhere in the manager (its
  ``managedBy`` keeps the manager's own job controller away);
* the remote job's status is written to the manager's job, and the remote
  Workload's Finished condition finishes the manager's;
* a worker that stops answering for ``workerLostTimeout`` while it runs the
  workload, or whose copy is gone or evicted, sets the check to Retry: the
  manager evicts the workload and dispatches it again;
* a Workload that finishes, loses its quota or is deleted has its remote
  objects deleted, and every ``gcInterval`` the remote objects of this
  origin whose Workload is gone from the manager are deleted (Kueue's
  garbage collector).
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any, Final

import structlog

from kuota.api.conditions import find_condition
from kuota.api.kueue import types as kt
from kuota.api.kueue.multikueue_types import CONTROLLER_NAME, ORIGIN_LABEL
from kuota.api.meta import ObjectMeta
from kuota.controllers.jobframework import finish_workload
from kuota.controllers.multikueue.check_activity import config_for
from kuota.controllers.multikueue.job_adapters import (
    JOB_OWNER_GVK,
    MultiKueueAdapter,
    adapter_for,
)
from kuota.controllers.multikueue.settings import DISPATCHER_INCREMENTAL
from kuota.controllers.multikueue_adapter import create_remote, delete_remote
from kuota.quota.workload import has_quota_reservation, is_evicted, is_finished
from kuota.runtime.informer import key_of
from kuota.store import Conflict, NotFound, StoreError, clone
from kuota.store.protocol import EventType
from kuota.store.resources import ADMISSION_CHECK, MULTIKUEUE_CONFIG, WORKLOAD

if TYPE_CHECKING:
    from kuota.controllers.multikueue.cluster_controller import ClusterController
    from kuota.controllers.multikueue.remote_cluster import RemoteCluster
    from kuota.controllers.multikueue.settings import MultiKueueSettings
    from kuota.runtime.manager import Manager

__all__ = ["MultiKueueWorkloads"]

log = structlog.get_logger("kuota.multikueue")

COMPONENT: Final = "kueue-admission"
GC: Final = "#gc"
RETRY_WRITE: Final = timedelta(seconds=1)  # a worker's write failed: try again
INCREMENTAL_ROUND: Final = timedelta(minutes=5)


class MultiKueueWorkloads:
    name = "multikueue-workload"

    def __init__(self, settings: MultiKueueSettings, clusters: ClusterController) -> None:
        self.settings = settings
        self.clusters = clusters
        self._mgr: Manager | None = None
        # Kueue's deletedWlCache: what a deleted Workload's remote objects were.
        self._owners: dict[str, tuple[MultiKueueAdapter, str]] = {}
        self._gc_armed = False
        self._rounds: dict[str, datetime] = {}  # the Incremental dispatcher's round starts
        clusters.on_news.append(self._on_news)

    def setup(self, mgr: Manager) -> None:
        self._mgr = mgr
        self._wls = mgr.informer(WORKLOAD)
        self._checks = mgr.informer(ADMISSION_CHECK)
        self._configs = mgr.informer(MULTIKUEUE_CONFIG)
        for a in self.settings.adapters.values():
            jobs = mgr.informer(a.rtype)
            if a.managed_by is not None:  # Kueue watches no local pods, sets or LWSs
                jobs.on_change(partial(self._on_job, a))
        self._wls.on_change(self._on_workload)
        self._checks.on_change(self._on_check)
        self._configs.on_change(self._on_config)

    @property
    def mgr(self) -> Manager:
        assert self._mgr is not None
        return self._mgr

    # ------------------------------------------------------------ events
    def _on_workload(self, etype: EventType, wl: Any, old: Any | None) -> None:
        key = key_of(wl)
        if etype == "DELETED":
            if key in self._owners:
                self.mgr.enqueue(self.name, key)
            return
        if self._mk_state(wl) is not None or key in self._owners:
            self.mgr.enqueue(self.name, key)
        if _sibling_news(etype, wl, old):
            # enqueueComponentWorkloads: a component came, or was placed on a
            # worker: its siblings may go on (Kueue enqueues them on every
            # nomination; on its news is enough, and does not spin).
            for m in self._components(wl) or ():
                if m.metadata.name != wl.metadata.name and self._mk_state(m) is not None:
                    self.mgr.enqueue(self.name, key_of(m))

    def _on_check(self, etype: EventType, ac: Any, old: Any | None) -> None:
        """``admissionCheckHandler``: the workloads of a MultiKueue check."""
        was = old is not None and old.spec.controller_name == CONTROLLER_NAME
        if ac.spec.controller_name == CONTROLLER_NAME or was:
            self._workloads_of({ac.metadata.name})

    def _on_config(self, etype: EventType, cfg: Any, old: Any | None) -> None:
        """``configHandler``: a config's clusters changed or it went."""
        if etype == "MODIFIED" and old is not None and old.spec.clusters == cfg.spec.clusters:
            return
        checks = {
            ac.metadata.name
            for ac in self._checks.list()
            if ac.spec.parameters is not None and ac.spec.parameters.name == cfg.metadata.name
        }
        self._workloads_of(checks)

    def _workloads_of(self, checks: set[str]) -> None:
        for wl in self._wls.list():
            states = wl.status.admission_checks if wl.status else None
            if any(s.name in checks for s in states or ()):
                self.mgr.enqueue(self.name, key_of(wl))

    def _on_job(self, a: MultiKueueAdapter, etype: EventType, job: Any, old: Any | None) -> None:
        if a.managed_by is None or a.managed_by.get(job) != CONTROLLER_NAME:
            return
        for wl in self._wls.list(job.metadata.namespace):
            if any(r.uid == job.metadata.uid for r in wl.metadata.owner_references or ()):
                self.mgr.enqueue(self.name, key_of(wl))

    def _on_news(self, keys: set[str], flipped: str | None) -> None:
        if self._mgr is None:
            return
        for k in keys:
            self.mgr.enqueue(self.name, k)
        if flipped is not None:  # a worker came or went: every dispatch may change
            for k in self._owners:
                self.mgr.enqueue(self.name, k)
        if not self._gc_armed and self.settings.gc_interval > timedelta(0):
            self._gc_armed = True
            self.mgr.enqueue_after(self.name, GC, self.settings.gc_interval)

    def _mk_state(self, wl: Any) -> kt.AdmissionCheckState | None:
        """``GetMultiKueueAdmissionCheck``: the Workload's check of this controller."""
        for s in (wl.status.admission_checks if wl.status else None) or ():
            ac = self._checks.get(s.name)
            if ac is not None and ac.spec.controller_name == CONTROLLER_NAME:
                return s
        return None

    # ------------------------------------------------------------ reconcile
    def reconcile(self, key: str) -> timedelta | None:
        if key == GC:
            return self._collect_garbage()
        wl: kt.Workload | None = self._wls.get(key)
        if wl is None or wl.metadata.deletion_timestamp is not None:
            owner = self._owners.get(key)
            if owner is None:
                return None
            failed = False
            for rc in self._connected():
                failed |= not self._remove_remote(rc, key, owner[0], owner[1])
            if failed:
                return RETRY_WRITE
            self._owners.pop(key, None)
            return None
        acs = self._mk_state(wl)
        if acs is None or acs.state == "Rejected":
            return None
        adapter, ref = adapter_for(self.settings.adapters, wl)
        if adapter is None or ref is None:
            what = f'"{_group_kind(ref)}"' if ref is not None else ""
            msg = f"No multikueue adapter found for owner kind {what}".rstrip()
            if ref is None:
                msg = "No multikueue adapter found"
            self._set_state(wl, acs, "Rejected", msg)
            return None
        job = self.mgr.informer(adapter.rtype).get(f"{wl.metadata.namespace}/{ref.name}")
        if job is None:
            return None
        why = adapter.unmanaged_reason(job)
        if why is not None:
            self._set_state(wl, acs, "Rejected", f"The owner is not managed by Kueue: {why}")
            return None
        self._owners[key] = (adapter, ref.name)
        return self._reconcile_group(key, wl, acs, adapter, job)

    def _connected(self) -> list[RemoteCluster]:
        return [rc for rc in self.clusters.remotes.values() if rc.connected]

    def _group(
        self, wl: kt.Workload, acs: kt.AdmissionCheckState
    ) -> tuple[dict[str, RemoteCluster], list[str], list[str]]:
        """``remoteClientsForAC``: the config's connected workers, the
        others, and the config's order of clusters."""
        ac = self._checks.get(acs.name)
        cfg, _ = config_for(ac, self._configs) if ac is not None else (None, "")
        names = list(cfg.spec.clusters) if cfg is not None else []
        available: dict[str, RemoteCluster] = {}
        unavailable: list[str] = []
        for n in names:
            rc = self.clusters.remotes.get(n)
            if rc is not None and rc.connected:
                available[n] = rc
            else:
                unavailable.append(n)
        return available, unavailable, names

    def _reconcile_group(
        self,
        key: str,
        wl: kt.Workload,
        acs: kt.AdmissionCheckState,
        adapter: MultiKueueAdapter,
        job: Any,
    ) -> timedelta | None:
        available, unavailable, order = self._group(wl, acs)
        remotes = {n: rc.get(WORKLOAD, key) for n, rc in available.items()}
        job_name = job.metadata.name
        failed = False

        if is_finished(wl) or not has_quota_reservation(wl):
            self._rounds.pop(key, None)
            for rc in available.values():
                failed |= not self._remove_remote(rc, key, adapter, job_name)
            if failed:
                return RETRY_WRITE
            return self.settings.worker_lost_timeout if unavailable else None

        finished, at = _best_match(remotes, "Finished")
        if finished is not None:
            self._sync_job(available[at], adapter, job, key)
            finish_workload(self.mgr, wl, finished.reason, finished.message)
            return None

        evicted, at = _best_match(remotes, "Evicted")
        if evicted is not None:
            if is_evicted(wl):
                self._sync_job(available[at], adapter, job, key)
                return None
            if acs.state == "Ready":
                admitting = wl.status.cluster_name if wl.status is not None else None
                msg = (
                    f'Workload evicted on worker cluster: "{admitting or at}", '
                    f'resetting for re-admission. Previously: "{acs.state}"'
                )
                self._set_state(wl, acs, "Retry", msg, plain=True)
                return None

        for n, remote in list(remotes.items()):
            if remote is not None and remote.spec != wl.spec:
                # isRemoteSpecOutOfSync: a stale copy goes (made again below).
                failed |= not self._remove_remote(available[n], key, adapter, job_name)
                remotes[n] = None

        admitted, at = _best_match(remotes, "Admitted")
        if admitted is None and acs.state == "Ready":
            assert wl.status is not None
            admitting = wl.status.cluster_name or ""
            if admitting and admitting in unavailable:
                lost = self.clusters.remotes.get(admitting)
                since = lost.lost_since if lost is not None else None
                now = self.mgr.clock.now()
                left = self.settings.worker_lost_timeout - (now - (since or now))
                if left > timedelta(0):
                    return left
                self._set_state(wl, acs, "Retry", "Admitting remote lost")
            elif not admitting:
                self._set_state(
                    wl,
                    acs,
                    "Retry",
                    "Admission check is Ready but no admitting cluster is recorded; "
                    "this is unexpected, please report it",
                )
            else:
                self._set_state(wl, acs, "Retry", "Admitting remote no longer exists")
            return None

        if admitted is not None:
            for n, remote in remotes.items():
                if remote is not None and n != at:
                    failed |= not self._remove_remote(available[n], key, adapter, job_name)
            if not self._sync_job(available[at], adapter, job, key):
                return RETRY_WRITE
            topology = _needs_delayed_topology_update(wl, remotes[at])
            if acs.state != "Ready" or topology:
                self._admitted_on(wl, acs, at, remotes[at])
            return RETRY_WRITE if failed else self.settings.worker_lost_timeout

        others = wl.status.admission_checks if wl.status is not None else None
        if any(s.state != "Ready" for s in others or () if s.name != acs.name):
            return None  # allNonMKAdmissionChecksReady
        members = self._components(wl)
        if members is not None:
            expected = adapter.expected_workloads(job)
            if expected is not None and len(members) < expected:
                return None  # allExpectedWorkloadsExist: the rest are on the way
            target = _components_cluster(wl, members)
            if target is not None:
                return self._sync_to_single(key, wl, available, target, adapter, job_name)
            if not _is_primary(wl, adapter, members):
                return None  # the primary component nominates
        return self._nominate(key, wl, available, order, adapter, job_name) or (
            RETRY_WRITE if failed else None
        )

    def _components(self, wl: kt.Workload) -> list[kt.Workload] | None:
        """``listComponentWorkloads``: the Workloads of the same job owner (the
        owner the job-owner-gvk annotation names), or None without it."""
        gvk = (wl.metadata.annotations or {}).get(JOB_OWNER_GVK)
        if not gvk:
            return None
        uid = next(
            (
                r.uid
                for r in wl.metadata.owner_references or ()
                if f"{_group_version(r.api_version)}, Kind={r.kind}" == gvk
            ),
            "",
        )
        if not uid:
            return None
        return [
            w
            for w in self._wls.list(wl.metadata.namespace)
            if any(r.uid == uid for r in w.metadata.owner_references or ())
        ]

    def _sync_to_single(
        self,
        key: str,
        wl: kt.Workload,
        available: dict[str, RemoteCluster],
        target: str,
        adapter: MultiKueueAdapter,
        job_name: str,
    ) -> timedelta | None:
        """``syncToSingleCluster``: a component goes where its siblings went."""
        assert wl.status is not None
        if target not in available:
            log.info("multikueue component's worker not available", workload=key, cluster=target)
            return RETRY_WRITE
        if target not in (wl.status.nominated_cluster_names or ()):
            new = clone(wl)
            assert new.status is not None
            new.status.nominated_cluster_names = [target]
            try:
                wl = self.mgr.store.update_status(new)
            except (Conflict, NotFound):
                return timedelta(0)
        failed = self._copies_on(key, wl, available, (target,), adapter, job_name)
        return RETRY_WRITE if failed else None

    # ------------------------------------------------------------ dispatching
    def _nominate(
        self,
        key: str,
        wl: kt.Workload,
        available: dict[str, RemoteCluster],
        order: list[str],
        adapter: MultiKueueAdapter,
        job_name: str,
    ) -> timedelta | None:
        assert wl.status is not None
        requeue: timedelta | None = None
        if self.settings.dispatcher == DISPATCHER_INCREMENTAL:
            nominated, requeue = self._incremental(wl, available, order)
        else:
            nominated = sorted(available)
        if list(wl.status.nominated_cluster_names or ()) != nominated:
            new = clone(wl)
            assert new.status is not None
            new.status.nominated_cluster_names = nominated or None
            try:
                wl = self.mgr.store.update_status(new)
            except (Conflict, NotFound):
                return timedelta(0)
        failed = self._copies_on(key, wl, available, nominated, adapter, job_name)
        return RETRY_WRITE if failed else requeue

    def _copies_on(
        self,
        key: str,
        wl: kt.Workload,
        available: dict[str, RemoteCluster],
        targets: Collection[str],
        adapter: MultiKueueAdapter,
        job_name: str,
    ) -> bool:
        """The Workload's copy created on each target worker and removed from
        the others; whether a write failed."""
        failed = False
        for n, rc in available.items():
            remote = rc.get(WORKLOAD, key)
            if n in targets:
                if remote is None:
                    failed |= not self._create(rc, _clone_for_create(wl, rc.origin))
            elif remote is not None:
                failed |= not self._remove_remote(rc, key, adapter, job_name)
        return failed

    def _incremental(
        self, wl: kt.Workload, available: dict[str, RemoteCluster], order: list[str]
    ) -> tuple[list[str], timedelta | None]:
        """Kueue's Incremental dispatcher (``incrementaldispatcher.go``): every
        five minutes ``stepSize`` more of the config's workers are nominated
        (in the config's order, or by name without
        MultiKueueIncrementalDispatcherRespectConfigOrder), while none has
        admitted the workload."""
        assert wl.status is not None
        key = key_of(wl)
        now = self.mgr.clock.now()
        current = list(wl.status.nominated_cluster_names or ())
        start = self._rounds.get(key)
        if start is not None and now - start <= INCREMENTAL_ROUND:
            return current, INCREMENTAL_ROUND - (now - start)
        rest = [n for n in order if n not in current]
        if not self.settings.respect_order:
            rest.sort()
        if not rest:
            return current, None
        self._rounds[key] = now
        return current + rest[: self.settings.step_size], INCREMENTAL_ROUND

    def _admitted_on(
        self, wl: kt.Workload, acs: kt.AdmissionCheckState, cluster: str, remote: kt.Workload
    ) -> None:
        """``syncAdmittingRemoteState``: the check Ready, and the delayed
        topology requests the worker assigned marked Ready
        (``updateDelayedTopologyRequest``), in one write."""
        new = clone(wl)
        assert new.status is not None
        msg = f'The workload was admitted on "{cluster}"'
        _update_delayed_topology_request(new, remote)
        check = acs.state != "Ready"
        if check:
            new.status.admission_checks = [
                _with_state(s, "Ready", msg, self.mgr.clock.now()) if s.name == acs.name else s
                for s in new.status.admission_checks or ()
            ]
            new.status.cluster_name = cluster
            new.status.nominated_cluster_names = None
        try:
            written = self.mgr.store.update_status(new)
        except (Conflict, NotFound):
            self.mgr.enqueue(self.name, key_of(wl))
            return
        if check:
            self.mgr.recorder.event(written, "Normal", "MultiKueue", msg, COMPONENT)

    def _set_state(
        self,
        wl: kt.Workload,
        acs: kt.AdmissionCheckState,
        state: str,
        message: str,
        *,
        plain: bool = False,
    ) -> None:
        """``updateACS``: the check's new state, saying what it was."""
        if not plain:
            message = f'{message}, Previously: "{acs.state}"'
        new = clone(wl)
        assert new.status is not None
        now = self.mgr.clock.now()
        new.status.admission_checks = [
            _with_state(s, state, message, now) if s.name == acs.name else s
            for s in new.status.admission_checks or ()
        ]
        try:
            written = self.mgr.store.update_status(new)
        except (Conflict, NotFound):
            self.mgr.enqueue(self.name, key_of(wl))
            return
        if state == "Retry":
            self.mgr.recorder.event(written, "Normal", "MultiKueue", message, COMPONENT)

    # ------------------------------------------------------------ remote objects
    def _sync_job(self, rc: RemoteCluster, adapter: MultiKueueAdapter, job: Any, key: str) -> bool:
        """``SyncJob``: the job made in the worker, else its status copied back."""
        try:
            return adapter.sync_job(self.mgr, rc, job, key.split("/", 1)[1])
        except (Conflict, NotFound):
            self.mgr.enqueue(self.name, key)  # the manager's object changed meanwhile
            return True

    def _create(self, rc: RemoteCluster, obj: Any) -> bool:
        return create_remote(rc, obj)

    def _remove_remote(
        self, rc: RemoteCluster, key: str, adapter: MultiKueueAdapter | None, job_name: str
    ) -> bool:
        """``RemoveRemoteObjects``: the job (when this manager made it), then the
        Workload, its finalizer taken off first."""
        ns = key.split("/", 1)[0]
        ok = True
        if adapter is not None and job_name:
            ok &= adapter.remove_remote(self.mgr, rc, ns, job_name)
        remote = rc.get(WORKLOAD, key)
        if remote is not None:
            if remote.metadata.finalizers:
                new = clone(remote)
                new.metadata.finalizers = None
                with contextlib.suppress(StoreError):
                    rc.store.update(new)
            ok &= self._delete(rc, WORKLOAD, ns, remote.metadata.name)
        return ok

    def _delete(self, rc: RemoteCluster, rtype: Any, ns: str, name: str) -> bool:
        return delete_remote(rc, rtype, ns, name)

    # ------------------------------------------------------------ garbage collection
    def _collect_garbage(self) -> timedelta | None:
        """Kueue's ``runGC``: the remote Workloads of this origin whose Workload
        is gone from the manager, and their jobs, are deleted."""
        for rc in self._connected():
            for remote in list(rc.owned(WORKLOAD)):
                key = key_of(remote)
                if self._wls.get(key) is not None:
                    continue
                owner = self._owners.get(key)
                if owner is None:
                    adapter, ref = adapter_for(self.settings.adapters, remote)
                    owner = (adapter, ref.name) if adapter is not None and ref else None
                if owner is not None:
                    self._remove_remote(rc, key, owner[0], owner[1])
                else:
                    self._remove_remote(rc, key, None, "")
                log.info("multikueue garbage collected", cluster=rc.name, workload=key)
            for a in self.settings.adapters.values():
                for job in list(rc.owned(a.rtype)):
                    keys = a.workload_keys(job)
                    if keys and all(self._wls.get(k) is None for k in keys):
                        self._delete(rc, a.rtype, job.metadata.namespace, job.metadata.name)
        if not self.clusters.remotes:
            self._gc_armed = False
            return None
        return self.settings.gc_interval


def _group_version(api_version: str) -> str:
    """An apiVersion as ``GroupVersionKind.String()`` writes it (the core
    group empty: ``/v1``)."""
    return api_version if "/" in api_version else f"/{api_version}"


def _sibling_news(etype: EventType, wl: kt.Workload, old: kt.Workload | None) -> bool:
    if JOB_OWNER_GVK not in (wl.metadata.annotations or {}):
        return False
    if etype == "ADDED" or old is None:
        return True
    before = old.status.cluster_name if old.status is not None else None
    return (wl.status.cluster_name if wl.status is not None else None) != before


def _components_cluster(wl: kt.Workload, members: list[kt.Workload]) -> str | None:
    """``getComponentWorkloadsClusterName``: the worker another component
    was admitted on (the first found)."""
    for m in members:
        if m.metadata.name == wl.metadata.name:
            continue
        name = m.status.cluster_name if m.status is not None else None
        if name:
            return name
    return None


def _is_primary(wl: kt.Workload, adapter: MultiKueueAdapter, members: list[kt.Workload]) -> bool:
    """``isPrimaryComponentWorkload``: no component has a lower index (a
    kind with one Workload per job is always its own primary)."""
    if not adapter.multi_workload:
        return True
    mine = adapter.workload_index(wl)
    if mine < 0:
        return False
    return not any(
        0 <= adapter.workload_index(m) < mine
        for m in members
        if m.metadata.name != wl.metadata.name
    )


def _group_kind(ref: Any) -> str:
    group = ref.api_version.split("/", 1)[0] if "/" in ref.api_version else ""
    return f"{ref.kind}.{group}" if group else ref.kind


def _best_match(remotes: dict[str, Any], ctype: str) -> tuple[Any | None, str]:
    """``bestMatchByCondition``: the earliest true condition of that type."""
    best, at = None, ""
    for name in sorted(remotes):
        wl = remotes[name]
        c = find_condition(wl, ctype) if wl is not None else None
        if c is None or c.status != "True":
            continue
        t, bt = c.last_transition_time, best.last_transition_time if best else None
        if best is None or (t is not None and (bt is None or t < bt)):
            best, at = c, name
    return best, at


def _delayed_pairs(
    local: kt.Workload, remote: kt.Workload | None
) -> list[tuple[kt.PodSetAssignment, kt.PodSetAssignment]]:
    """The (local, remote) pod set assignments where the worker assigned a
    topology."""
    la = local.status.admission if local.status is not None else None
    ra = remote.status.admission if remote is not None and remote.status is not None else None
    if la is None or ra is None:
        return []
    by_name = {p.name: p for p in la.pod_set_assignments}
    return [
        (by_name[r.name], r)
        for r in ra.pod_set_assignments
        if r.topology_assignment is not None and r.name in by_name
    ]


def _needs_delayed_topology_update(local: kt.Workload, remote: kt.Workload | None) -> bool:
    """``needsDelayedTopologyUpdate`` (but for a local assignment without a
    topology and not delayed, which Kueue patches without a change)."""
    return any(lp.delayed_topology_request == "Pending" for lp, _ in _delayed_pairs(local, remote))


def _update_delayed_topology_request(local: kt.Workload, remote: kt.Workload | None) -> None:
    """``updateDelayedTopologyRequest``: Pending becomes Ready where the
    worker assigned a topology (the topology itself stays the worker's)."""
    for lp, _ in _delayed_pairs(local, remote):
        if lp.delayed_topology_request == "Pending":
            lp.delayed_topology_request = "Ready"


def _with_state(
    s: kt.AdmissionCheckState, state: str, message: str, now: datetime
) -> kt.AdmissionCheckState:
    out = clone(s)
    out.state, out.message = state, message  # type: ignore[assignment]
    out.last_transition_time = now
    return out


def _clone_for_create(wl: kt.Workload, origin: str) -> kt.Workload:
    """``cloneForCreate``: metadata for creation (no job-uid label), the
    origin label, the spec as it is."""
    labels = {k: v for k, v in (wl.metadata.labels or {}).items() if k != "kueue.x-k8s.io/job-uid"}
    labels[ORIGIN_LABEL] = origin
    return kt.Workload(
        metadata=ObjectMeta(
            name=wl.metadata.name,
            namespace=wl.metadata.namespace,
            labels=labels,
            annotations=dict(wl.metadata.annotations) if wl.metadata.annotations else None,
        ),
        spec=clone(wl.spec),
    )
