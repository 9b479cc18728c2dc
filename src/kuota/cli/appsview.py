"""``kuota describe deployment|statefulset|leaderworkerset NAME``: the set's
replicas as ``oc describe`` counts them, its pods' phases, and for each
Kueue Workload behind it (one per pod of a Deployment, one for a
StatefulSet, one per group of a LeaderWorkerSet; integrations.md §3, §4) its
state, why it waits and how many of its pods exist and are gated."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from rich.console import Console

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
from kuota.controllers.integration import SetView
from kuota.controllers.jobs.integrations import INTEGRATIONS
from kuota.controllers.jobs.pod import podmeta as pm
from kuota.store import ReadOnlyStore, StoreError

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


# The kinds integrations describe, by the describe command's name.
SETS: Final[dict[str, SetView]] = {i.view.noun: i.view for i in INTEGRATIONS if i.view is not None}


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
    store: ReadOnlyStore, kind: SetView, obj: Any, pods: list[Any], now: datetime
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
