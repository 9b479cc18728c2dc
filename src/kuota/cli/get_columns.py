"""The columns of ``kuota get``: kuota's own views of the kinds users look at
most (as ``oc get`` prints them), and for every other stored kind the api
registry's printer columns (a CRD's additionalPrinterColumns, a built-in
kind's server-side table)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from kuota.api import registry
from kuota.api.conditions import status_condition
from kuota.api.jsonpath import json_path
from kuota.api.kindspec import KindSpec, PrinterColumn
from kuota.api.kueue import types as kt
from kuota.cli.served_form import served_form
from kuota.store.kinds import resource_for
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


# resource name -> (rtype, namespaced, columns after NAME, row builder): the
# kinds kuota has a richer view of than the registry's printer columns.
_RICH: dict[str, tuple[ResourceType, bool, list[str], Callable[[Any, datetime, bool], Row]]] = {
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


@dataclass(frozen=True)
class View:
    """How ``kuota get`` prints one resource."""

    rtype: ResourceType
    namespaced: bool
    columns: list[str]  # after NAME
    row: Callable[[Any, datetime, bool], Row]
    wide: list[str] = field(default_factory=list)  # more columns with ``-o wide``
    named: bool = True  # a NAME column (events have none, as oc prints them)


_WIDE: Final = {
    "pods": ["QOS CLASS", "NODE"],
    "workloads": ["JOB TYPE", "JOB NAME"],
    "nodeoperations": ["MESSAGE"],
}


def _iso(v: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(v).replace("Z", "+00:00"))
    except ValueError:
        return None


def _cell(col: PrinterColumn, doc: dict[str, Any], now: datetime) -> str:
    values = [v for v in json_path(doc, col.json_path) if v is not None]
    if not values:
        return "<none>" if col.type == "date" else ""
    if col.type == "date":
        at = _iso(values[0])
        return _age_between(at, now) if at is not None else str(values[0])
    return ",".join(
        json_dumps(v)
        if isinstance(v, dict | list)
        else str(v).lower()
        if isinstance(v, bool)
        else str(v)
        for v in values
    )


def json_dumps(v: Any) -> str:
    import json

    return json.dumps(v, separators=(",", ":"), sort_keys=True)


# Cells the API server computes for built-in kinds (its table convertors),
# by (resource, column): what the registry cannot say by a JSONPath.
def _owner(o: Any) -> str:
    refs = [r for r in o.metadata.owner_references or () if r.controller]
    if not refs:
        return "<none>"
    group = refs[0].api_version.rpartition("/")[0]
    kind = f"{refs[0].kind.lower()}.{group}" if group else refs[0].kind.lower()
    return f"{kind}/{refs[0].name}"


def _template_containers(o: Any, attr: str) -> str:
    spec = o.template.spec if o.template is not None else None
    return ",".join(getattr(c, attr) or "" for c in (spec.containers if spec else None) or ()) or (
        "<none>"
    )


_COMPUTED: Final[dict[tuple[str, str], Callable[[Any, datetime], str]]] = {
    ("namespaces", "Status"): lambda o, now: (o.status.phase if o.status else None) or "Active",
    ("priorityclasses", "Value"): lambda o, now: str(o.value),
    ("priorityclasses", "Global-Default"): lambda o, now: str(bool(o.global_default)).lower(),
    ("runtimeclasses", "Handler"): lambda o, now: o.handler,
    ("resourceslices", "Node"): lambda o, now: o.spec.node_name or "<none>",
    ("resourceslices", "Driver"): lambda o, now: o.spec.driver,
    ("resourceslices", "Pool"): lambda o, now: o.spec.pool.name,
    ("controllerrevisions", "Controller"): lambda o, now: _owner(o),
    ("controllerrevisions", "Revision"): lambda o, now: str(o.revision),
    ("services", "Type"): lambda o, now: o.spec.type,
    ("services", "Cluster-IP"): lambda o, now: o.spec.cluster_ip or "<none>",
    ("services", "External-IP"): lambda o, now: "<none>",
    ("services", "Port(s)"): lambda o, now: (
        ",".join(f"{p.port}/{p.protocol}" for p in o.spec.ports or ()) or "<none>"
    ),
    ("services", "Selector"): lambda o, now: (
        ",".join(f"{k}={v}" for k, v in sorted((o.spec.selector or {}).items())) or "<none>"
    ),
    ("podtemplates", "Containers"): lambda o, now: _template_containers(o, "name"),
    ("podtemplates", "Images"): lambda o, now: _template_containers(o, "image"),
    ("podtemplates", "Pod Labels"): lambda o, now: (
        ",".join(f"{k}={v}" for k, v in sorted((o.template.metadata.labels or {}).items()))
        if o.template is not None and o.template.metadata.labels
        else "<none>"
    ),
    ("limitranges", "Created At"): lambda o, now: (
        o.metadata.creation_timestamp.strftime("%Y-%m-%dT%H:%M:%SZ")
        if o.metadata.creation_timestamp
        else "<unknown>"
    ),
}


def _registry_view(spec: KindSpec) -> View:
    """NAME and the kind's printer columns; a CRD that declares none gets AGE,
    as the API server's default table."""
    cols = list(spec.storage_version.columns) or [
        PrinterColumn("Age", "date", ".metadata.creationTimestamp")
    ]
    shown = [c for c in cols if c.priority == 0]
    wide = [c for c in cols if c.priority != 0]

    def cells(o: Any, now: datetime, with_wide: bool) -> Row:
        doc = served_form(o) if any(c.json_path for c in cols) else {}
        out = []
        for c in (*shown, *wide) if with_wide else shown:
            if c.json_path:
                out.append(_cell(c, doc, now))
            elif c.name == "Age":
                out.append(_age(o, now))
            else:
                fn = _COMPUTED.get((spec.plural, c.name))
                out.append(fn(o, now) if fn is not None else "<unknown>")
        return out

    rtype = resource_for(spec.api_version(spec.storage_version), spec.kind)
    return View(
        rtype,
        spec.namespaced,
        [c.name.upper() for c in shown],
        cells,
        [c.name.upper() for c in wide],
    )


def _views() -> dict[str, View]:
    views = {
        plural: View(rtype, ns, columns, row, _WIDE.get(plural, []), named=plural != "events")
        for plural, (rtype, ns, columns, row) in _RICH.items()
    }
    for spec in registry.KINDS:
        if spec.stored and spec.plural not in views:
            views[spec.plural] = _registry_view(spec)
    return views


VIEWS: Final = _views()


def _aliases() -> dict[str, str]:
    """The other names `kuota get` takes for each resource, as kubectl takes
    them: the kind's singular and short names from the api registry, plus
    kuota's own "wl" for workloads (Kueue's own short name is "kwl")."""
    aliases = {"wl": "workloads"}
    for plural, view in VIEWS.items():
        spec = registry.by_group_resource(view.rtype[0], plural)
        if spec is not None:
            names = (plural, spec.singular, *spec.short_names)
            for alias in names[1:]:
                aliases.setdefault(alias, plural)
            if spec.group:  # as kubectl takes them: resource.group (jobs.batch)
                for alias in names:
                    aliases.setdefault(f"{alias}.{spec.group}", plural)
    return aliases


ALIASES: Final = _aliases()


def _registered(spec: registry.KindSpec) -> None:
    """A kind a CustomResourceDefinition defines: shown with its printer
    columns, under its plural, singular and short names."""
    if not spec.stored or (spec.plural in VIEWS and spec.plural in _RICH):
        return
    VIEWS[spec.plural] = _registry_view(spec)
    for alias in (spec.singular, *spec.short_names):
        ALIASES.setdefault(alias, spec.plural)
    for alias in (spec.plural, spec.singular, *spec.short_names):
        ALIASES.setdefault(f"{alias}.{spec.group}", spec.plural)


registry.on_register(_registered)


def resource_name(plural: str) -> str:
    """The resource as kubectl names it in errors: ``jobs.batch``, ``pods``."""
    group = VIEWS[plural].rtype[0]
    return f"{plural}.{group}" if group else plural
