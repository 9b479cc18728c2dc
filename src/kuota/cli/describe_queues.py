"""``kuota describe clusterqueue|localqueue|cohort``: what users look for in a
queue, per flavor and resource: its quota (nominal, borrowing and lending
limits), what it reserves and has admitted, and what of that is borrowed."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from kuota.cli.get import _when, events_for, open_state, print_events
from kuota.cli.get_columns import _cond_status
from kuota.cli.table_text import render
from kuota.quota.requests import resource_quantity, resource_value
from kuota.store import ReadOnlyStore, StoreError
from kuota.store.resources import CLUSTER_QUEUE, COHORT, LOCAL_QUEUE

W = 22  # the label column, as oc describe aligns it

# (flavor, resource) -> the numbers a quota table shows, in resource_value units
Amounts = dict[tuple[str, str], dict[str, int]]

_COLUMNS = ("NOMINAL", "BORROWING LIMIT", "LENDING LIMIT", "RESERVED", "BORROWED", "ADMITTED")


_USED = ("RESERVED", "BORROWED", "ADMITTED")  # none is 0; a limit not set is "-"


def _quotas(resource_groups: Any, into: Amounts) -> None:
    for rg in resource_groups or ():
        for fq in rg.flavors:
            for rq in fq.resources:
                a = into.setdefault((fq.name, rq.name), {})
                a["NOMINAL"] = a.get("NOMINAL", 0) + resource_value(rq.name, rq.nominal_quota)
                for col, q in (
                    ("BORROWING LIMIT", rq.borrowing_limit),
                    ("LENDING LIMIT", rq.lending_limit),
                ):
                    if q is not None:
                        a[col] = a.get(col, 0) + resource_value(rq.name, q)


def _usage(flavors: Any, col: str, into: Amounts, borrowed: str | None = None) -> None:
    for fu in flavors or ():
        for ru in fu.resources or ():
            a = into.setdefault((fu.name, ru.name), {})
            if ru.total is not None:
                a[col] = a.get(col, 0) + resource_value(ru.name, ru.total)
            if borrowed is not None and ru.borrowed is not None:
                a[borrowed] = a.get(borrowed, 0) + resource_value(ru.name, ru.borrowed)


def _table(amounts: Amounts, columns: tuple[str, ...] = _COLUMNS) -> str:
    """FLAVOR, RESOURCE and the amounts; a limit not set shows ``-``."""
    rows = []
    for (flavor, resource), a in sorted(amounts.items()):
        cells = [
            str(resource_quantity(resource, a.get(c, 0))) if c in a or c in _USED else "-"
            for c in columns
        ]
        rows.append([flavor, resource, *cells])
    return render(["FLAVOR", "RESOURCE", *columns], rows, None)


def _conditions(obj: Any) -> list[str]:
    conds = (obj.status.conditions if obj.status else None) or ()
    if not conds:
        return [f"{'Conditions:':<{W}}<none>"]
    rows = [[c.type, c.status, c.reason or "", c.message or ""] for c in conds]
    return ["Conditions:", render(["TYPE", "STATUS", "REASON", "MESSAGE"], rows, None)]


def _not_found(console: Console, resource: str, name: str) -> int:
    console.print(f'Error from server (NotFound): {resource} "{name}" not found', markup=False)
    return 1


def _cq_amounts(cq: Any) -> Amounts:
    amounts: Amounts = {}
    _quotas(cq.spec.resource_groups, amounts)
    st = cq.status
    _usage(st.flavors_reservation if st else None, "RESERVED", amounts, "BORROWED")
    _usage(st.flavors_usage if st else None, "ADMITTED", amounts)
    for a in amounts.values():
        if "BORROWED" not in a:  # a status that leaves it out: what Kueue would write
            a["BORROWED"] = max(0, a.get("RESERVED", 0) - a.get("NOMINAL", 0))
    return amounts


def describe_clusterqueue(
    name: str, state: str | None, namespace: str | None, console: Console
) -> int:
    store, now = open_state(state)
    try:
        try:
            cq = store.get(CLUSTER_QUEUE, "", name)
        except StoreError:
            return _not_found(console, "clusterqueues.kueue.x-k8s.io", name)
        lqs = [lq for lq in store.list(LOCAL_QUEUE).items if lq.spec.cluster_queue == name]
        events = events_for(store, cq)
    finally:
        store.close()
    spec, st = cq.spec, cq.status
    pre = spec.preemption
    lines = [
        f"{'Name:':<{W}}{name}",
        f"{'Cohort:':<{W}}{spec.cohort_name or '<none>'}",
        f"{'Queueing Strategy:':<{W}}{spec.queueing_strategy or 'BestEffortFIFO'}",
        f"{'Stop Policy:':<{W}}{spec.stop_policy or 'None'}",
        f"{'Active:':<{W}}{_cond_status(cq, 'Active') or '<unknown>'}",
        f"{'Preemption:':<{W}}"
        + (
            f"withinClusterQueue={pre.within_cluster_queue}, "
            f"reclaimWithinCohort={pre.reclaim_within_cohort}"
            if pre is not None
            else "<none>"
        ),
        f"{'Workloads:':<{W}}"
        + (
            f"{st.pending_workloads} pending, {st.reserving_workloads} reserving, "
            f"{st.admitted_workloads} admitted"
            if st is not None
            else "<none>"
        ),
        f"{'Local Queues:':<{W}}"
        + (", ".join(f"{q.metadata.namespace}/{q.metadata.name}" for q in lqs) or "<none>"),
        "Quota and usage:",
        _table(_cq_amounts(cq)),
        *_conditions(cq),
    ]
    console.print("\n".join(lines), markup=False, soft_wrap=True)
    print_events(events, now, console)
    return 0


def describe_localqueue(
    name: str, state: str | None, namespace: str | None, console: Console
) -> int:
    store, now = open_state(state)
    ns = namespace or "default"
    try:
        try:
            lq = store.get(LOCAL_QUEUE, ns, name)
        except StoreError:
            return _not_found(console, "localqueues.kueue.x-k8s.io", name)
        events = events_for(store, lq)
    finally:
        store.close()
    st = lq.status
    amounts: Amounts = {}
    _usage(st.flavors_reservation if st else None, "RESERVED", amounts)
    _usage(st.flavors_usage if st else None, "ADMITTED", amounts)
    lines = [
        f"{'Name:':<{W}}{name}",
        f"{'Namespace:':<{W}}{ns}",
        f"{'Cluster Queue:':<{W}}{lq.spec.cluster_queue or '<none>'}",
        f"{'Stop Policy:':<{W}}{lq.spec.stop_policy or 'None'}",
        f"{'Workloads:':<{W}}"
        + (
            f"{st.pending_workloads} pending, {st.reserving_workloads} reserving, "
            f"{st.admitted_workloads} admitted"
            if st is not None
            else "<none>"
        ),
        "Usage:",
        _table(amounts, ("RESERVED", "ADMITTED")) if amounts else "  <none>",
        *_conditions(lq),
    ]
    console.print("\n".join(lines), markup=False, soft_wrap=True)
    print_events(events, now, console)
    return 0


def _members(store: ReadOnlyStore, name: str) -> tuple[list[Any], list[Any]]:
    cqs = [q for q in store.list(CLUSTER_QUEUE).items if q.spec.cohort_name == name]
    cohorts = [c for c in store.list(COHORT).items if c.spec.parent_name == name]
    return cqs, cohorts


def describe_cohort(name: str, state: str | None, namespace: str | None, console: Console) -> int:
    """A cohort exists when a Cohort object or a ClusterQueue names it."""
    store, now = open_state(state)
    try:
        try:
            cohort: Any | None = store.get(COHORT, "", name)
        except StoreError:
            cohort = None
        cqs, children = _members(store, name)
        if cohort is None and not cqs and not children:
            return _not_found(console, "cohorts.kueue.x-k8s.io", name)
        events = events_for(store, cohort) if cohort is not None else []
    finally:
        store.close()
    own: Amounts = {}
    if cohort is not None:
        _quotas(cohort.spec.resource_groups, own)
    pooled: Amounts = {}
    for cq in cqs:
        for key, a in _cq_amounts(cq).items():
            p = pooled.setdefault(key, {})
            for col, v in a.items():
                if col in ("NOMINAL", "RESERVED", "BORROWED", "ADMITTED"):
                    p[col] = p.get(col, 0) + v
    parent = cohort.spec.parent_name if cohort is not None else None
    lines = [
        f"{'Name:':<{W}}{name}",
        f"{'Parent:':<{W}}{parent or '<none>'}",
        f"{'Created:':<{W}}"
        + (_when(cohort.metadata.creation_timestamp) if cohort else "<no Cohort object>"),
        f"{'Cluster Queues:':<{W}}" + (", ".join(q.metadata.name for q in cqs) or "<none>"),
        f"{'Child Cohorts:':<{W}}" + (", ".join(c.metadata.name for c in children) or "<none>"),
    ]
    if own:
        lines += ["Own quota:", _table(own, ("NOMINAL", "BORROWING LIMIT", "LENDING LIMIT"))]
    lines += [
        "Its ClusterQueues' quota and usage:",
        _table(pooled, ("NOMINAL", "RESERVED", "BORROWED", "ADMITTED")) if pooled else "  <none>",
    ]
    console.print("\n".join(lines), markup=False, soft_wrap=True)
    print_events(events, now, console)
    return 0
