"""Kueue's ElasticJobUngater (pkg/controller/elasticjobs): an elastic job's
pods are made with the ``kueue.x-k8s.io/elastic-job`` scheduling gate; the
gate is lifted from as many of them as the job's active slice (the newest
admitted one) grants, per podSet, counting the pods already ungated and still
running. A scale-up's extra pods so wait, gated, until its new slice is
admitted; the lowest-named go first."""

from __future__ import annotations

import contextlib
from typing import Any, Final

from kuota.api.kueue import types as kt
from kuota.controllers import workloadslicing as slicing
from kuota.quota.workload import is_admitted, is_evicted, is_finished
from kuota.runtime.informer import Informer, key_of
from kuota.runtime.manager import Manager
from kuota.store import Conflict, NotFound, clone
from kuota.store.resources import POD, WORKLOAD

__all__ = ["ElasticJobUngater"]

PODSET_LABEL: Final = "kueue.x-k8s.io/podset"
WORKLOAD_ANNOTATION: Final = "kueue.x-k8s.io/workload"
_BY_SLICE: Final = "elastic-slice-name"


def _should_ungate(wl: kt.Workload) -> bool:
    return slicing.is_elastic_workload(wl) and not is_finished(wl) and is_admitted(wl)


def _pod_slice(pod: Any) -> str:
    """podSliceName: the chain's name the pod carries (else its Workload's)."""
    ann = pod.metadata.annotations or {}
    return ann.get(slicing.SLICE_NAME) or ann.get(WORKLOAD_ANNOTATION) or ""


def _terminated(pod: Any) -> bool:
    st = pod.status
    return st is not None and st.phase in ("Succeeded", "Failed")


def _controller_uid(obj: Any) -> str | None:
    for r in obj.metadata.owner_references or ():
        if r.controller:
            uid: str = r.uid
            return uid
    return None


class ElasticJobUngater:
    name = "elastic-job-ungater"

    def __init__(self) -> None:
        self._mgr: Manager | None = None
        self._pods: Informer | None = None
        self._wls: Informer | None = None

    def setup(self, mgr: Manager) -> None:
        self._mgr = mgr
        self._wls = mgr.informer(WORKLOAD)
        self._pods = mgr.informer(POD)
        self._wls.add_index("owner", lambda w: [u for u in [_controller_uid(w)] if u])
        self._pods.add_index(_BY_SLICE, self._slice_key)
        self._wls.on_change(self._on_workload)
        self._pods.on_change(self._on_pod)

    @staticmethod
    def _slice_key(pod: Any) -> list[str]:
        name = _pod_slice(pod)
        return [f"{pod.metadata.namespace}/{name}"] if name else []

    def _active(self, owner_uid: str | None) -> kt.Workload | None:
        """latestActiveSliceForOwner: admitted (its checks passed too)."""
        assert self._mgr is not None
        if owner_uid is None:
            return None
        wl = slicing.find_latest_active(self._mgr, owner_uid)
        return wl if wl is not None and is_admitted(wl) else None

    def _on_workload(self, etype: str, wl: Any, old: Any | None) -> None:
        if etype == "DELETED" or self._mgr is None or not _should_ungate(wl):
            return
        active = self._active(_controller_uid(wl))
        if active is not None:
            self._mgr.enqueue(self.name, key_of(active))

    def _on_pod(self, etype: str, pod: Any, old: Any | None) -> None:
        if self._mgr is None or self._wls is None:
            return
        keys = self._slice_key(pod)
        if not keys:
            return
        if slicing.SLICE_NAME not in (pod.metadata.annotations or {}) and not slicing.has_gate(
            pod.spec
        ):
            return  # a TAS pod of a workload that is not elastic: nothing to recount
        # The job owning the chain: the named slice's owner, else the pod's.
        named = self._wls.get(keys[0])
        owner = _controller_uid(named) if named is not None else None
        active = self._active(owner or _controller_uid(pod))
        if active is not None:
            self._mgr.enqueue(self.name, key_of(active))

    def reconcile(self, key: str) -> None:
        assert self._wls is not None and self._pods is not None
        wl = self._wls.get(key)
        if wl is None:
            return
        if not _should_ungate(wl) or is_evicted(wl):
            redirected = self._active(_controller_uid(wl))
            if redirected is None or redirected.metadata.name == wl.metadata.name:
                return
            wl = redirected
        granted = slicing.counts_of(wl.spec.pod_sets)
        chain = f"{wl.metadata.namespace}/{slicing.slice_name(wl)}"
        gated: dict[str, list[Any]] = {}
        ungated: dict[str, int] = {}
        for pod in self._pods.by_index(_BY_SLICE, chain):
            if _terminated(pod):
                continue
            ps = (pod.metadata.labels or {}).get(PODSET_LABEL, "")
            if slicing.has_gate(pod.spec):
                gated.setdefault(ps, []).append(pod)
            else:
                ungated[ps] = ungated.get(ps, 0) + 1  # ungated pods hold quota too
        for ps, candidates in gated.items():
            room = granted.get(ps, 0) - ungated.get(ps, 0)
            if room <= 0:
                continue
            for pod in sorted(candidates, key=lambda p: p.metadata.name)[:room]:
                self._ungate(pod)

    def _ungate(self, pod: Any) -> None:
        assert self._mgr is not None
        new = clone(pod)
        gates = [g for g in new.spec.scheduling_gates or () if g.name != slicing.SCHEDULING_GATE]
        new.spec.scheduling_gates = gates or None
        # A conflict: the newer pod comes back through the watch.
        with contextlib.suppress(Conflict, NotFound):
            self._mgr.store.update(new)
