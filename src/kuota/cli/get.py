"""``kuota get`` and ``kuota describe`` over a kept state directory, with the
columns users know from ``oc get``."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table

from kuota.api.decode import to_wire
from kuota.api.kueue import types as kt
from kuota.cli.files import CannotRead
from kuota.embedded.controlplane import CLOCK_META, CONFIG_META
from kuota.scheduler.core import AdmissionCore
from kuota.store import MemoryStore, StoreError, clone, open_store
from kuota.store.protocol import ResourceType

G = kt.GROUP
Row = list[str]


def _cond(obj: Any, ctype: str) -> Any | None:
    for c in (obj.status.conditions if obj.status else None) or ():
        if c.type == ctype:
            return c
    return None


def _cond_status(obj: Any, ctype: str) -> str:
    c = _cond(obj, ctype)
    return c.status if c is not None else ""


def _age(obj: Any, now: datetime) -> str:
    ts = obj.metadata.creation_timestamp
    if ts is None:
        return "<unknown>"
    s = int((now - ts).total_seconds())
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    if s < 3 * 3600:
        return f"{s // 60}m{s % 60}s" if s < 600 else f"{s // 60}m"
    if s < 48 * 3600:
        return f"{s // 3600}h{(s % 3600) // 60}m" if s < 8 * 3600 else f"{s // 3600}h"
    return f"{s // 86400}d"


def _workload_row(o: Any, now: datetime, wide: bool) -> Row:
    adm = o.status.admission if o.status else None
    return [
        o.spec.queue_name or "",
        adm.cluster_queue if adm else "",
        _cond_status(o, "Admitted"),
        _cond_status(o, "Finished"),
        _age(o, now),
    ]


def _lq_row(o: Any, now: datetime, wide: bool) -> Row:
    st = o.status or kt.LocalQueueStatus()
    return [o.spec.cluster_queue or "", str(st.pending_workloads), str(st.admitted_workloads)]


def _cq_row(o: Any, now: datetime, wide: bool) -> Row:
    st = o.status or kt.ClusterQueueStatus()
    return [
        o.spec.cohort_name or "",
        o.spec.queueing_strategy or "BestEffortFIFO",
        str(st.pending_workloads),
        str(st.admitted_workloads),
    ]


def _node_row(o: Any, now: datetime, wide: bool) -> Row:
    ready = _cond_status(o, "Ready") or "True"
    status = "Ready" if ready == "True" else "NotReady"
    if o.spec is not None and o.spec.unschedulable:
        status += ",SchedulingDisabled"
    return [status, "<none>", _age(o, now)]


def _job_row(o: Any, now: datetime, wide: bool) -> Row:
    st = o.status
    status = "Running"
    for ctype, word in (
        ("Complete", "Complete"),
        ("Failed", "Failed"),
        ("Suspended", "Suspended"),
    ):
        if _cond_status(o, ctype) == "True":
            status = word
            break
    completions = o.spec.completions if o.spec.completions is not None else o.spec.parallelism
    done = st.succeeded if st else 0
    duration = ""
    if st is not None and st.start_time is not None:
        end = st.completion_time or now
        duration = _age_between(st.start_time, end)
    return [status, f"{done}/{completions}", duration, _age(o, now)]


def _age_between(a: datetime, b: datetime) -> str:
    class _M:
        creation_timestamp = a

    class _O:
        metadata = _M

    return _age(_O, b)


def _pod_row(o: Any, now: datetime, wide: bool) -> Row:
    n = len(o.spec.containers) if o.spec else 0
    phase = (o.status.phase if o.status else None) or "Pending"
    ready = n if phase == "Running" and _cond_status(o, "Ready") == "True" else 0
    if o.metadata.deletion_timestamp is not None and phase not in ("Succeeded", "Failed"):
        phase = "Terminating"  # as oc shows a pod being deleted
    row = [f"{ready}/{n}", phase, "0", _age(o, now)]
    if wide:
        row.append((o.status.qos_class if o.status else None) or "<none>")
        row.append((o.spec.node_name if o.spec else None) or "<none>")
    return row


def _cronjob_row(o: Any, now: datetime, wide: bool) -> Row:
    st = o.status
    last = st.last_schedule_time if st is not None else None
    return [
        o.spec.schedule,
        o.spec.time_zone or "<none>",
        str(bool(o.spec.suspend)),
        str(len((st.active if st is not None else None) or ())),
        _age_between(last, now) if last is not None else "<none>",
        _age(o, now),
    ]


def _daemonset_row(o: Any, now: datetime, wide: bool) -> Row:
    st = o.status
    sel = (o.spec.template.spec.node_selector if o.spec.template.spec else None) or {}
    counts = (
        (st.desired_number_scheduled, st.current_number_scheduled, st.number_ready)
        if st is not None
        else (0, 0, 0)
    )
    updated = (st.updated_number_scheduled or 0) if st is not None else 0
    available = (st.number_available or 0) if st is not None else 0
    return [
        *(str(c) for c in counts),
        str(updated),
        str(available),
        ",".join(f"{k}={v}" for k, v in sorted(sel.items())) or "<none>",
        _age(o, now),
    ]


def _nodeop_row(o: Any, now: datetime, wide: bool) -> Row:
    st = o.status
    row = [
        o.spec.node_name,
        o.spec.operation,
        (st.phase if st else None) or "Pending",
        _age(o, now),
    ]
    if wide:
        row.append((st.message if st else None) or "")
    return row


def _event_row(o: Any, now: datetime, wide: bool) -> Row:
    io = o.involved_object
    seen = o.last_timestamp or o.metadata.creation_timestamp
    ago = _age_between(seen, now) if seen is not None else "<unknown>"
    count = f" (x{o.count})" if o.count and o.count > 1 else ""
    return [
        ago,
        o.type or "",
        o.reason or "",
        f"{(io.kind or '').lower()}/{io.name}",
        (o.message or "") + count,
    ]


# resource name -> (rtype, namespaced, columns after NAME, row builder)
KINDS: dict[str, tuple[ResourceType, bool, list[str], Callable[[Any, datetime, bool], Row]]] = {
    "workloads": (
        (G, "Workload"),
        True,
        ["QUEUE", "RESERVED IN", "ADMITTED", "FINISHED", "AGE"],
        _workload_row,
    ),
    "localqueues": (
        (G, "LocalQueue"),
        True,
        ["CLUSTERQUEUE", "PENDING WORKLOADS", "ADMITTED WORKLOADS"],
        _lq_row,
    ),
    "clusterqueues": (
        (G, "ClusterQueue"),
        False,
        ["COHORT", "STRATEGY", "PENDING WORKLOADS", "ADMITTED WORKLOADS"],
        _cq_row,
    ),
    "nodes": (("", "Node"), False, ["STATUS", "ROLES", "AGE"], _node_row),
    "jobs": (("batch", "Job"), True, ["STATUS", "COMPLETIONS", "DURATION", "AGE"], _job_row),
    "pods": (("", "Pod"), True, ["READY", "STATUS", "RESTARTS", "AGE"], _pod_row),
    "cronjobs": (
        ("batch", "CronJob"),
        True,
        ["SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"],
        _cronjob_row,
    ),
    "daemonsets": (
        ("apps", "DaemonSet"),
        True,
        ["DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR", "AGE"],
        _daemonset_row,
    ),
    "nodeoperations": (
        ("kuota.dev", "NodeOperation"),
        False,
        ["NODE", "OPERATION", "PHASE", "AGE"],
        _nodeop_row,
    ),
    # As oc prints events: no NAME column, oldest first.
    "events": (
        ("", "Event"),
        True,
        ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
        _event_row,
    ),
}
ALIASES = {
    "workload": "workloads",
    "wl": "workloads",
    "localqueue": "localqueues",
    "lq": "localqueues",
    "queues": "localqueues",
    "clusterqueue": "clusterqueues",
    "cq": "clusterqueues",
    "node": "nodes",
    "no": "nodes",
    "job": "jobs",
    "pod": "pods",
    "po": "pods",
    "cronjob": "cronjobs",
    "cj": "cronjobs",
    "daemonset": "daemonsets",
    "ds": "daemonsets",
    "nodeoperation": "nodeoperations",
    "event": "events",
    "ev": "events",
}


def open_state(state: str | None) -> tuple[MemoryStore, datetime]:
    if not state:
        raise CannotRead("no state directory: give --state DIR or set KUOTA_STATE")
    if not Path(state).is_dir():
        raise CannotRead(f"{state}: no such state directory")
    try:
        store = open_store(state, lambda: datetime.now(UTC))
    except (StoreError, OSError) as err:
        raise CannotRead(f"{state}: {err}") from None
    saved = store.get_meta(CLOCK_META)
    now = datetime.fromisoformat(saved) if saved else datetime.now(UTC)
    return store, now


def get(
    resource: str,
    state: str | None,
    namespace: str | None,
    all_namespaces: bool,
    output: str | None,
    console: Console,
) -> int:
    name = ALIASES.get(resource, resource)
    if name not in KINDS:
        console.print(
            f'error: the server doesn\'t have a resource type "{resource}" '
            f"(kuota knows: {', '.join(KINDS)})",
            markup=False,
        )
        return 1
    rtype, namespaced, columns, row = KINDS[name]
    store, now = open_state(state)
    try:
        ns = None if all_namespaces or not namespaced else (namespace or "default")
        items = store.list(rtype, ns).items
    finally:
        store.close()
    if output in ("json", "yaml"):
        doc = {"apiVersion": "v1", "kind": "List", "items": [to_wire(o) for o in items]}
        text = (
            json.dumps(doc, indent=4, default=str)
            if output == "json"
            else yaml.safe_dump(json.loads(json.dumps(doc, default=str)), sort_keys=False)
        )
        console.print(text, markup=False, highlight=False, soft_wrap=True)
        return 0
    if not items:
        where = f" in {ns} namespace" if ns else ""
        console.print(f"No resources found{where}.", markup=False)
        return 0
    wide = output == "wide"
    named = name != "events"
    if not named:
        items = sorted(items, key=_event_time)
    head = (["NAMESPACE"] if namespaced and ns is None else []) + (["NAME"] if named else [])
    head += columns
    if wide and name == "pods":
        head += ["QOS CLASS", "NODE"]
    if wide and name == "nodeoperations":
        head.append("MESSAGE")
    t = Table(box=None, show_edge=False, pad_edge=False, header_style="")
    for h in head:
        t.add_column(h, no_wrap=True)
    for o in items:
        cells = [o.metadata.namespace] if namespaced and ns is None else []
        cells += [o.metadata.name] if named else []
        t.add_row(*cells, *row(o, now, wide))
    console.print(t)
    if name == "pods":
        from kuota.cli.podview import unschedulable_notes

        unschedulable_notes(items, console, with_namespace=ns is None)
    return 0


def _event_time(e: Any) -> datetime:
    return e.last_timestamp or e.metadata.creation_timestamp or datetime.min.replace(tzinfo=UTC)


def events_for(store: MemoryStore, obj: Any) -> list[Any]:
    """The stored events about ``obj``, oldest first."""
    m = obj.metadata
    items = store.list(("", "Event"), m.namespace or "default").items
    mine = [
        e
        for e in items
        if e.involved_object.name == m.name
        and e.involved_object.kind == obj.kind
        and (not e.involved_object.uid or e.involved_object.uid == m.uid)
    ]
    return sorted(mine, key=_event_time)


def print_events(events: list[Any], now: datetime, console: Console) -> None:
    if not events:
        console.print("Events:        <none>", markup=False)
        return
    t = Table(title="Events", title_justify="left", box=None, header_style="")
    for col in ("TYPE", "REASON", "AGE", "FROM", "MESSAGE"):
        t.add_column(col)
    for e in events:
        first = e.first_timestamp or e.last_timestamp
        age = _age_between(first, now) if first is not None else "<unknown>"
        if e.count and e.count > 1 and e.last_timestamp is not None and first is not None:
            age = f"{_age_between(e.last_timestamp, now)} (x{e.count} over {_age_between(first, now)})"
        src = e.source.component if e.source is not None and e.source.component else ""
        t.add_row(e.type or "", e.reason or "", age, src, e.message or "")
    console.print(t)


def describe_workload(name: str, state: str | None, namespace: str | None, console: Console) -> int:
    store, now = open_state(state)
    try:
        ns = namespace or "default"
        try:
            wl = store.get((G, "Workload"), ns, name)
        except StoreError:
            console.print(
                f'Error from server (NotFound): workloads "{name}" not found', markup=False
            )
            return 1
        reason = _pending_reason(store, wl, now)
        events = events_for(store, wl)
    finally:
        store.close()
    adm = wl.status.admission if wl.status else None
    lines = [
        f"Name:          {wl.metadata.name}",
        f"Namespace:     {wl.metadata.namespace}",
        f"Queue:         {wl.spec.queue_name or ''}",
        f"Priority:      {wl.spec.priority if wl.spec.priority is not None else 0}",
        f"Active:        {str(wl.spec.active).lower()}",
        f"Reserved in:   {adm.cluster_queue if adm else '<none>'}",
        f"Created:       {wl.metadata.creation_timestamp}",
    ]
    for ps in wl.spec.pod_sets:
        lines.append(f"PodSet {ps.name}: count {ps.count}")
    for psa in adm.pod_set_assignments if adm else ():
        flv = ", ".join(f"{r}: {f}" for r, f in (psa.flavors or {}).items())
        lines.append(f"Assigned {psa.name}: {psa.count} pods in {flv}")
    if reason:
        lines.append(f"Pending:       {reason}")
    console.print("\n".join(lines), markup=False)
    t = Table(title="Conditions", title_justify="left", box=None, header_style="")
    for col in ("TYPE", "STATUS", "REASON", "LAST TRANSITION", "MESSAGE"):
        t.add_column(col)
    conds = sorted(
        (wl.status.conditions if wl.status else None) or (),
        key=lambda c: c.last_transition_time or now,
    )
    for c in conds:
        t.add_row(c.type, c.status, c.reason, str(c.last_transition_time or ""), c.message)
    console.print(t)
    print_events(events, now, console)
    return 0


def _pending_reason(store: MemoryStore, wl: Any, now: datetime) -> str:
    """The admission core's one-line reason, rebuilt from the stored objects."""
    from kuota.controllers.kueue import WATCHED

    if _cond_status(wl, "QuotaReserved") == "True" or _cond_status(wl, "Finished") == "True":
        return ""
    try:
        cfg = _stored_config(store)
        core = AdmissionCore(cfg, now)
        for rtype in WATCHED:
            for o in store.list(rtype).items:
                core.add(clone(o))
        key = f"{wl.metadata.namespace}/{wl.metadata.name}"
        return core.explain(key)
    except Exception as err:  # the explanation is a courtesy; never fail describe
        return f"(no explanation: {err})"


def _stored_config(store: MemoryStore) -> Any:
    """The Kueue configuration the run used (kept in the state), else the default."""
    from kuota.api.config import load_config
    from kuota.cli.world import _default_config

    raw = store.get_meta(CONFIG_META)
    cfg = load_config(raw)[0] if raw else None
    return cfg if cfg is not None else _default_config()
