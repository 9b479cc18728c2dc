"""Pods in ``kuota get pods`` and ``kuota describe pod``: why an unplaced pod
waits (its ``PodScheduled=False`` condition, with kube-scheduler's message),
and for a pod Kueue holds behind its scheduling gate, the Workload that holds
it, that Workload's state and reason, and its pod group's counts."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.table import Table

from kuota.api.conditions import status_condition
from kuota.cli.get import events_for, open_state, pending_reasons, print_events
from kuota.cli.podworkload import pod_workload_lines
from kuota.cluster.apiserver.pod_strategy import SCHEDULING_GATED
from kuota.controllers.jobs.pod import podmeta as pm
from kuota.quota.requests import resource_quantity
from kuota.store import StoreError
from kuota.store.resources import POD

__all__ = ["describe_pod", "unschedulable_notes"]

_W = 18  # describe's label width


def unschedulable_reason(pod: Any) -> str | None:
    """The scheduler's message for a pending pod it could not place (not for
    one still gated: the scheduler has not tried it)."""
    if pod.spec is not None and pod.spec.node_name:
        return None
    c = status_condition(pod, "PodScheduled")
    if c is None or c.status != "False" or c.reason == SCHEDULING_GATED:
        return None
    return f"{c.reason}: {c.message}" if c.reason else c.message


def unschedulable_notes(pods: Iterable[Any], console: Console, with_namespace: bool) -> None:
    """After ``kuota get pods``: one line per unplaced pod with its reason
    (the table's STATUS says only Pending, as ``oc get pods`` does), and how
    many pods Kueue's admission gate holds (their STATUS: SchedulingGated)."""
    pods = list(pods)
    lines = []
    for p in pods:
        why = unschedulable_reason(p)
        if why is not None:
            name = (
                f"{p.metadata.namespace}/{p.metadata.name}" if with_namespace else p.metadata.name
            )
            lines.append(f"  {name}: {why}")
    if lines:
        console.print(f"\n{len(lines)} pod(s) not placed (PodScheduled=False):", markup=False)
        console.print("\n".join(lines), markup=False, soft_wrap=True)
    gated = sum(1 for p in pods if pm.is_gated(p))
    if gated:
        console.print(
            f"\n{gated} pod(s) gated by Kueue ({pm.SCHEDULING_GATE}) until their Workload "
            "is admitted: kuota describe pod NAME says which Workload and why it waits.",
            markup=False,
            soft_wrap=True,
        )


def _tolerations(pod: Any) -> list[str]:
    out = []
    for t in (pod.spec.tolerations if pod.spec is not None else None) or ():
        s = t.key or ""
        if t.operator != "Exists" and t.value:
            s += f"={t.value}"
        s += f":{t.effect}" if t.effect else ""
        if t.operator == "Exists":
            s += " op=Exists"
        if t.toleration_seconds is not None:
            s += f" for {t.toleration_seconds}s"
        out.append(s)
    return out


def describe_pod(name: str, state: str | None, namespace: str | None, console: Console) -> int:
    """``oc describe pod``: the fields placement decides with, conditions, events."""
    from kuota.cluster.nodeutil import pod_resource_requests

    store, now = open_state(state)
    try:
        ns = namespace or "default"
        try:
            pod = store.get(POD, ns, name)
        except StoreError:
            console.print(f'Error from server (NotFound): pods "{name}" not found', markup=False)
            return 1
        events = events_for(store, pod)
        held = pod_workload_lines(store, pod, pending_reasons(store, now), _W)
    finally:
        store.close()
    spec, st, m = pod.spec, pod.status, pod.metadata
    phase = (st.phase if st is not None else None) or "Pending"
    if m.deletion_timestamp is not None and phase not in ("Succeeded", "Failed"):
        phase = "Terminating"
    requests = pod_resource_requests(pod)
    selector = ",".join(f"{k}={v}" for k, v in sorted((spec.node_selector or {}).items()))
    tols = _tolerations(pod)
    lines = [
        f"Name:             {m.name}",
        f"Namespace:        {m.namespace}",
        f"Priority:         {(spec.priority if spec is not None else None) or 0}",
        f"Priority Class:   {(spec.priority_class_name if spec is not None else None) or '<none>'}",
        f"Node:             {(spec.node_name if spec is not None else None) or '<none>'}",
        f"Start Time:       {(st.start_time if st is not None else None) or '<none>'}",
        f"Labels:           {','.join(f'{k}={v}' for k, v in sorted((m.labels or {}).items())) or '<none>'}",
        f"Status:           {phase}",
        f"Reason:           {(st.reason if st is not None else None) or '<none>'}",
        f"Nominated Node:   {(st.nominated_node_name if st is not None else None) or '<none>'}",
        f"QoS Class:        {(st.qos_class if st is not None else None) or '<none>'}",
        "Requests:         "
        + (
            ", ".join(f"{k}: {resource_quantity(k, v)}" for k, v in sorted(requests.items()))
            or "<none>"
        ),
        f"Node-Selectors:   {selector or '<none>'}",
        f"Tolerations:      {tols[0] if tols else '<none>'}",
        *[f"                  {t}" for t in tols[1:]],
    ]
    gates = [g.name for g in (spec.scheduling_gates if spec is not None else None) or ()]
    lines.append(f"{'Scheduling Gates:':<{_W}}{', '.join(gates) or '<none>'}")
    why = unschedulable_reason(pod)
    if why is not None:
        lines.append(f"Not placed:       {why}")
    lines += held
    console.print("\n".join(lines), markup=False, soft_wrap=True)
    t = Table(title="Conditions", title_justify="left", box=None, header_style="")
    for col in ("TYPE", "STATUS", "REASON", "LAST TRANSITION", "MESSAGE"):
        t.add_column(col)
    for c in (st.conditions if st is not None else None) or ():
        t.add_row(c.type, c.status, c.reason, str(c.last_transition_time or ""), c.message)
    console.print(t)
    print_events(events, now, console)
    return 0
