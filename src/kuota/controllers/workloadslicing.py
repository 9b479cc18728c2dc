"""Kueue's workload slices (pkg/workloadslicing, ElasticJobsViaWorkloadSlices):
how the job reconciler keeps the Workloads of an elastic job.

An elastic job (the gate on and the job annotated
``kueue.x-k8s.io/elastic-job: "true"``) may change its pod counts while it
runs. A scale-down is written into the admitted Workload in place (its quota
shrinks with it); a scale-up makes a new Workload, a *slice*, annotated
``kueue.x-k8s.io/workload-slice-replacement-for: <ns>/<old>``, which queues
while the old slice keeps running; the scheduler finishes the old slice when
it admits the new one (``scheduler.admission.workloads.replace_slice``). The
job's pods carry the ``kueue.x-k8s.io/elastic-job`` scheduling gate, which
``elastic_ungater`` lifts for as many pods as the admitted slice grants.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kuota.api import k8s as kc
from kuota.api.conditions import with_condition
from kuota.api.kueue import types as kt
from kuota.quota.workload import has_quota_reservation, is_evicted, is_finished
from kuota.runtime.informer import key_of
from kuota.runtime.manager import Manager
from kuota.store import NotFound, clone
from kuota.store.resources import WORKLOAD

ENABLED_ANNOTATION: Final = "kueue.x-k8s.io/elastic-job"  # constants.ElasticJobAnnotation
REPLACEMENT_FOR: Final = "kueue.x-k8s.io/workload-slice-replacement-for"
SLICE_NAME: Final = "kueue.x-k8s.io/workload-slice-name"  # WorkloadSliceNameAnnotation
SCHEDULING_GATE: Final = "kueue.x-k8s.io/elastic-job"  # ElasticJobSchedulingGate
REPLACED: Final = "WorkloadSliceReplaced"
OUT_OF_SYNC: Final = "OutOfSync"  # WorkloadFinishedReasonOutOfSync
_REPLACED_MSG: Final = "Replaced to accommodate a new workload slice"
_OUT_OF_SYNC_MSG: Final = "The workload slice is out of sync with its parent job"

Counts = dict[str, int]


def is_elastic_workload(wl: kt.Workload) -> bool:
    """IsElasticWorkload (the gate is on wherever a slice was made)."""
    return (wl.metadata.annotations or {}).get(ENABLED_ANNOTATION) == "true"


def replacement_for(wl: kt.Workload) -> str | None:
    return (wl.metadata.annotations or {}).get(REPLACEMENT_FOR)


def slice_name(wl: kt.Workload) -> str:
    """SliceName: the chain's first Workload's name, which every slice and
    every pod of the job carries."""
    return (wl.metadata.annotations or {}).get(SLICE_NAME) or wl.metadata.name


def _owner_uids(wl: Any) -> list[str]:
    return [r.uid for r in wl.metadata.owner_references or () if r.controller]


def find_not_finished(mgr: Manager, owner_uid: str) -> list[kt.Workload]:
    """FindNotFinishedWorkloads: the owner's Workloads without Finished=True,
    oldest first (same-second ties broken by uid)."""
    wls = mgr.informer(WORKLOAD).by_index("owner", owner_uid)
    live = [w for w in wls if not is_finished(w)]
    live.sort(key=lambda w: (w.metadata.creation_timestamp, w.metadata.uid))
    return live


def find_latest_active(mgr: Manager, owner_uid: str) -> kt.Workload | None:
    """FindLatestActiveWorkload: the newest live slice holding quota and not
    being evicted (its granted counts are the job's admitted capacity)."""
    for wl in reversed(find_not_finished(mgr, owner_uid)):
        if has_quota_reservation(wl) and not is_evicted(wl):
            return wl
    return None


def counts_of(pod_sets: list[kt.PodSet]) -> Counts:
    return {ps.name: ps.count for ps in pod_sets}


def _fewer(a: Mapping[str, int], b: Mapping[str, int]) -> bool:
    """PodSetsCounts.HasFewerReplicasThan: some podSet of ``a`` has fewer."""
    return any(n in b and c < b[n] for n, c in a.items())


def scaled_down(old: Mapping[str, int], new: Mapping[str, int]) -> bool:
    """ScaledDown: some podSet shrinks and none grows."""
    return _fewer(new, old) and not _fewer(old, new)


def _apply_counts(mgr: Manager, wl: kt.Workload, counts: Counts) -> kt.Workload:
    """ApplyPodSetCounts and the Workload's update."""
    new = clone(wl)
    for ps in new.spec.pod_sets:
        if ps.name in counts:
            ps.count = counts[ps.name]
    stored: kt.Workload = mgr.store.update(new)
    return stored


def ensure_workload_slices(
    mgr: Manager, pod_sets: list[kt.PodSet], owner_uid: str
) -> tuple[kt.Workload | None, bool]:
    """EnsureWorkloadSlices: ``(wl, True)`` the job's current slice (its
    counts brought to the job's when it holds no quota or scales down),
    ``(None, True)`` a new slice is to be made (none yet, or a scale-up of an
    admitted slice), ``(None, False)`` the job's podSets changed otherwise
    (other names): the ordinary path decides."""
    want = counts_of(pod_sets)
    workloads = find_not_finished(mgr, owner_uid)
    if not workloads:
        return None, True
    wl = workloads[0] if len(workloads) == 1 else _normalize(mgr, workloads)
    if wl is None:
        return None, True
    have = counts_of(wl.spec.pod_sets)
    if set(have) != set(want):
        return None, False
    if have == want:
        return wl, True
    if not has_quota_reservation(wl) or scaled_down(have, want):
        try:
            return _apply_counts(mgr, wl, want), True
        except NotFound:
            return None, True
    return None, True  # a scale-up of an admitted slice: a new slice


def _normalize(mgr: Manager, workloads: list[kt.Workload]) -> kt.Workload | None:
    """normalizeActiveSlices: keep the admitted head of the replacement chain
    and at most one pending replacement of it (or, with none admitted, the
    newest not evicted); finish every other slice (evicted ones included:
    they hold quota to give back)."""
    replacements: dict[str, kt.Workload] = {}
    for wl in workloads:
        ref = replacement_for(wl)
        if ref is not None and not is_evicted(wl):
            prev = replacements.get(ref)
            if prev is None or (not has_quota_reservation(prev) and has_quota_reservation(wl)):
                replacements[ref] = wl
    head: kt.Workload | None = None
    latest: kt.Workload | None = None
    for wl in workloads:
        if is_evicted(wl):
            continue
        latest = wl
        if not has_quota_reservation(wl):
            continue
        repl = replacements.get(key_of(wl))
        if repl is not None and has_quota_reservation(repl):
            continue
        head = wl
    pending: kt.Workload | None = None
    if head is not None:
        repl = replacements.get(key_of(head))
        if repl is not None and not has_quota_reservation(repl):
            pending = repl
    selected = pending or head or latest
    keep = {id(selected), id(head)}
    for wl in workloads:
        if id(wl) in keep:
            continue
        if key_of(wl) in replacements:
            _finish(mgr, wl, REPLACED, _REPLACED_MSG)
        else:
            _finish(mgr, wl, OUT_OF_SYNC, _OUT_OF_SYNC_MSG)
    return selected


def _finish(mgr: Manager, wl: kt.Workload, reason: str, message: str) -> None:
    new = with_condition(wl, "Finished", "True", reason, message, mgr.clock.now())
    if new is None:
        return
    try:
        mgr.store.update_status(new)
    except NotFound:
        return


def prepare_slice(mgr: Manager, wl: kt.Workload, owner_uid: str) -> bool:
    """prepareWorkloadSlice: a new Workload of an elastic job says it is
    elastic and names its chain; a second one says which slice it replaces.
    False (no Workload is made) with more than one live slice already: Kueue
    fails that reconcile; the slices' own changes bring the job back."""
    ann = dict(wl.metadata.annotations or {})
    ann[ENABLED_ANNOTATION] = "true"
    slices = find_not_finished(mgr, owner_uid)
    if not slices:
        ann[SLICE_NAME] = wl.metadata.name
    elif len(slices) == 1:
        old = slices[0]
        ann[REPLACEMENT_FOR] = key_of(old)
        ann[SLICE_NAME] = (old.metadata.annotations or {}).get(SLICE_NAME) or old.metadata.name
    else:
        return False
    wl.metadata.annotations = ann
    return True


def owner_uid_of(wl: Any) -> str | None:
    uids = _owner_uids(wl)
    return uids[0] if uids else None


def gate_template(spec: kc.PodSpec) -> bool:
    """utilpod.GateTemplate with the elastic-job gate (a spec of the
    caller's own); whether it was added."""
    gates = list(spec.scheduling_gates or ())
    if any(g.name == SCHEDULING_GATE for g in gates):
        return False
    gates.append(kc.PodSchedulingGate(name=SCHEDULING_GATE))
    spec.scheduling_gates = gates
    return True


def has_gate(spec: kc.PodSpec | None) -> bool:
    return spec is not None and any(g.name == SCHEDULING_GATE for g in spec.scheduling_gates or ())
