"""The pods one Workload admits, as Kueue's pod integration sees them
(``pkg/controller/jobs/pod``, its ``Pod`` type): a single pod, or a pod group
(the pods sharing a ``kueue.x-k8s.io/pod-group-name``). Pure: what the
Workload's podSets are, whether the pods run, ended or are ready, which
pods a Workload keeps, which are excess and which were replaced. The
reconciler (``pod_reconciler``) does the writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from kuota.api import k8s as kc
from kuota.api.kueue import types as kt
from kuota.api.meta import OwnerReference
from kuota.controllers.jobframework import (
    QUEUE_NAME,
    Finished,
    go_atoi,
    max_exec_seconds,
    owner_workload_name,
)
from kuota.controllers.jobs.pod import podmeta as pm
from kuota.controllers.tas_requests import topology_request
from kuota.quota.workload import is_finished
from kuota.store import clone


class ComposeError(Exception):
    """The pods cannot make a Workload now (Kueue's unretryable errors: the
    next change of a pod tries again). ``event``: worth a Warning event
    (Kueue only logs some of them; kuota's users read events, not its log)."""

    def __init__(self, message: str, event: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.event = event


@dataclass
class PodJob:
    """A single pod (``pods == [pod]``) or the pods of a group, sorted by name."""

    namespace: str
    name: str  # the pod's name, or the group's
    is_group: bool
    pods: list[kc.Pod]
    ids: bool = True  # WorkloadIdentifierAnnotations: names may be annotations
    absent: int = 0  # pods the group's Workload counts that do not exist (any more)
    # The pod that speaks for the group: the first, kept when the Workload
    # keeps fewer pods than the group has (Kueue's Pod.pod).
    lead: kc.Pod = field(init=False)

    def __post_init__(self) -> None:
        self.lead = self.pods[0]

    def total_count(self) -> int:
        return pm.total_count(self.lead, self.ids)

    def serving(self) -> bool:
        return self.is_group and pm.is_serving(self.lead)

    def fast(self) -> bool:
        return pm.is_fast_admission(self.lead)

    def queue_name(self) -> str:
        return (self.lead.metadata.labels or {}).get(QUEUE_NAME, "")

    def prebuilt(self) -> str:
        return pm.prebuilt_name(self.lead, self.ids)

    def max_exec(self) -> int | None:
        return max_exec_seconds(self.lead.metadata.labels)

    def workload_name(self) -> str:
        name = self.prebuilt()
        if name:
            return name
        if not self.is_group:
            m = self.lead.metadata
            return owner_workload_name("Pod", "v1", m.name, m.uid)
        return self.name

    # -------------------------------------------------------------- state
    def is_suspended(self) -> bool:
        return any(pm.is_suspended(p) for p in self.pods)

    def is_active(self, now: datetime) -> bool:
        """A group with a Running pod (not one stuck terminating past its grace
        period); a single pod never holds its Workload back."""
        if not self.is_group:
            return False
        for p in self.pods:
            if pm.phase(p) != "Running":
                continue
            m = p.metadata
            if m.deletion_timestamp is not None and m.deletion_grace_period_seconds is not None:
                grace = timedelta(seconds=m.deletion_grace_period_seconds)
                if now > m.deletion_timestamp + grace:
                    continue
            return True
        return False

    def finished(self) -> Finished | None:
        if self.serving():
            return None  # a serving group runs until it is deleted
        if not self.is_group:
            p = self.lead
            if not pm.is_terminated(p):
                return None
            msg = (p.status.message if p.status else None) or ""
            return Finished(pm.phase(p) == "Succeeded", msg)
        try:
            total = self.total_count()
        except ValueError:
            return None
        succeeded = sum(1 for p in self.pods if pm.phase(p) == "Succeeded")
        active = any(not pm.is_terminated(p) for p in self.pods)
        unretriable = any(pm.is_unretriable(p) for p in self.pods)
        if succeeded == total or (not active and unretriable):
            return Finished(True, f"Pods succeeded: {succeeded}/{total}.")
        return None

    def pods_ready(self) -> bool:
        if not self.is_group:
            return pm.is_ready(self.lead)
        try:
            total = self.total_count()
        except ValueError:
            return False
        return len(self.pods) >= total and all(pm.is_ready(p) for p in self.pods)

    def reclaimable(self) -> list[kt.ReclaimablePod]:
        """Succeeded pods per role: their quota is not needed any more."""
        if not self.is_group or self.serving():
            return []
        counts: dict[str, int] = {}
        for p in self.pods:
            if pm.phase(p) == "Succeeded":
                role = pm.role_hash(p)
                counts[role] = counts.get(role, 0) + 1
        return [kt.ReclaimablePod(name=n, count=c) for n, c in counts.items()]

    def partition(self) -> tuple[list[kc.Pod], list[kc.Pod]]:
        active = [p for p in self.pods if pm.runnable_or_succeeded(p)]
        inactive = [p for p in self.pods if not pm.runnable_or_succeeded(p)]
        return active, inactive

    # -------------------------------------------------------------- podSets
    def pod_sets(self) -> list[kt.PodSet]:
        if not self.is_group:
            return [single_pod_set(self.lead)]
        if self.fast():
            try:
                total = self.total_count()
            except ValueError as err:
                raise ComposeError(str(err)) from None
            return fast_pod_sets(self.pods, total)
        return group_pod_sets(self.pods)

    def validate_group(self, active: list[kc.Pod]) -> None:
        """validatePodGroupMetadata: enough runnable pods (unless fast
        admission), and one queue and one total count across the group."""
        try:
            total = self.total_count()
        except ValueError as err:
            raise ComposeError(str(err)) from None
        lead = self.lead
        if not self.fast() and len(active) < total:
            msg = f"'{self.name}' group has fewer runnable pods than expected"
            raise ComposeError(msg, event=True)
        queue = self.queue_name()
        for p in self.pods:
            if pm.phase(p) == "Failed":
                continue
            theirs = (p.metadata.labels or {}).get(QUEUE_NAME, "")
            if theirs != queue:
                raise ComposeError(
                    f"pods '{lead.metadata.name}' and '{p.metadata.name}' has different "
                    f"queue names: {queue}!={theirs}",
                    event=True,
                )
            raw = pm.annotation(p, pm.TOTAL_COUNT)
            try:
                tc = go_atoi(raw)
            except ValueError as err:
                raise ComposeError(
                    f"failed to extract '{pm.TOTAL_COUNT}' annotation from the pod "
                    f"'{p.metadata.name}': {err}"
                ) from None
            if tc != total:
                raise ComposeError(
                    f"pods '{lead.metadata.name}' and '{p.metadata.name}' has different "
                    f"'{pm.TOTAL_COUNT}' values: {total}!={tc}",
                    event=True,
                )

    def shared_values(self, keys: tuple[str, ...]) -> dict[str, str]:
        """The labels to copy to the Workload: the pods must agree on them."""
        out: dict[str, str] = {}
        for p in self.pods:
            labels = p.metadata.labels or {}
            for k in keys:
                if k not in labels:
                    continue
                if k in out and out[k] != labels[k]:
                    raise ComposeError("constructing workload: pods have different label values")
                out[k] = labels[k]
        return out

    # -------------------------------------------------------------- matching
    def match(self, wl: kt.Workload, now: datetime) -> GroupMatch | None:
        """FindMatchingWorkloads for a group: per podSet of ``wl``, the pods it
        keeps, the active ones beyond its count, the inactive ones newer pods
        replaced; None when the group no longer matches ``wl``."""
        active, inactive = self.partition()
        out = GroupMatch()
        for ps in wl.spec.pod_sets:
            role_active = [p for p in active if pm.role_hash(p) == ps.name]
            role_inactive = [p for p in inactive if pm.role_hash(p) == ps.name]
            if self.fast():
                out.absent += 1 if ps.count > 0 and not role_active else 0
            else:
                out.absent += max(0, ps.count - len(role_active))
            excess = len(role_active) - ps.count
            if excess > 0:
                role_active.sort(key=keep_active_first)
                out.excess += role_active[-excess:]
                out.kept += role_active[:-excess]
            else:
                out.kept += role_active
            replaced = min(len(role_inactive), len(role_inactive) + len(role_active) - ps.count)
            if replaced > 0:
                role_inactive.sort(key=lambda p: _keep_inactive_first(p, now))
                out.replaced += role_inactive[-replaced:]
                out.kept += role_inactive[:-replaced]
            else:
                out.kept += role_inactive
        if not out.kept or not self.equivalent(wl, group_pod_sets(out.kept)):
            return None
        return out

    def equivalent(self, wl: kt.Workload, pod_sets: list[kt.PodSet]) -> bool:
        """equivalentToWorkload: same name, every role of the pods a podSet of
        ``wl`` in the same order, with room for its pods (a finished workload
        needs only the roles)."""
        if wl.metadata.name != self.workload_name():
            return False
        done = is_finished(wl)
        theirs = wl.spec.pod_sets
        if not done and len(theirs) < len(pod_sets):
            return False
        j = -1
        for ps in pod_sets:
            j += 1
            while j < len(theirs) and theirs[j].name != ps.name:
                j += 1
            if j == len(theirs):
                return False
            if not done and theirs[j].count < ps.count:
                return False
        return True


@dataclass
class GroupMatch:
    kept: list[kc.Pod] = field(default_factory=list)
    excess: list[kc.Pod] = field(default_factory=list)
    replaced: list[kc.Pod] = field(default_factory=list)
    absent: int = 0


# ------------------------------------------------------------------ podSets
POD_GROUP_POD_INDEX = "kueue.x-k8s.io/pod-group-pod-index"  # Kueue's PodGroupPodIndexLabel


def single_pod_set(pod: kc.Pod) -> kt.PodSet:
    """constructPodSet: podSet ``main`` of one pod, its template the pod's spec."""
    spec = clone(pod.spec) if pod.spec is not None else kc.PodSpec(containers=[])
    tr = topology_request(pod.metadata.annotations)  # from the pod's own annotations
    if tr is not None:
        tr.pod_index_label = POD_GROUP_POD_INDEX
    template = kc.PodTemplateSpec(spec=spec)
    return kt.PodSet(name="main", count=1, template=template, topology_request=tr)


def group_pod_sets(pods: list[kc.Pod]) -> list[kt.PodSet]:
    """One podSet per role hash of the runnable (or succeeded) pods, counting
    them, sorted by name."""
    out: dict[str, kt.PodSet] = {}
    for p in pods:
        if not pm.runnable_or_succeeded(p):
            continue
        role = pm.role_hash(p)
        ps = out.get(role)
        if ps is not None:
            ps.count += 1
            continue
        ps = single_pod_set(p)
        ps.name = role
        out[role] = ps
    return [out[k] for k in sorted(out)]


def fast_pod_sets(pods: list[kc.Pod], total: int) -> list[kt.PodSet]:
    """Fast admission: one podSet, the first runnable pod's, for the whole group."""
    for p in pods:
        if pm.runnable_or_succeeded(p):
            ps = single_pod_set(p)
            ps.name = pm.role_hash(p)
            ps.count = total
            return [ps]
    raise ComposeError("failed to find a runnable pod in the group")


# ------------------------------------------------------------------ orderings
_EPOCH = datetime.min.replace(tzinfo=UTC)


def _created(p: kc.Pod) -> datetime:
    return p.metadata.creation_timestamp or _EPOCH


def keep_active_first(p: kc.Pod) -> tuple[bool, bool, datetime, str]:
    """sortActivePods: pods with the finalizer, ungated, older first (the
    last ones are the excess)."""
    return (not pm.has_finalizer(p), pm.is_gated(p), _created(p), p.metadata.name)


def _keep_inactive_first(p: kc.Pod, now: datetime) -> tuple[bool, float, datetime, str]:
    """sortInactivePods: pods with the finalizer, last active latest, older
    first (the last ones are those replaced)."""
    last = _last_active(p, now)
    return (not pm.has_finalizer(p), -last.timestamp(), _created(p), p.metadata.name)


def _last_active(p: kc.Pod, now: datetime) -> datetime:
    """When the pod was last seen active: its failure, or its deletion."""
    last = now
    for c in (p.status.conditions if p.status else None) or ():
        if c.type == "ContainersReady":
            if c.status == "False" and c.reason == "PodFailed" and c.last_transition_time:
                last = c.last_transition_time
            break
    deleted = p.metadata.deletion_timestamp or now
    return min(last, deleted)


def with_termination_target(pod: Any, reason: str, message: str, now: datetime) -> Any:
    """The pod with condition TerminationTarget=True, reason and message (a
    copy with a status of its own, for a status write)."""
    st = clone(pod.status) if pod.status is not None else kc.PodStatus()
    conds = [c for c in st.conditions or () if c.type != pm.TERMINATION_TARGET]
    prev = next((c for c in st.conditions or () if c.type == pm.TERMINATION_TARGET), None)
    moved = prev.last_transition_time if prev is not None and prev.status == "True" else now
    conds.append(
        kc.PodCondition(
            type=pm.TERMINATION_TARGET,
            status="True",
            last_transition_time=moved,
            reason=reason,
            message=message,
        )
    )
    st.conditions = conds
    return msgspec.structs.replace(pod, status=st)


# ------------------------------------------------------------------ ownership
def controller_of(obj: Any) -> OwnerReference | None:
    return next((r for r in obj.metadata.owner_references or () if r.controller), None)


def pod_ref(pod: kc.Pod, controller: bool = False) -> OwnerReference:
    """An owner reference to the pod: a group's Workload is owned by every pod
    (not controlled: garbage collection deletes it with the last one); a single
    pod's is controlled by it."""
    m = pod.metadata
    if controller:
        return OwnerReference(
            api_version="v1",
            kind="Pod",
            name=m.name,
            uid=m.uid,
            controller=True,
            block_owner_deletion=True,
        )
    return OwnerReference(api_version="v1", kind="Pod", name=m.name, uid=m.uid)


def same_pod(job: PodJob, wl: kt.Workload) -> bool:
    """EquivalentToWorkload for a single pod: controlled by this very pod, the
    same maximum execution time, and the requests its podSet was built with
    (a pod's spec cannot change otherwise, but for what admission added)."""
    ref = controller_of(wl)
    pod = job.lead
    if ref is None or ref.name != pod.metadata.name or ref.uid != pod.metadata.uid:
        return False
    if wl.spec.maximum_execution_time_seconds != job.max_exec():
        return False
    mine = job.pod_sets()
    theirs = wl.spec.pod_sets
    if [(p.name, p.count) for p in mine] != [(p.name, p.count) for p in theirs]:
        return False
    return all(
        pm.spec_shape(a.template.spec)["containers"] == pm.spec_shape(b.template.spec)["containers"]
        and pm.spec_shape(a.template.spec)["initContainers"]
        == pm.spec_shape(b.template.spec)["initContainers"]
        for a, b in zip(mine, theirs, strict=True)
    )
