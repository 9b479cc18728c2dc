"""``kuota get`` and ``kuota describe`` over a kept state directory, with the
columns users know from ``oc get``."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import click
import yaml
from rich.console import Console
from rich.table import Table

from kuota.cli.files import CannotRead
from kuota.cli.get_columns import (
    ALIASES,
    VIEWS,
    _age_between,
    _cond_status,
    resource_name,
)
from kuota.cli.served_form import served_form
from kuota.cli.table_text import output_width, render
from kuota.embedded.state_meta import CLOCK_META, CONFIG_META
from kuota.store import ReadOnlyStore, StoreError, clone, open_readonly
from kuota.store.resources import EVENT, JOB, WORKLOAD


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
    names: tuple[str, ...] = (),
) -> int:
    """``kuota get RESOURCE [NAME...]``: every stored kind, by name too; a name
    not there is kubectl's NotFound (exit 1), the others still printed."""
    plural = ALIASES.get(resource, resource)
    opened: tuple[ReadOnlyStore, datetime] | None = None
    if plural not in VIEWS and state and (Path(state) / "KUOTA-STATE").exists():
        # A kind a stored CustomResourceDefinition defines is known once the
        # state is read.
        opened = open_state(state)
        plural = ALIASES.get(resource, resource)
    if plural not in VIEWS:
        console.print(
            f'error: the server doesn\'t have a resource type "{resource}" '
            f"(kuota knows: {', '.join(VIEWS)})",
            markup=False,
        )
        return 1
    view = VIEWS[plural]
    store, now = opened if opened is not None else open_state(state)
    missing: list[str] = []
    try:
        if names:
            ns = (namespace or "default") if view.namespaced else None
            items = []
            for name in names:
                try:
                    items.append(store.get(view.rtype, ns or "", name))
                except StoreError:
                    missing.append(name)
        else:
            ns = None if all_namespaces or not view.namespaced else (namespace or "default")
            items = store.list(view.rtype, ns).items
    finally:
        store.close()
    for name in missing:
        click.echo(
            f'Error from server (NotFound): {resource_name(plural)} "{name}" not found', err=True
        )
    code = 1 if missing else 0
    if output in ("json", "yaml"):
        if items or not names:
            doc: dict[str, Any] = (
                served_form(items[0])
                if len(names) == 1
                else {"apiVersion": "v1", "kind": "List", "items": [served_form(o) for o in items]}
            )
            text = (
                json.dumps(doc, indent=4, default=str)
                if output == "json"
                else yaml.safe_dump(json.loads(json.dumps(doc, default=str)), sort_keys=False)
            )
            console.print(text, markup=False, highlight=False, soft_wrap=True)
        return code
    if not items:
        if not names:
            where = f" in {ns} namespace" if ns else ""
            console.print(f"No resources found{where}.", markup=False)
        return code
    if plural == "bizgroupresourcequotas":  # the tree, key by key
        from kuota.cli.bizrq_view import bizrq_tree

        with contextlib.closing(open_state(state)[0]) as again:
            return bizrq_tree(again, items, now, console) or code
    wide = output == "wide"
    if not view.named:
        items = sorted(items, key=_event_time)
    with_ns = view.namespaced and ns is None
    head = (["NAMESPACE"] if with_ns else []) + (["NAME"] if view.named else [])
    head += view.columns + (view.wide if wide else [])
    rows = []
    for o in items:
        cells = [o.metadata.namespace] if with_ns else []
        cells += [o.metadata.name] if view.named else []
        rows.append([*cells, *view.row(o, now, wide)])
    console.print(render(head, rows, output_width()), markup=False, highlight=False, soft_wrap=True)
    if plural == "pods":
        from kuota.cli.podview import unschedulable_notes

        unschedulable_notes(items, console, with_namespace=ns is None)
    return code


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
                f'Error from server (NotFound): workloads.kueue.x-k8s.io "{name}" not found',
                markup=False,
            )
            return 1
        reason = _pending_reason(store, wl, now)
        events = events_for(store, wl)
        preemptor = _preemptor(store, wl)
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
    if preemptor:
        lines.append(f"Preempted by:  {preemptor}")
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


_PREEMPTOR_UID: Final = re.compile(r"Preempted to accommodate a workload \(UID: ([^,)]+)")


def _preemptor(store: ReadOnlyStore, wl: Any) -> str:
    """The workload that last preempted ``wl``, by namespace/name: Kueue's
    message names it by UID and its ClusterQueue's path only."""
    conds = (wl.status.conditions if wl.status else None) or ()
    found = [m for c in conds if (m := _PREEMPTOR_UID.match(c.message or "")) is not None]
    if not found:
        return ""
    m = found[0]
    for other in store.list(WORKLOAD).items:
        if other.metadata.uid == m[1]:
            return f"{other.metadata.namespace}/{other.metadata.name} (UID: {m[1]})"
    return f"a workload no longer there (UID: {m[1]})"


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
        checks = _pending_checks(wl)
        return f"{name} (not admitted: quota reserved{cq}, waiting for admission checks{checks})"
    reason = _pending_reason(store, wl, now)
    return f"{name} (not admitted: {reason})" if reason else f"{name} (not admitted)"


def _pending_checks(wl: Any) -> str:
    """``; AdmissionCheck in Pending state: "bizrq" (its message)`` for the
    checks that still hold a reserving workload back ("" when none does)."""
    from kuota.scheduler.admission.admission_checks import checks_message

    st = wl.status
    waiting = [c for c in (st.admission_checks if st else None) or () if c.state == "Pending"]
    return "; " + checks_message(waiting, "Pending") if waiting else ""


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
    from kuota.scheduler.admission.admission_core import AdmissionCore

    core: list[AdmissionCore] = []

    def reason(wl: Any) -> str:
        if _cond_status(wl, "Finished") == "True" or _cond_status(wl, "Admitted") == "True":
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
