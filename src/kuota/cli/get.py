"""``kuota get`` and ``kuota describe`` over a kept state directory, with the
columns users know from ``oc get``."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import yaml
from rich.console import Console
from rich.table import Table

from kuota.api import registry
from kuota.api.conditions import status_condition
from kuota.api.decode import to_wire
from kuota.api.kueue import types as kt
from kuota.cli.files import CannotRead
from kuota.embedded.controlplane import CLOCK_META, CONFIG_META
from kuota.scheduler.admission.admission_core import AdmissionCore
from kuota.store import ReadOnlyStore, StoreError, clone, open_readonly
from kuota.store.protocol import ResourceType
from kuota.store.resources import (
    CLUSTER_QUEUE,
    CRON_JOB,
    DAEMON_SET,
    DEPLOYMENT,
    EVENT,
    JOB,
    LEADER_WORKER_SET,
    LOCAL_QUEUE,
    NODE,
    NODE_OPERATION,
    POD,
    REPLICA_SET,
    STATEFUL_SET,
    WORKLOAD,
)

G = kt.GROUP
Row = list[str]


def _cond_status(obj: Any, ctype: str) -> str:
    c = status_condition(obj, ctype)
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
    row = [
        o.spec.queue_name or "",
        adm.cluster_queue if adm else "",
        _cond_status(o, "Admitted"),
        _cond_status(o, "Finished"),
        _age(o, now),
    ]
    if wide:
        row += _workload_owners(o)
    return row


_SHOWN_PODS = 3  # a pod group's Workload is owned by each of its pods


def _workload_owners(wl: Any) -> Row:
    """JOB TYPE and JOB NAME, as ``kueuectl list workloads`` prints them from
    the owner references (``job.batch``, ``pod``, ``statefulset.apps``...).
    A group's pods own its Workload beside their StatefulSet or
    LeaderWorkerSet: then the set is named alone; a plain group's pods are
    named, the first few and how many more."""
    refs = list(wl.metadata.owner_references or ())
    parents = [r for r in refs if not (r.kind == "Pod" and r.api_version == "v1")]
    shown = parents or refs
    kinds: list[str] = []
    for r in shown:
        group = r.api_version.rpartition("/")[0]
        t = f"{r.kind.lower()}.{group}" if group else r.kind.lower()
        if t not in kinds:
            kinds.append(t)
    names = sorted({r.name for r in shown})
    if len(names) > _SHOWN_PODS and not parents:
        names = [*names[:_SHOWN_PODS], f"+{len(names) - _SHOWN_PODS} more"]
    return [", ".join(kinds) or "<none>", ", ".join(names) or "<none>"]


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


def _container_reason(cs: Any) -> str | None:
    """kubectl's word for one container status (a raw ``ContainerStatus``)."""
    state = (cs.get("state") if isinstance(cs, dict) else None) or {}
    waiting, terminated = state.get("waiting"), state.get("terminated")
    if isinstance(waiting, dict) and waiting.get("reason"):
        return str(waiting["reason"])
    if isinstance(terminated, dict):
        if terminated.get("reason"):
            return str(terminated["reason"])
        if terminated.get("signal"):
            return f"Signal:{terminated['signal']}"
        return f"ExitCode:{terminated.get('exitCode') or 0}"
    return None


def _scheduling_gated(o: Any) -> bool:
    """kubectl's test: the API server's ``PodScheduled=False`` reason
    ``SchedulingGated``, set on a pod created with scheduling gates."""
    c = status_condition(o, "PodScheduled")
    return c is not None and c.reason == "SchedulingGated"


def pod_status(o: Any) -> str:
    """The STATUS ``oc get pods`` prints (kubectl's ``printPod``): the pod's
    reason over its phase (``SchedulingGated`` while its ``PodScheduled``
    condition says so), then its containers' waiting or terminated reasons.
    The simulated kubelet keeps no container statuses; a pod whose containers
    ended shows what they would: ``Completed`` when it succeeded, ``Error``
    when it failed."""
    st = o.status
    phase = (st.phase if st is not None else None) or "Pending"
    reason = (st.reason if st is not None else None) or phase
    if _scheduling_gated(o):
        reason = "SchedulingGated"
    statuses = (st.container_statuses if st is not None else None) or []
    running = False
    for cs in reversed(statuses):
        why = _container_reason(cs)
        if why is not None:
            reason = why
        elif isinstance(cs, dict) and cs.get("ready") and (cs.get("state") or {}).get("running"):
            running = True
    if not statuses and reason == phase:
        reason = {"Succeeded": "Completed", "Failed": "Error"}.get(phase, phase)
    if reason == "Completed" and running:
        reason = "Running" if _cond_status(o, "Ready") == "True" else "NotReady"
    if o.metadata.deletion_timestamp is not None:
        if st is not None and st.reason == "NodeLost":
            reason = "Unknown"
        elif phase not in ("Succeeded", "Failed"):
            reason = "Terminating"  # as oc shows a pod being deleted
    return reason


def _pod_row(o: Any, now: datetime, wide: bool) -> Row:
    n = len(o.spec.containers) if o.spec else 0
    phase = (o.status.phase if o.status else None) or "Pending"
    ready = n if phase == "Running" and _cond_status(o, "Ready") == "True" else 0
    row = [f"{ready}/{n}", pod_status(o), "0", _age(o, now)]
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


def _lws_row(o: Any, now: datetime, wide: bool) -> Row:
    # The CRD's printer columns: omitted (zero) status counters print blank.
    st = o.status
    ready, updated = (st.ready_replicas, st.updated_replicas) if st is not None else (0, 0)
    desired = o.spec.replicas if o.spec is not None else 1
    return [str(ready or ""), str(desired), str(updated or ""), _age(o, now)]


def _deployment_row(o: Any, now: datetime, wide: bool) -> Row:
    st = o.status
    ready, updated, available = (
        (st.ready_replicas or 0, st.updated_replicas or 0, st.available_replicas or 0)
        if st is not None
        else (0, 0, 0)
    )
    return [f"{ready}/{o.spec.replicas}", str(updated), str(available), _age(o, now)]


def _replicaset_row(o: Any, now: datetime, wide: bool) -> Row:
    st = o.status
    current, ready = (st.replicas, st.ready_replicas or 0) if st is not None else (0, 0)
    return [str(o.spec.replicas), str(current), str(ready), _age(o, now)]


def _statefulset_row(o: Any, now: datetime, wide: bool) -> Row:
    ready = (o.status.ready_replicas or 0) if o.status is not None else 0
    return [f"{ready}/{o.spec.replicas}", _age(o, now)]


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
        WORKLOAD,
        True,
        ["QUEUE", "RESERVED IN", "ADMITTED", "FINISHED", "AGE"],
        _workload_row,
    ),
    "localqueues": (
        LOCAL_QUEUE,
        True,
        ["CLUSTERQUEUE", "PENDING WORKLOADS", "ADMITTED WORKLOADS"],
        _lq_row,
    ),
    "clusterqueues": (
        CLUSTER_QUEUE,
        False,
        ["COHORT", "STRATEGY", "PENDING WORKLOADS", "ADMITTED WORKLOADS"],
        _cq_row,
    ),
    "nodes": (NODE, False, ["STATUS", "ROLES", "AGE"], _node_row),
    "jobs": (JOB, True, ["STATUS", "COMPLETIONS", "DURATION", "AGE"], _job_row),
    "pods": (POD, True, ["READY", "STATUS", "RESTARTS", "AGE"], _pod_row),
    "cronjobs": (
        CRON_JOB,
        True,
        ["SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"],
        _cronjob_row,
    ),
    "daemonsets": (
        DAEMON_SET,
        True,
        ["DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR", "AGE"],
        _daemonset_row,
    ),
    "deployments": (
        DEPLOYMENT,
        True,
        ["READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
        _deployment_row,
    ),
    "replicasets": (
        REPLICA_SET,
        True,
        ["DESIRED", "CURRENT", "READY", "AGE"],
        _replicaset_row,
    ),
    "statefulsets": (STATEFUL_SET, True, ["READY", "AGE"], _statefulset_row),
    "leaderworkersets": (
        LEADER_WORKER_SET,
        True,
        ["READY", "DESIRED", "UP-TO-DATE", "AGE"],
        _lws_row,
    ),
    "nodeoperations": (
        NODE_OPERATION,
        False,
        ["NODE", "OPERATION", "PHASE", "AGE"],
        _nodeop_row,
    ),
    # As oc prints events: no NAME column, oldest first.
    "events": (
        EVENT,
        True,
        ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
        _event_row,
    ),
}


def _aliases() -> dict[str, str]:
    """The other names `kuota get` takes for each resource, as kubectl takes
    them: the kind's singular and short names from the api registry, plus
    kuota's own "wl" for workloads (Kueue's own short name is "kwl")."""
    aliases = {"wl": "workloads"}
    for plural, (rtype, *_) in KINDS.items():
        spec = registry.by_group_resource(rtype[0], rtype[2])
        if spec is not None:
            for alias in (spec.singular, *spec.short_names):
                aliases.setdefault(alias, plural)
    return aliases


ALIASES: Final = _aliases()


def open_state(state: str | None) -> tuple[ReadOnlyStore, datetime]:
    if not state:
        raise CannotRead("no state directory: give --state DIR or set KUOTA_STATE")
    if not Path(state).is_dir():
        raise CannotRead(f"{state}: no such state directory")
    try:
        store = open_readonly(state)  # reads only: never the journal's format
    except StoreError as err:  # (it names the state or its file)
        raise CannotRead(str(err)) from None
    except OSError as err:
        raise CannotRead(f"{state}: {err.strerror or err}") from None
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
    if wide and name == "workloads":
        head += ["JOB TYPE", "JOB NAME"]
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


def events_for(store: ReadOnlyStore, obj: Any) -> list[Any]:
    """The stored events about ``obj``, oldest first."""
    m = obj.metadata
    items = store.list(EVENT, m.namespace or "default").items
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
            wl = store.get(WORKLOAD, ns, name)
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


def _when(ts: datetime | None) -> str:
    """A time as ``oc describe`` prints it."""
    return ts.strftime("%a, %d %b %Y %H:%M:%S %z") if ts is not None else "<none>"


def _map_lines(label: str, items: dict[str, str] | None, width: int) -> list[str]:
    """``Labels:  a=b`` with each further entry on its own aligned line."""
    pairs = [f"{k}={v}" for k, v in sorted((items or {}).items())] or ["<none>"]
    head = f"{label}:".ljust(width)
    return [head + pairs[0], *(" " * width + p for p in pairs[1:])]


def _owned_workload(store: ReadOnlyStore, job: Any) -> Any | None:
    """The Workload Kueue made for ``job``: the one whose controller is it."""
    m = job.metadata
    for wl in store.list(WORKLOAD, m.namespace).items:
        for ref in wl.metadata.owner_references or ():
            if ref.kind == "Job" and ref.name == m.name and (not m.uid or ref.uid == m.uid):
                return wl
    return None


def _workload_line(store: ReadOnlyStore, wl: Any | None, now: datetime) -> str:
    if wl is None:
        return "<none>"
    name = wl.metadata.name
    adm = wl.status.admission if wl.status else None
    cq = f" by ClusterQueue {adm.cluster_queue}" if adm is not None else ""
    admitted = _cond_status(wl, "Admitted") == "True"
    if _cond_status(wl, "Finished") == "True":
        return f"{name} (admitted{cq}, finished)" if admitted else f"{name} (finished)"
    if admitted:
        return f"{name} (admitted{cq})"
    if _cond_status(wl, "QuotaReserved") == "True":
        return f"{name} (not admitted: quota reserved{cq}, waiting for admission checks)"
    reason = _pending_reason(store, wl, now)
    return f"{name} (not admitted: {reason})" if reason else f"{name} (not admitted)"


def describe_job(name: str, state: str | None, namespace: str | None, console: Console) -> int:
    """``oc describe job`` with the Kueue Workload it owns and why it waits."""
    store, now = open_state(state)
    try:
        ns = namespace or "default"
        try:
            job = store.get(JOB, ns, name)
        except StoreError:
            console.print(
                f'Error from server (NotFound): jobs.batch "{name}" not found', markup=False
            )
            return 1
        wl = _owned_workload(store, job)
        workload = _workload_line(store, wl, now)
        events = events_for(store, job)
    finally:
        store.close()
    m, spec, st = job.metadata, job.spec, job.status
    w = 18
    # The API defaults completions to 1 when neither it nor parallelism is given.
    completions = (
        spec.completions
        if spec.completions is not None
        else (1 if spec.parallelism == 1 else "<unset>")
    )
    lines = [
        f"{'Name:':<{w}}{m.name}",
        f"{'Namespace:':<{w}}{m.namespace}",
        *_map_lines("Labels", m.labels, w),
        *_map_lines("Annotations", m.annotations, w),
        f"{'Parallelism:':<{w}}{spec.parallelism}",
        f"{'Completions:':<{w}}{completions}",
        f"{'Completion Mode:':<{w}}{spec.completion_mode}",
        f"{'Suspend:':<{w}}{str(bool(spec.suspend)).lower()}",
        f"{'Backoff Limit:':<{w}}{spec.backoff_limit}",
        f"{'Start Time:':<{w}}{_when(st.start_time if st else None)}",
    ]
    if st is not None and st.completion_time is not None:
        lines.append(f"{'Completed At:':<{w}}{_when(st.completion_time)}")
        if st.start_time is not None:
            lines.append(f"{'Duration:':<{w}}{_age_between(st.start_time, st.completion_time)}")
    active, succeeded, failed = (st.active, st.succeeded, st.failed) if st else (0, 0, 0)
    ready = (st.ready if st else None) or 0
    lines.append(
        f"{'Pods Statuses:':<{w}}{active} Active ({ready} Ready) / "
        f"{succeeded} Succeeded / {failed} Failed"
    )
    lines.append(f"{'Workload:':<{w}}{workload}")
    console.print("\n".join(lines), markup=False, soft_wrap=True)
    conds = (st.conditions if st else None) or ()
    if conds:
        t = Table(title="Conditions", title_justify="left", box=None, header_style="")
        for col in ("TYPE", "STATUS", "REASON", "LAST TRANSITION", "MESSAGE"):
            t.add_column(col)
        for c in conds:
            t.add_row(
                c.type, c.status, c.reason or "", str(c.last_transition_time or ""), c.message or ""
            )
        console.print(t)
    else:
        console.print(f"{'Conditions:':<{w}}<none>", markup=False)
    print_events(events, now, console)
    return 0


def _pending_reason(store: ReadOnlyStore, wl: Any, now: datetime) -> str:
    """The admission core's one-line reason, rebuilt from the stored objects."""
    return pending_reasons(store, now)(wl)


def pending_reasons(store: ReadOnlyStore, now: datetime) -> Callable[[Any], str]:
    """Why each waiting workload waits, in the admission core's one line ("" for
    one that holds quota or finished); the core is rebuilt from the stored
    objects once, at the first workload that waits."""
    from kuota.controllers.kueue import WATCHED

    core: list[AdmissionCore] = []

    def reason(wl: Any) -> str:
        if _cond_status(wl, "QuotaReserved") == "True" or _cond_status(wl, "Finished") == "True":
            return ""
        try:
            if not core:
                core.append(AdmissionCore(_stored_config(store), now))
                for rtype in WATCHED:
                    for o in store.list(rtype).items:
                        core[0].add(clone(o))
            return core[0].explain(f"{wl.metadata.namespace}/{wl.metadata.name}")
        except Exception as err:  # the explanation is a courtesy; never fail describe
            return f"(no explanation: {err})"

    return reason


def _stored_config(store: ReadOnlyStore) -> Any:
    """The Kueue configuration the run used (kept in the state), else the default."""
    from kuota.api.kueue.config import load_config
    from kuota.cli.world import _default_config

    raw = store.get_meta(CONFIG_META)
    cfg = load_config(raw)[0] if raw else None
    return cfg if cfg is not None else _default_config()
