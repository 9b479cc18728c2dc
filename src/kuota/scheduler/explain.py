"""Why a workload waits, in one line with the numbers a person can act on.

Kueue's condition messages say what failed ("insufficient unused quota for
cpu in flavor default, 2 more needed"); this says what to change: how much
was asked, how much is free, and where the limit comes from (nominal quota,
borrowing limit, what the cohort has unused).
"""

from __future__ import annotations

from typing import Any

from kuota.api.conditions import find_condition
from kuota.quota.requests import resource_quantity
from kuota.quota.tree import FR, available, cq_available, local_quota, potential_available
from kuota.quota.workload import has_quota_reservation, is_admitted, is_finished
from kuota.scheduler.admission.admissibility import Admissibility
from kuota.scheduler.admission.state import CoreState
from kuota.scheduler.cache import ClusterQueueState
from kuota.scheduler.flavorassigner.matching import flavor_mismatch


def _q(resource: str, v: int) -> str:
    return str(resource_quantity(resource, v))


def quota_line(cq: ClusterQueueState, fr: FR, requested: int, taken: int = 0) -> str:
    """The quota arithmetic for one flavor and resource; ``taken``: what the
    workload's earlier pod sets take of it."""
    node = cq.node
    flavor, r = fr
    free = max(0, cq_available(node, fr) - taken)
    most = potential_available(node, fr) - taken
    q = node.quotas.get(fr)
    nominal = q.nominal if q else 0
    parts = [f"nominal {_q(r, nominal)}"]
    if q is not None and q.borrowing_limit is not None:
        parts.append(f"borrowing limit {_q(r, q.borrowing_limit)}")
    if node.parent is not None:
        # What the cohort could lend beyond this queue's own unused share.
        lq = local_quota(node, fr)
        own_in_parent = (node.subtree.get(fr, 0) - lq) - max(0, node.usage.get(fr, 0) - lq)
        unused = max(0, available(node.parent, fr) - max(0, own_in_parent))
        parts.append(f"the rest of cohort {node.parent.name} has {_q(r, unused)} unused")
    else:
        parts.append("no cohort to borrow from")
    detail = ", ".join(parts)
    besides = f" besides the {_q(r, taken)} of the pod sets before" if taken else ""
    if requested > most:
        return (
            f"{r} in flavor {flavor}: {_q(r, requested)} requested{besides}, more than "
            f"this ClusterQueue can ever get ({_q(r, max(0, most))}; {detail})"
        )
    return (
        f"insufficient unused quota for {r} in flavor {flavor}: {_q(r, requested)} "
        f"requested{besides}, {_q(r, free)} available ({detail})"
    )


def _reserving(wl: Any) -> str:
    """A workload holding quota: admitted, or waiting for its admission
    checks (each named with its state and its controller's message)."""
    st = wl.status
    waiting = [c for c in (st.admission_checks or () if st else ()) if c.state != "Ready"]
    if is_admitted(wl) or not waiting:
        return "holds its quota reservation"
    cq = st.admission.cluster_queue if st.admission is not None else ""
    parts = [f"{c.name} ({c.state}{': ' + c.message if c.message else ''})" for c in waiting]
    return f"holds its quota in ClusterQueue {cq}, waiting for admission checks: {'; '.join(parts)}"


def explain(state: CoreState, adm: Admissibility, key: str) -> str:
    wl = state.workloads.get(key)
    if wl is None:
        return f"workload {key} does not exist"
    if is_finished(wl):
        return "finished"
    if has_quota_reservation(wl):
        return _reserving(wl)
    if not wl.spec.active:
        return "deactivated (spec.active is false)"
    ns, _ = key.split("/", 1)
    lq_name = wl.spec.queue_name or ""
    if not lq_name:
        return (
            "names no LocalQueue (spec.queueName is empty: label the job "
            "kueue.x-k8s.io/queue-name, or create a LocalQueue named default in "
            f"namespace {ns})"
        )
    lq = state.lq_objs.get(f"{ns}/{lq_name}")
    if lq is None:
        return f"LocalQueue {ns}/{lq_name} does not exist"
    if (lq.spec.stop_policy or "None") != "None":
        return f"LocalQueue {ns}/{lq_name} is stopped ({lq.spec.stop_policy})"
    cq_name = lq.spec.cluster_queue or ""
    cq = state.snap.cqs.get(cq_name)
    if cq is None or cq_name not in state.cq_objs:
        return f"ClusterQueue {cq_name} does not exist"
    if not cq.active:
        return f"ClusterQueue {cq_name} is inactive: {cq.inactive_message}"
    if ns not in state.namespaces:
        return f"namespace {ns} does not exist"
    if not adm.namespace_matches(cq_name, ns):
        return f"namespace {ns} does not match the namespaceSelector of ClusterQueue {cq_name}"
    info = state.infos.get(key)
    if info is None:
        return "not queued"
    c = find_condition(wl, "QuotaReserved")
    if c is not None and c.reason == "WaitingForPreemptedWorkloads":
        return "waiting for the workloads it preempted to release their quota"
    if c is not None and c.reason == "WaitingForPodsReady":
        return "waiting for every admitted workload to reach PodsReady (blockAdmission)"
    lines: list[str] = []
    # As Kueue's flavor assigner, quota a pod set takes counts against the
    # ones after it; with several pod sets each line names its own.
    taken: dict[FR, int] = {}
    named = len(info.podsets) > 1
    for i, ps in enumerate(info.podsets):
        spec = wl.spec.pod_sets[i].template.spec if i < len(wl.spec.pod_sets) else None
        where = (
            f"pod set {wl.spec.pod_sets[i].name}: " if named and i < len(wl.spec.pod_sets) else ""
        )
        for r, v in sorted(ps.requests.items()):
            if not v:
                continue
            rg = cq.rg_for(r)
            if rg is None:
                lines.append(f"{r} is not covered by ClusterQueue {cq_name}")
                continue
            # The flavor that comes closest tells the most useful story.
            best: tuple[int, str] | None = None
            mismatches = []
            for f in rg.flavors:
                why = flavor_mismatch(state.flavors.get(f), f, spec)
                if why is not None:
                    mismatches.append(why)
                    continue
                fr = (f, r)
                before = taken.get(fr, 0)
                free = cq_available(cq.node, fr) - before
                if free >= v:
                    taken[fr] = before + v
                    best = None
                    break
                if best is None or free > best[0]:
                    best = (free, where + quota_line(cq, fr, v, before))
            if best is not None:
                lines.append(best[1])
            elif mismatches and len(mismatches) == len(rg.flavors):
                lines.append(
                    f"{where}no flavor for {r} fits the pod template: " + ", ".join(mismatches)
                )
    if lines:
        return "; ".join(dict.fromkeys(lines))
    if c is not None and c.message:
        return c.message
    return "waiting for the next scheduling cycle"
