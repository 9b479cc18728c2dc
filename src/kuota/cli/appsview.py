"""``kuota describe deployment|statefulset|leaderworkerset NAME``: the set's
replicas as ``oc describe`` counts them, its pods' phases, and for each
Kueue Workload behind it (one per pod of a Deployment, one for a
StatefulSet, one per group of a LeaderWorkerSet; integrations.md §3, §4) its
state, why it waits and how many of its pods exist and are gated."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from rich.console import Console

from kuota.api.lws import v1 as lw
from kuota.cli.get import (
    _map_lines,
    _when,
    events_for,
    open_state,
    pending_reasons,
    print_events,
)
from kuota.cli.podworkload import (
    POD,
    GroupCount,
    Workloads,
    group_count,
    workload_details,
    workload_state,
    workload_summary,
)
from kuota.controllers.jobs import podmeta as pm
from kuota.controllers.jobs.leaderworkerset import FRAMEWORK as LWS_FRAMEWORK
from kuota.controllers.jobs.leaderworkerset import group_workload_name
from kuota.controllers.jobs.statefulset import FRAMEWORK as STATEFULSET_FRAMEWORK
from kuota.controllers.jobs.statefulset import workload_name as statefulset_workload_name
from kuota.store import MemoryStore, StoreError
from kuota.store.protocol import ResourceType

__all__ = ["SETS", "describe_set"]

_W: Final = 20  # label width
_STATE_ORDER: Final = {
    w: i
    for i, w in enumerate(
        (
            "admitted",
            "quota reserved",
            "evicted",
            "pending",
            "inadmissible",
            "deactivated",
            "not created",
            "finished",
        )
    )
}


@dataclass(frozen=True, slots=True)
class SetKind:
    """What describe reads of one kind of set."""

    rtype: ResourceType
    resource: str  # as the API server names it in NotFound
    replicas: Callable[[Any], str]
    pods: Callable[[MemoryStore, Any, list[Any]], list[Any]]
    # (label, Workload name) the set is expected to have, before its pods' own
    expected: Callable[[Any], list[tuple[str, str]]]
    extra: Callable[[Any], list[str]] = lambda o: []


def _controlled_by(pods: list[Any], uids: set[str]) -> list[Any]:
    return [
        p
        for p in pods
        if any(r.controller and r.uid in uids for r in p.metadata.owner_references or ())
    ]


# ------------------------------------------------------------------ Deployment
def _deployment_replicas(d: Any) -> str:
    st = d.status
    total, updated, available, unavailable = (
        (
            st.replicas or 0,
            st.updated_replicas or 0,
            st.available_replicas or 0,
            st.unavailable_replicas or 0,
        )
        if st is not None
        else (0, 0, 0, 0)
    )
    return (
        f"{d.spec.replicas} desired | {updated} updated | {total} total | "
        f"{available} available | {unavailable} unavailable"
    )


def _deployment_pods(store: MemoryStore, d: Any, pods: list[Any]) -> list[Any]:
    rs = store.list(("apps", "ReplicaSet"), d.metadata.namespace).items
    mine = {r.metadata.uid for r in _controlled_by(rs, {d.metadata.uid})}
    return _controlled_by(pods, mine)


# ------------------------------------------------------------------ StatefulSet
def _statefulset_replicas(s: Any) -> str:
    st = s.status
    total, ready = (st.replicas, st.ready_replicas or 0) if st is not None else (0, 0)
    return f"{s.spec.replicas} desired | {total} total | {ready} ready"


def _statefulset_pods(store: MemoryStore, s: Any, pods: list[Any]) -> list[Any]:
    return _controlled_by(pods, {s.metadata.uid})


def _suspended_by(template: Any, framework: str) -> bool:
    """Kueue's webhook marks the pod template of a set it manages."""
    return (template.metadata.annotations or {}).get(pm.SUSPENDING_PARENT) == framework


def _statefulset_expected(s: Any) -> list[tuple[str, str]]:
    if not _suspended_by(s.spec.template, STATEFULSET_FRAMEWORK):
        return []  # not Kueue's, or an LWS's (its pods name their group's Workload)
    return [("", statefulset_workload_name(s))]


# ------------------------------------------------------------------ LeaderWorkerSet
def _lws_replicas(o: Any) -> str:
    st = o.status
    ready, updated = (st.ready_replicas, st.updated_replicas) if st is not None else (0, 0)
    return f"{o.spec.replicas} desired | {ready} ready | {updated} updated (groups)"


def _lws_pods(store: MemoryStore, o: Any, pods: list[Any]) -> list[Any]:
    return [p for p in pods if (p.metadata.labels or {}).get(lw.SET_NAME_LABEL) == o.metadata.name]


def _lws_expected(o: Any) -> list[tuple[str, str]]:
    if not _suspended_by(o.spec.leader_worker_template.worker_template, LWS_FRAMEWORK):
        return []
    m = o.metadata
    return [
        (f"group {i}", group_workload_name(m.name, m.uid, str(i))) for i in range(o.spec.replicas)
    ]


def _lws_extra(o: Any) -> list[str]:
    return [f"{'Group Size:':<{_W}}{o.spec.leader_worker_template.size}"]


SETS: Final[dict[str, SetKind]] = {
    "deployment": SetKind(
        ("apps", "Deployment"),
        "deployments.apps",
        _deployment_replicas,
        _deployment_pods,
        lambda d: [],
    ),
    "statefulset": SetKind(
        ("apps", "StatefulSet"),
        "statefulsets.apps",
        _statefulset_replicas,
        _statefulset_pods,
        _statefulset_expected,
    ),
    "leaderworkerset": SetKind(
        (lw.GROUP, lw.KIND),
        f"leaderworkersets.{lw.GROUP}",
        _lws_replicas,
        _lws_pods,
        _lws_expected,
        _lws_extra,
    ),
}


def _pods_status(pods: list[Any]) -> str:
    """``oc describe``'s ``Pods Status``, the waiting ones split by Kueue's gate."""
    phases = {"Running": 0, "Pending": 0, "Succeeded": 0, "Failed": 0}
    for p in pods:
        ph = pm.phase(p)
        if ph in phases:
            phases[ph] += 1
    gated = sum(1 for p in pods if pm.is_gated(p))
    return (
        f"{phases['Running']} Running / {phases['Pending']} Waiting ({gated} gated) / "
        f"{phases['Succeeded']} Succeeded / {phases['Failed']} Failed"
    )


def _workload_section(
    store: MemoryStore, kind: SetKind, obj: Any, pods: list[Any], now: datetime
) -> list[str]:
    """``Workloads:`` and, per Workload, its state, reason and pod counts."""
    wls = Workloads(store, obj.metadata.namespace)
    entries: dict[str, str] = {}  # Workload name -> label, in order
    for label, name in kind.expected(obj):
        entries.setdefault(name, label)
    groups: dict[str, str] = {}  # Workload name -> the pod group it holds
    for p in sorted(pods, key=lambda p: p.metadata.name):
        name = wls.name_for(p)
        group = pm.group_name(p)
        if name and name not in entries:
            entries[name] = "" if group else f"pod {p.metadata.name}"
        if name and group:
            groups.setdefault(name, group)
    # Workloads the set owns that no pod names any more (a group scaled away).
    for w in wls.by_owner.get(obj.metadata.uid, ()):
        entries.setdefault(w.metadata.name, "")
    if not entries:
        return [f"{'Workloads:':<{_W}}<none>"]
    states: dict[str, int] = {}
    for name in entries:
        wl = wls.by_name.get(name)
        word = "not created" if wl is None else workload_state(wl)[0]
        states[word] = states.get(word, 0) + 1
    summary = ", ".join(
        f"{states[w]} {w}" for w in sorted(states, key=lambda w: _STATE_ORDER.get(w, 99))
    )
    lines = [f"{'Workloads:':<{_W}}{len(entries)} ({summary})"]
    reason = pending_reasons(store, now)
    all_pods = store.list(POD, obj.metadata.namespace).items
    for name, label in entries.items():
        wl = wls.by_name.get(name)
        if name in groups:
            counts = f", {group_count(all_pods, groups[name])}"
        elif wl is not None and not label.startswith("pod "):
            # A group none of whose pods exist now (deleted, to be recreated).
            counts = f", {GroupCount(0, 0, sum(ps.count for ps in wl.spec.pod_sets))}"
        else:
            counts = ""
        lines.append(f"  {label + ': ' if label else ''}{workload_summary(wl, name)}{counts}")
        lines += [f"    {what}: {text}" for what, text in workload_details(wl, reason)]
    return lines


def describe_set(
    kind_name: str, name: str, state: str | None, namespace: str | None, console: Console
) -> int:
    """``oc describe`` of a Deployment, StatefulSet or LeaderWorkerSet, with
    the Kueue Workloads that hold its pods."""
    kind = SETS[kind_name]
    store, now = open_state(state)
    try:
        ns = namespace or "default"
        try:
            obj = store.get(kind.rtype, ns, name)
        except StoreError:
            console.print(
                f'Error from server (NotFound): {kind.resource} "{name}" not found', markup=False
            )
            return 1
        pods = kind.pods(store, obj, store.list(POD, ns).items)
        workloads = _workload_section(store, kind, obj, pods, now)
        events = events_for(store, obj)
    finally:
        store.close()
    m = obj.metadata
    lines = [
        f"{'Name:':<{_W}}{m.name}",
        f"{'Namespace:':<{_W}}{m.namespace}",
        f"{'CreationTimestamp:':<{_W}}{_when(m.creation_timestamp)}",
        *_map_lines("Labels", m.labels, _W),
        *_map_lines("Annotations", m.annotations, _W),
        f"{'Replicas:':<{_W}}{kind.replicas(obj)}",
        *kind.extra(obj),
        f"{'Pods Status:':<{_W}}{_pods_status(pods)}",
        *workloads,
    ]
    console.print("\n".join(lines), markup=False, soft_wrap=True)
    print_events(events, now, console)
    return 0
