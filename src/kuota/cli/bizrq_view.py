"""``kuota get bizrq`` as the tree it is, and ``kuota describe bizrq NAME``:
per node and key, hard / used / left; budgets (``cash/`` keys) as hours used
of hours granted, with when they run out at the current burn (the running
pods of the group's objects); a node's objects, children and recent
refusals (its Events)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from rich.console import Console

from kuota.api.kuotadev.bizrq import GROUP_LABEL, is_cash
from kuota.cli.table_text import output_width, render
from kuota.controllers.kuotadev.bizrq.admission_check import CONTROLLER_NAME, check_holds
from kuota.controllers.kuotadev.bizrq.budget_status import BUDGET_EXHAUSTED
from kuota.controllers.kuotadev.bizrq.object_webhook import ObjectQuotaWebhook, group_of
from kuota.controllers.kuotadev.bizrq.pod_runs import group_owner
from kuota.quota.bizgroups.budget import US_PER_HOUR, cash_rates, run_out_at
from kuota.quota.bizgroups.tree import shown
from kuota.quota.bizgroups.usage import Usage, add_into, models_of, pod_usage
from kuota.store import ReadOnlyStore, StoreError
from kuota.store.resources import ADMISSION_CHECK, BIZRQ, POD, WORKLOAD

__all__ = ["bizrq_tree", "burn_rates", "describe_bizrq"]

HEAD = ["NAME", "PARENT", "ENFORCEMENT", "KEY", "HARD", "USED", "LEFT", "RUN-OUT"]


def _milli(rl: Any) -> Usage:
    return {k: q.milli_value() for k, q in (rl or {}).items()}


def burn_rates(store: ReadOnlyStore) -> dict[str, Usage]:
    """Per group, milli-units burning now per resource key: its running pods'."""
    out: dict[str, Usage] = {}
    for pod in store.list(POD).items:
        st = pod.status
        if st is None or st.phase != "Running" or pod.spec is None or not pod.spec.node_name:
            continue
        owner = group_owner(store, pod)
        if owner is not None:
            group, labels = owner
            add_into(out.setdefault(group, {}), pod_usage(pod.spec, models_of(labels)))
    return out


def _hours(milli: int) -> str:
    return f"{shown(milli)}h"


def _when(at: datetime, now: datetime) -> str:
    left = at - now
    mins = int(left.total_seconds() // 60)
    span = f"{mins // 60}h{mins % 60:02d}m" if mins >= 60 else f"{max(mins, 0)}m"
    return f"{at:%Y-%m-%d %H:%M} (in {span})"


def _used_now(node: Any, now: datetime, rates: Usage) -> Usage:
    """``used`` brought to ``now`` for the budgets: what the running pods burnt
    since the last refresh (the controller adds it at its next)."""
    st = node.status
    used = _milli(st.used if st is not None else None)
    since = st.last_reconcile_time if st is not None else None
    if since is not None and now > since:
        d = now - since
        us = (d.days * 86_400 + d.seconds) * 1_000_000 + d.microseconds
        for k, rate in rates.items():
            used[k] = used.get(k, 0) + rate * us // US_PER_HOUR
    return used


def _key_rows(node: Any, now: datetime, burn: Usage) -> Iterator[list[str]]:
    hard = _milli(node.spec.hard)
    cash = [k for k in hard if is_cash(k)]
    rates = cash_rates(burn, cash)
    used = _used_now(node, now, rates)
    for k in sorted(hard):
        h, u = hard[k], used.get(k, 0)
        if not is_cash(k):
            yield [k, shown(h), shown(u), shown(max(h - u, 0)), ""]
            continue
        if u >= h:
            out = "spent"
        else:
            at = run_out_at(now, {k: u}, {k: h}, {k: rates.get(k, 0)})
            out = f"{_when(at, now)} at {shown(rates[k])}/h" if at is not None else "not burning"
        yield [k, _hours(h), _hours(u), _hours(max(h - u, 0)), out]


def _tree_order(nodes: list[Any]) -> list[tuple[int, Any]]:
    by_parent: dict[str, list[Any]] = {}
    names = {n.metadata.name for n in nodes}
    for n in nodes:
        p = n.spec.parent_biz_group
        by_parent.setdefault(p if p in names else "", []).append(n)
    out: list[tuple[int, Any]] = []

    def walk(parent: str, depth: int) -> None:
        for n in sorted(by_parent.get(parent, ()), key=lambda n: n.metadata.name):
            out.append((depth, n))
            walk(n.metadata.name, depth + 1)

    walk("", 0)
    return out


def bizrq_tree(store: ReadOnlyStore, items: list[Any], now: datetime, console: Console) -> int:
    burns = burn_rates(store)
    rows: list[list[str]] = []
    for depth, n in _tree_order(items):
        first = True
        lines = list(_key_rows(n, now, burns.get(n.metadata.name, {}))) or [["", "", "", "", ""]]
        for line in lines:
            lead = (
                [
                    "  " * depth + n.metadata.name,
                    n.spec.parent_biz_group or "",
                    n.spec.enforcement or "Reject",
                ]
                if first
                else ["", "", ""]
            )
            rows.append(lead + line)
            first = False
    console.print(render(HEAD, rows, output_width()), markup=False, highlight=False, soft_wrap=True)
    return 0


def _objects(store: ReadOnlyStore, node: Any) -> list[tuple[str, Usage, bool]]:
    """The group's objects, their charge, and whether it counts (in Queue
    mode only while a Workload of the object passed the check)."""
    name = node.metadata.name
    hook = ObjectQuotaWebhook(lambda: store)  # type: ignore[arg-type,return-value]
    queue = node.spec.enforcement == "Queue"
    ours = {
        ac.metadata.name
        for ac in store.list(ADMISSION_CHECK).items
        if ac.spec.controller_name == CONTROLLER_NAME
    }
    holding = {
        r.uid
        for wl in (store.list(WORKLOAD).items if queue else ())
        if check_holds(wl, ours)
        for r in wl.metadata.owner_references or ()
    }
    out = []
    for rtype in sorted(hook.kinds):
        for obj in store.list(rtype).items:
            if group_of(obj) != name:
                continue
            use = hook.usage(obj)
            m = obj.metadata
            ref = f"{obj.kind}/{m.namespace}/{m.name}" if m.namespace else f"{obj.kind}/{m.name}"
            out.append((ref, use, not queue or m.uid in holding))
    return out


def describe_bizrq(name: str, state: str | None, namespace: str | None, console: Console) -> int:
    from kuota.cli.get import events_for, open_state, print_events

    store, now = open_state(state)
    try:
        try:
            node = store.get(BIZRQ, "", name)
        except StoreError:
            console.print(
                f'Error from server (NotFound): bizgroupresourcequotas.kuota.dev "{name}" not found',
                markup=False,
            )
            return 1
        nodes = store.list(BIZRQ).items
        burn = burn_rates(store).get(name, {})
        objects = _objects(store, node)
        events = events_for(store, node)
    finally:
        store.close()
    st = node.status
    hard_keys = set(node.spec.hard or {})
    p = console.print
    p(f"Name:             {name}", markup=False)
    p(f"Parent:           {node.spec.parent_biz_group or '<none> (a root)'}", markup=False)
    p(f"Enforcement:      {node.spec.enforcement or 'Reject'}", markup=False)
    p(f"Resync Period:    {node.spec.resync_period or '5m'}", markup=False)
    last = st.last_reconcile_time if st is not None else None
    p(
        f"Last Reconcile:   {last:%Y-%m-%d %H:%M:%S}" if last else "Last Reconcile:   <never>",
        markup=False,
    )
    rows = [[k, *rest] for k, *rest in _key_rows(node, now, burn)]
    self_used = _milli(st.self_used if st is not None else None)
    for r in rows:
        k = r[0]
        r.insert(3, _hours(self_used.get(k, 0)) if is_cash(k) else shown(self_used.get(k, 0)))
    p("Quota:", markup=False)
    p(
        render(["KEY", "HARD", "USED", "SELF-USED", "LEFT", "RUN-OUT"], rows, output_width()),
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    kids = sorted(
        (c for c in nodes if c.spec.parent_biz_group == name), key=lambda c: c.metadata.name
    )
    p("Children:" + ("" if kids else "         <none>"), markup=False)
    for c in kids:
        grant = ", ".join(f"{k}={q}" for k, q in sorted((c.spec.hard or {}).items()))
        p(f"  {c.metadata.name}: {grant}", markup=False)
    p(f"Objects ({GROUP_LABEL}={name}):" + ("" if objects else " <none>"), markup=False)
    for ref, use, counts in objects:
        charged = ", ".join(f"{k}={shown(v)}" for k, v in sorted(use.items()) if k in hard_keys)
        if not charged:
            charged = "nothing (finished, or charged through its owner)"
        elif not counts:
            charged = f"not charged: waiting on the bizrq admission check ({charged})"
        p(f"  {ref}: {charged}", markup=False)
    conds = (st.conditions if st is not None else None) or []
    for c in conds:
        if c.type == BUDGET_EXHAUSTED:
            p(f"{c.type}:  {c.status} ({c.reason}) {c.message}", markup=False)
    refusals = [e for e in events if e.reason in ("Refused", "Held")]
    p("Recent Refusals:" + ("" if refusals else " <none>"), markup=False)
    for e in refusals[-10:]:
        at = e.last_timestamp or e.metadata.creation_timestamp
        p(f"  {at:%Y-%m-%d %H:%M:%S}  {e.reason}  {e.message}", markup=False)
    print_events(events, now, console)
    return 0
