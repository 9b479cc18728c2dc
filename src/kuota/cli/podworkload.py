"""The Kueue Workload behind a pod, for ``kuota describe``: which Workload
holds a pod (or the pods of a Deployment, StatefulSet or LeaderWorkerSet),
its state and why it waits, and how many of a pod group's pods exist and
are still gated.

A pod finds its Workload as Kueue's pod integration does (integrations.md
§2): a pod of a group by the prebuilt-workload or pod-group name (label or
annotation: a group's Workload is named after its group), a single pod by
the Workload it controls; a Job's pod through its Job.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

from kuota.api.conditions import condition_true, find_condition
from kuota.controllers.jobs.integrations import INTEGRATIONS
from kuota.controllers.jobs.pod import podmeta as pm
from kuota.store import ReadOnlyStore
from kuota.store.resources import POD, WORKLOAD

__all__ = [
    "GroupCount",
    "Workloads",
    "group_count",
    "pod_workload_lines",
    "workload_details",
    "workload_state",
    "workload_summary",
]

# (apiVersion, kind) of the job kinds the generic job reconciler runs: their
# pods' Workload is their job's.
_JOB_KINDS: Final = frozenset(
    (a.api_version, a.kind) for a in (i.adapter() for i in INTEGRATIONS if i.adapter is not None)
)


class Workloads:
    """A namespace's Workloads, looked up by name and by owner uid."""

    def __init__(self, store: ReadOnlyStore, namespace: str) -> None:
        self.namespace = namespace
        self.by_name: dict[str, Any] = {}
        self.by_owner: dict[str, list[Any]] = {}
        for wl in store.list(WORKLOAD, namespace).items:
            self.by_name[wl.metadata.name] = wl
            for ref in wl.metadata.owner_references or ():
                self.by_owner.setdefault(ref.uid, []).append(wl)

    def name_for(self, pod: Any) -> str:
        """The name of the Workload that holds ``pod`` ("" when it has none
        and none is expected)."""
        named = pm.prebuilt_name(pod) or pm.group_name(pod)
        if named:
            return named  # a group's Workload, made or not yet
        m = pod.metadata
        owned = self.by_owner.get(m.uid, [])
        if owned:  # a single pod controls its Workload
            return str(owned[0].metadata.name)
        # A Job's pod: the Workload of the Job that controls it.
        for ref in m.owner_references or ():
            if ref.controller and (ref.api_version, ref.kind) in _JOB_KINDS:
                jobs = self.by_owner.get(ref.uid, [])
                if jobs:
                    return str(jobs[0].metadata.name)
        return ""


@dataclass(frozen=True, slots=True)
class GroupCount:
    """A pod group's members: how many exist (not being deleted), how many of
    those Kueue still gates, and how many the group has (its total-count
    annotation; None when no pod says)."""

    created: int
    gated: int
    total: int | None

    def __str__(self) -> str:
        total = "?" if self.total is None else str(self.total)
        return f"pods {self.created}/{total} created, {self.gated} gated"


def group_count(pods: Iterable[Any], group: str) -> GroupCount:
    """Count the pods of ``group`` among ``pods`` (a namespace's)."""
    created = gated = 0
    total: int | None = None
    for p in pods:
        if pm.group_name(p) != group:
            continue
        if total is None:
            with contextlib.suppress(ValueError):  # a bad count: Kueue says so on the pod
                total = pm.total_count(p)
        if p.metadata.deletion_timestamp is not None:
            continue  # leaving: its replacement is counted when it comes
        created += 1
        gated += pm.is_gated(p)
    return GroupCount(created, gated, total)


def workload_state(wl: Any) -> tuple[str, str]:
    """The state in a word (``finished``, ``admitted``, ``quota reserved``,
    ``evicted``, ``deactivated``, ``inadmissible``, ``pending``) and what
    goes with it, to follow the word (`` by ClusterQueue cq``, ``: Preempted,
    pending again`` ...)."""
    adm = wl.status.admission if wl.status is not None else None
    cq = f"ClusterQueue {adm.cluster_queue}" if adm is not None else ""
    if condition_true(wl, "Finished"):
        return "finished", ""
    evicted = find_condition(wl, "Evicted")
    if evicted is not None and evicted.status == "True":
        why = f": {evicted.reason}, " if evicted.reason else ", "
        if condition_true(wl, "QuotaReserved"):
            return "evicted", f"{why}its pods being stopped"
        return "evicted", f"{why}pending again"
    if condition_true(wl, "Admitted"):
        return "admitted", f" by {cq}"
    if condition_true(wl, "QuotaReserved"):
        return "quota reserved", f" in {cq}, waiting for admission checks"
    if not wl.spec.active:
        return "deactivated", ""
    qr = find_condition(wl, "QuotaReserved")
    if qr is not None and qr.reason == "Inadmissible":
        return "inadmissible", ""
    return "pending", ""


def workload_summary(wl: Any | None, name: str) -> str:
    """``name (state ...)``."""
    if wl is None:
        return f"{name} (not created yet)"
    word, detail = workload_state(wl)
    return f"{name} ({word}{detail})"


def workload_details(wl: Any | None, reason: Callable[[Any], str]) -> list[tuple[str, str]]:
    """(label, text): ``Evicted`` with Kueue's message, ``Pending`` with the
    admission core's reason, as they apply."""
    if wl is None:
        return []
    out = []
    evicted = find_condition(wl, "Evicted")
    if evicted is not None and evicted.status == "True" and evicted.message:
        out.append(("Evicted", evicted.message))
    why = reason(wl)
    if why:
        out.append(("Pending", why))
    return out


def pod_workload_lines(
    store: ReadOnlyStore, pod: Any, reason: Callable[[Any], str], width: int
) -> list[str]:
    """What ``describe pod`` says of the Workload holding ``pod`` (nothing for
    a pod Kueue does not manage)."""
    wls = Workloads(store, pod.metadata.namespace)
    name = wls.name_for(pod)
    if not name:
        if pm.is_gated(pod):
            return [f"{'Workload:':<{width}}<none> (Kueue has not made one for this pod yet)"]
        return []
    wl = wls.by_name.get(name)
    lines = [f"{'Workload:':<{width}}{workload_summary(wl, name)}"]
    lines += [f"{label + ':':<{width}}{text}" for label, text in workload_details(wl, reason)]
    group = pm.group_name(pod)
    if group:
        pods = store.list(POD, pod.metadata.namespace).items
        lines.append(f"{'Pod Group:':<{width}}{group} ({group_count(pods, group)})")
    return lines
