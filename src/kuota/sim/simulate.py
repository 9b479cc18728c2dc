"""``kuota simulate``: a job trace replayed against quota designs.

Each trace row becomes one batch/v1 Job (``pods`` = parallelism and
completions; per pod the row's GPUs, CPUs and memory as requests; run time
``duration_s`` through the ``kuota.dev/duration`` annotation) created at its
``submit_s`` (the run starts at the trace's first submission), labelled
with its team's LocalQueue. The
design (flavors, ClusterQueues, cohorts, LocalQueues, priority classes,
nodes) runs in the embedded control plane in virtual time: Kueue's
controllers admit, the Job controller makes pods, placement binds them,
the kubelet runs them. Nodes come from the design; if it has none, from
the trace's node list (``--nodes``); if neither, one node per flavor holding
that flavor's whole nominal GPU quota (quota is then the only limit).

Everything the design and mapping get wrong is found before anything runs
and reported as an :class:`InputError` naming a line and column.
Designs run one after another, or in parallel processes (``jobs``).
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import queue as queue_mod
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from kuota.api.decode import decode_object
from kuota.api.kueue.config import KueueConfig
from kuota.quota.requests import resource_value
from kuota.runtime import gcpolicy
from kuota.sim.budget_burn import BudgetBurn, group_labels, job_labels, refused_by_group
from kuota.sim.decision_log import DecisionLog, WorkloadWatcher
from kuota.sim.instant_limit import InstantLimit, repeating_notice
from kuota.sim.mapping import Mapping, TeamTarget, gpu_request, k8s_name
from kuota.sim.report import DesignResult, SimRecorder, build_result
from kuota.sim.trace import InputError, NodeRow, SummaryBuilder, Trace, TraceRow
from kuota.store.resources import WORKLOAD

__all__ = [
    "START",
    "Design",
    "Plan",
    "Progress",
    "nodes_from_list",
    "nodes_from_quota",
    "prepare",
    "replay",
    "replay_path",
    "run_plan",
    "simulate",
]

START = datetime(2026, 1, 1, tzinfo=UTC)
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
DURATION = "kuota.dev/duration"
TRACE_JOB = "kuota.dev/trace-job"
MODEL_LABEL = "nvidia.com/gpu.product"
HOST_LABEL = "kubernetes.io/hostname"
_BIG_CPU = "1000000"
_BIG_MEMORY = "1000000Gi"
_BIG_PODS = "1000000"

# (design, finished jobs, total jobs, virtual seconds since the start)
Progress = Callable[[str, int, int, float], None]


@dataclass
class Design:
    """A quota design: the objects of one world (``kuota.cli.world.load_world``)."""

    name: str
    source: str
    objects: list[Any]
    config: KueueConfig
    openshift: bool = False
    scheduler: Any = None  # OpenShift's Scheduler config: the placement profile
    # (kind, namespace, name) -> "file (document N): Kind/name", where it was read
    sources: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def where(self, kind: str, namespace: str, name: str) -> str:
        ref = f"{kind}/{namespace}/{name}" if namespace else f"{kind}/{name}"
        return self.sources.get((kind, namespace, name)) or f"{self.source}: {ref}"


@dataclass
class TeamPlan:
    team: str
    target: TeamTarget
    cluster_queue: str
    nominal_gpus: float  # the ClusterQueue's nominal GPU quota, shared among its teams
    jobs: int = 0


@dataclass
class Plan:
    design: Design
    trace: Trace
    mapping: Mapping
    objects: list[Any]  # the design's objects and nodes if generated
    selectors: dict[str, dict[str, str] | None]  # GPU model -> nodeSelector
    teams: dict[str, TeamPlan]
    nodes_from: str
    nominal_gpus: float
    warnings: list[str] = field(default_factory=list)
    # Filled as the trace's Jobs are made (job_groups), not before: a long
    # trace's Jobs are never all in memory at once.
    job_team: dict[str, str] = field(default_factory=dict)  # "namespace/job" -> team
    job_created: dict[str, datetime] = field(default_factory=dict)  # until its first pod runs
    # Every job's submission, seconds from the first (the report's time axis).
    submit_s: list[float] = field(default_factory=list)
    # LocalQueue key -> the business group its label names (sim.budget_burn)
    queue_groups: dict[str, str] = field(default_factory=dict)

    @property
    def total_jobs(self) -> int:
        return self.trace.count

    def job_groups(self) -> Iterator[tuple[datetime, list[Any]]]:
        """The trace's Jobs, one instant at a time, made when asked for."""
        origin = self.trace.first_submit_s  # the run starts at the first submission
        used: set[str] = set()
        at: Decimal | None = None
        group: list[Any] = []
        for row in self.trace:
            if row.submit_s != at:
                if group:
                    yield group[0].metadata.creation_timestamp, group
                at, group = row.submit_s, []
            tp = self.teams[row.team]
            name = _job_name(row, tp.target.namespace, used)
            sel = self.selectors.get(row.gpu_model) if row.gpus > 0 else None
            job = _job(row, name, tp.target, self.mapping, sel, origin)
            if self.queue_groups:
                biz = self.queue_groups.get(tp.target.key)
                job.metadata.labels.update(job_labels(biz, _label_value(row.gpu_model)))
            key = f"{tp.target.namespace}/{name}"
            self.job_team[key] = row.team
            self.job_created[key] = job.metadata.creation_timestamp
            self.submit_s.append(float(row.submit_s - origin))
            group.append(job)
        if group:
            yield group[0].metadata.creation_timestamp, group


# ---------------------------------------------------------------------- the design
def _by_kind(objects: list[Any], kind: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for o in objects:
        if o.kind == kind:
            m = o.metadata
            out[f"{m.namespace}/{m.name}" if m.namespace else m.name] = o
    return out


def _covered(cq: Any) -> set[str]:
    return {r for g in (cq.spec.resource_groups or ()) for r in g.covered_resources}


def _flavors_of(cq: Any) -> set[str]:
    return {f.name for g in (cq.spec.resource_groups or ()) for f in g.flavors}


def _nominal(obj: Any, resource: str) -> dict[str, int]:
    """Nominal quota of ``resource`` per flavor of a ClusterQueue or Cohort."""
    out: dict[str, int] = {}
    for g in (obj.spec.resource_groups if obj.spec else None) or ():
        for f in g.flavors:
            for r in f.resources:
                if r.name == resource:
                    out[f.name] = out.get(f.name, 0) + resource_value(resource, r.nominal_quota)
    return out


def _where_team(trace: Trace, row: TraceRow, target: TeamTarget) -> tuple[str, int, int]:
    return target.where or (trace.path, row.line, trace.col(row, "team"))


def _check_teams(
    plan_teams: dict[str, TeamPlan],
    trace: Trace,
    design: Design,
    m: Mapping,
    checking: Callable[[int], None] | None = None,
) -> dict[tuple[str, str], TraceRow]:
    """Every team's queue exists, its ClusterQueue covers what the team asks for,
    its priority class exists. Returns the first row of each team and GPU
    model asking for GPUs (for _model_selectors: one read of the trace)."""
    lqs = _by_kind(design.objects, "LocalQueue")
    cqs = _by_kind(design.objects, "ClusterQueue")
    classes = set(_by_kind(design.objects, "WorkloadPriorityClass"))
    summary = trace.summary
    if summary is None:  # (a trace out of submission order: its rows in that order)
        summing = SummaryBuilder()
        for r in trace:
            summing.add(r)
            if checking is not None and r.line % 4096 == 0:
                checking(r.line)
        summary = summing.done()
    if checking is not None:
        checking(trace.last_line)
    first, jobs, pairs = summary.first, summary.jobs, summary.pairs
    # (team, column) -> the first row asking, for the columns the mapping requests
    asked = {"gpus": "gpus", "cpus": "cpus", "memory_mib": "memory"}
    needs = {k: r for k, r in summary.needs.items() if asked[k[1]] in m.requests}
    per_cq: dict[str, int] = {}
    for team, row in first.items():
        target = m.team(team)
        where = _where_team(trace, row, target)
        if not target.namespace or not target.queue:
            raise InputError(
                *where, f'team "{team}" cannot be made a Kubernetes name: map it in --mapping'
            )
        lq = lqs.get(target.key)
        if lq is None:
            how = (
                "where the mapping sends it"
                if target.where
                else "where the default mapping sends it (team T -> LocalQueue T in "
                "namespace T, lower-cased)"
            )
            raise InputError(
                *where,
                f'team "{team}" has no queue: design {design.name} has no LocalQueue '
                f"{target.key}, {how}; add one or map the team in --mapping",
            )
        cq_name = lq.spec.cluster_queue or ""
        cq = cqs.get(cq_name)
        if cq is None:
            raise InputError(
                *where,
                f'team "{team}": LocalQueue {target.key} points at ClusterQueue "{cq_name}", '
                f"which design {design.name} does not have",
            )
        if target.priority_class and target.priority_class not in classes:
            raise InputError(
                *where,
                f'team "{team}": design {design.name} has no WorkloadPriorityClass '
                f'"{target.priority_class}"',
            )
        covered = _covered(cq)
        for column, resource in (
            ("gpus", m.gpu_resource),
            ("cpus", "cpu"),
            ("memory_mib", "memory"),
        ):
            r = needs.get((team, column))
            if r is not None and resource not in covered:
                hint = (
                    f" (fractionalGpus: {m.fractional})"
                    if column == "gpus"
                    else f' (or leave "{column.split("_")[0]}" out of the mapping\'s requests)'
                )
                raise InputError(
                    trace.path,
                    r.line,
                    trace.col(r, column),
                    f'{column}: team "{team}" asks for {resource}, which ClusterQueue '
                    f"{cq_name} (design {design.name}) does not cover{hint}",
                )
        per_cq[cq_name] = per_cq.get(cq_name, 0) + 1
        plan_teams[team] = TeamPlan(team, target, cq_name, 0.0, jobs[team])
    _check_admissible(design, plan_teams, needs, m)
    for tp in plan_teams.values():
        nominal = sum(_nominal(cqs[tp.cluster_queue], m.gpu_resource).values())
        tp.nominal_gpus = nominal / m.gpu_scale / per_cq[tp.cluster_queue]
    return pairs


class DesignError(InputError):
    """A design that cannot run a trace: ``file (document N): Kind/name: reason``."""

    def __init__(self, where: str, reason: str) -> None:
        Exception.__init__(self, f"{where}: {reason}")
        self.file, self.line, self.col, self.reason = where, 0, 0, reason


def _root(cohort: str | None, cohorts: dict[str, Any]) -> str | None:
    """The root of a cohort's tree (Cohort objects name their parents)."""
    seen: set[str] = set()
    while cohort and cohort not in seen:
        seen.add(cohort)
        parent = cohorts[cohort].spec.parent_name if cohort in cohorts else None
        if not parent:
            return cohort
        cohort = parent
    return cohort


def _check_admissible(
    design: Design,
    teams: dict[str, TeamPlan],
    needs: dict[tuple[str, str], TraceRow],
    m: Mapping,
) -> None:
    """Each team's queues are active, as Kueue's cache judges them (the reason
    ``kuota run`` shows: a ClusterQueue's Active=False reason, a missing
    ResourceFlavor, a stop policy, ...), and its cohort tree has quota for
    what the team asks: else nothing of the team would ever be admitted."""
    from kuota.controllers.kueue import WATCHED
    from kuota.scheduler.admission.admission_core import AdmissionCore
    from kuota.store import clone
    from kuota.store.kinds import rtype_of

    core = AdmissionCore(design.config, START)
    for o in design.objects:
        if rtype_of(o) in WATCHED:
            core.add(clone(o))
    cqs = _by_kind(design.objects, "ClusterQueue")
    cohorts = _by_kind(design.objects, "Cohort")
    for tp in teams.values():
        cq = core.cluster_queue(tp.cluster_queue)
        if cq is not None and not cq.active:
            raise DesignError(
                design.where("ClusterQueue", "", tp.cluster_queue),
                f"inactive ({cq.reason}): "
                f"{(cq.message or 'it cannot admit workloads').rstrip('.')}; "
                f'team "{tp.team}" queues to it',
            )
        lq = core.local_queue(tp.target.key)
        if lq is not None and not lq.active and lq.reason != "ClusterQueueIsInactive":
            ns, _, name = tp.target.key.partition("/")
            raise DesignError(
                design.where("LocalQueue", ns, name),
                f'inactive ({lq.reason}); team "{tp.team}" queues to it',
            )
        obj = cqs[tp.cluster_queue]
        # The quota the team may use: its ClusterQueue's and its cohort tree's.
        root = _root(obj.spec.cohort_name, cohorts)
        pool = [obj]
        if root:
            pool += [q for q in cqs.values() if _root(q.spec.cohort_name, cohorts) == root]
            pool += [c for n, c in cohorts.items() if _root(n, cohorts) == root]
        for column, resource in (
            ("gpus", m.gpu_resource),
            ("cpus", "cpu"),
            ("memory_mib", "memory"),
        ):
            if (tp.team, column) in needs and not any(
                sum(_nominal(o, resource).values()) for o in pool
            ):
                where = f" or its cohort tree {root}" if root else ""
                raise DesignError(
                    design.where("ClusterQueue", "", tp.cluster_queue),
                    f"no nominal quota of {resource} in it{where}: "
                    f'team "{tp.team}"\'s jobs, which ask for it, can never be admitted',
                )


def _model_selectors(
    trace: Trace,
    pairs: dict[tuple[str, str], TraceRow],
    design: Design,
    m: Mapping,
    teams: dict[str, TeamPlan],
    warnings: list[str],
) -> dict[str, dict[str, str] | None]:
    """GPU model -> the nodeSelector pinning its jobs to the model's flavor
    (None: any flavor). ``pairs``: the first row of each (team, GPU model)
    asking for GPUs, in file order, so the first problem found is the
    first in the trace."""
    flavors = _by_kind(design.objects, "ResourceFlavor")
    cqs = _by_kind(design.objects, "ClusterQueue")
    out: dict[str, dict[str, str] | None] = {}
    checked: set[tuple[str, str]] = set()
    for r in pairs.values():
        model = r.gpu_model
        if model not in out:
            name, where = m.flavor(model)
            if name is None:
                out[model] = None
                continue
            where = where or (trace.path, r.line, trace.col(r, "gpu_model"))
            fl = flavors.get(name)
            if fl is None:
                what = f'GPU model "{model}"' if model else "jobs that name no GPU model"
                raise InputError(
                    *where,
                    f'unknown GPU model: {what} maps to ResourceFlavor "{name}", which design '
                    f"{design.name} does not have (flavors: {', '.join(sorted(flavors)) or 'none'})",
                )
            labels = dict((fl.spec.node_labels if fl.spec else None) or {})
            if not labels:
                warnings.append(
                    f'ResourceFlavor "{name}" has no nodeLabels, so jobs of GPU model "{model}" '
                    "cannot be pinned to it: they may use any flavor"
                )
            out[model] = labels or None
        name, where = m.flavor(model)
        tp = teams[r.team]
        if name is not None and (r.team, model) not in checked:
            checked.add((r.team, model))
            if name not in _flavors_of(cqs[tp.cluster_queue]):
                raise InputError(
                    *(where or (trace.path, r.line, trace.col(r, "gpu_model"))),
                    f'GPU model "{model}" maps to ResourceFlavor "{name}", which team '
                    f'"{r.team}"\'s ClusterQueue {tp.cluster_queue} does not offer',
                )
    return out


# ---------------------------------------------------------------------- nodes
def _quantity(d: Decimal) -> str:
    return format(d.normalize(), "f") if d != d.to_integral_value() else str(int(d))


def _label_value(text: str) -> str:
    s = "".join(c if c.isalnum() or c in "-_." else "-" for c in text)[:63]
    return s.strip("-_.") or "unknown"


def _node(name: str, labels: dict[str, str], alloc: dict[str, str], taints: Any) -> Any:
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = [
            {"key": t.key, "value": t.value, "effect": t.effect}
            if t.value is not None
            else {"key": t.key, "effect": t.effect}
            for t in taints
        ]
    return _decode(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {HOST_LABEL: name, **labels}},
            "spec": spec,
            "status": {
                "capacity": alloc,
                "allocatable": alloc,
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        },
        "node",
    )


def nodes_from_list(rows: list[NodeRow], m: Mapping) -> list[Any]:
    """Nodes of a trace's node list, labelled ``nvidia.com/gpu.product=<model>``."""
    out = []
    used: set[str] = set()
    for r in rows:
        name = k8s_name(r.node_id) or f"node-{r.line}"
        if name in used:
            name = f"{name}-{r.line}"
        used.add(name)
        alloc = {
            "cpu": _quantity(r.cpus),
            "memory": f"{_quantity(r.memory_mib)}Mi",
            "pods": "110",
        }
        if r.gpus:
            alloc[m.gpu_resource] = str(r.gpus * m.gpu_scale)
        labels = {MODEL_LABEL: _label_value(r.gpu_model)} if r.gpu_model else {}
        out.append(_node(name, labels, alloc, None))
    return out


def nodes_from_quota(design: Design, m: Mapping) -> list[Any]:
    """One node per flavor with the flavor's whole nominal GPU quota (over every
    ClusterQueue and Cohort), its labels and taints, and CPU, memory and pods
    to spare: the design's quota is the only limit."""
    quota: dict[str, int] = {}
    for kind in ("ClusterQueue", "Cohort"):
        for obj in _by_kind(design.objects, kind).values():
            for f, v in _nominal(obj, m.gpu_resource).items():
                quota[f] = quota.get(f, 0) + v
            for g in (obj.spec.resource_groups if obj.spec else None) or ():
                for f in g.flavors:
                    quota.setdefault(f.name, 0)
    flavors = _by_kind(design.objects, "ResourceFlavor")
    out = []
    for fname in sorted(quota):
        fl = flavors.get(fname)
        spec = fl.spec if fl is not None else None
        labels = dict((spec.node_labels if spec else None) or {})
        alloc = {"cpu": _BIG_CPU, "memory": _BIG_MEMORY, "pods": _BIG_PODS}
        if quota[fname]:
            alloc[m.gpu_resource] = str(quota[fname])
        out.append(_node(f"{fname}-quota", labels, alloc, spec.node_taints if spec else None))
    return out


# ---------------------------------------------------------------------- jobs
def _decode(manifest: dict[str, Any], what: str) -> Any:
    doc = decode_object(manifest, source=what, index=0)
    if not doc.ok:
        raise ValueError(f"{what}: " + "; ".join(doc.shown(e) for e in doc.errors))
    return doc.obj


def _job(
    row: TraceRow,
    name: str,
    target: TeamTarget,
    m: Mapping,
    selector: dict[str, str] | None,
    origin: Decimal,
) -> Any:
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    if "gpus" in m.requests and row.gpus > 0:
        requests[m.gpu_resource] = limits[m.gpu_resource] = str(gpu_request(row.gpus, m))
    if "cpus" in m.requests and row.cpus > 0:
        requests["cpu"] = _quantity(row.cpus)
    if "memory" in m.requests and row.memory_mib > 0:
        requests["memory"] = f"{_quantity(row.memory_mib)}Mi"
    labels = {QUEUE_LABEL: target.queue}
    if target.priority_class:
        labels[PRIORITY_LABEL] = target.priority_class
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [{"name": "main", "image": "trace", "resources": resources}],
    }
    if selector:
        pod_spec["nodeSelector"] = selector
    job = _decode(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "namespace": target.namespace,
                "name": name,
                "labels": labels,
                "annotations": {TRACE_JOB: row.job_id},
            },
            "spec": {
                # Deleted once finished (the TTL-after-finished controller), its
                # pods and Workload with it: what the report needs is recorded
                # by then, and a long trace's memory stays that of the jobs alive.
                "ttlSecondsAfterFinished": 1,
                "parallelism": row.pods,
                "completions": row.pods,
                "template": {
                    "metadata": {"annotations": {DURATION: f"{_quantity(row.duration_s)}s"}},
                    "spec": pod_spec,
                },
            },
        },
        f"{row.line}",
    )
    job.metadata.creation_timestamp = START + timedelta(seconds=float(row.submit_s - origin))
    return job


def _job_name(row: TraceRow, namespace: str, used: set[str]) -> str:
    base = k8s_name(row.job_id)[:50].strip("-") or "job"
    name = base
    if f"{namespace}/{name}" in used:
        name = f"{base[:40]}-l{row.line}"
    used.add(f"{namespace}/{name}")
    return name


# ---------------------------------------------------------------------- prepare / run
def prepare(
    trace: Trace,
    design: Design,
    mapping: Mapping,
    node_rows: list[NodeRow] | None = None,
    checking: Callable[[int], None] | None = None,
) -> Plan:
    """Check the trace against the design and build everything the run
    creates but the Jobs (Plan.job_groups makes them as the run goes).
    ``checking(line)`` now and then as the trace is read."""
    teams: dict[str, TeamPlan] = {}
    warnings: list[str] = []
    pairs = _check_teams(teams, trace, design, mapping, checking)
    selectors = _model_selectors(trace, pairs, design, mapping, teams, warnings)
    objects = list(design.objects)
    seen: set[tuple[str, str, str]] = set()
    for o in objects:
        ref = (o.kind, o.metadata.namespace, o.metadata.name)
        if ref in seen:
            name = f"{ref[1]}/{ref[2]}" if ref[1] else ref[2]
            warnings.append(
                f"design {design.name} has {ref[0]} {name} twice: the first one is used "
                "(two designs in one --world?)"
            )
        seen.add(ref)
    design_nodes = [o for o in objects if o.kind == "Node"]
    if design_nodes:
        n = len(design_nodes)
        nodes_from = f"the design ({n} node{'s' if n != 1 else ''})"
        if node_rows:
            warnings.append(f"design {design.name} has its own nodes: --nodes is not used for it")
    elif node_rows:
        objects += nodes_from_list(node_rows, mapping)
        nodes_from = f"the node list ({len(node_rows)} nodes)"
    else:
        generated = nodes_from_quota(design, mapping)
        objects += generated
        n = len(generated)
        nodes_from = f"the quota ({n} node{'s' if n != 1 else ''}, one per flavor)"
    other_jobs = sum(1 for o in objects if o.kind in ("Job", "Pod"))
    if other_jobs:
        warnings.append(
            f"design {design.name} has {other_jobs} Jobs/Pods of its own: they run beside the "
            "trace and are not counted in the report"
        )
    cqs = _by_kind(design.objects, "ClusterQueue")
    nominal = sum(sum(_nominal(cq, mapping.gpu_resource).values()) for cq in cqs.values())
    return Plan(
        design,
        trace,
        mapping,
        objects,
        selectors,
        teams,
        nodes_from,
        nominal / mapping.gpu_scale,
        warnings,
        queue_groups=group_labels(design.objects),
    )


def replay_path(plan: Plan, full: bool = False) -> str:
    """``fast``, or ``full: <why>`` (``kuota.sim.replay_path``): the replay
    :func:`run_plan` runs ``plan`` on."""
    from kuota.sim.replay_path import decline_reason

    if full:
        return "full: asked for (--full-replay)"
    why = decline_reason(plan)
    return "fast" if why is None else f"full: {why}"


def run_plan(
    plan: Plan,
    until: timedelta | None = None,
    progress: Progress | None = None,
    *,
    full: bool = False,
    log: DecisionLog | None = None,
) -> DesignResult:
    """One design's replay: the fast one (the admission core alone,
    ``kuota.sim.fastreplay``) when it decides the same, else (or with
    ``full``) the full one in the embedded control plane. ``log``: filled
    with the decisions (``kuota.sim.decision_log``)."""
    path = replay_path(plan, full)
    if path == "fast":
        from kuota.sim.fastreplay import run_fast

        result = run_fast(plan, until, progress, log)
    else:
        result = _run_full(plan, until, progress, log)
    result.replay = path
    return result


def _run_full(
    plan: Plan,
    until: timedelta | None = None,
    progress: Progress | None = None,
    log: DecisionLog | None = None,
) -> DesignResult:
    design = plan.design
    from kuota.embedded.controlplane import ControlPlane  # (the full replay only)

    cp = ControlPlane(design.config, START, openshift=design.openshift, scheduler=design.scheduler)
    # Nobody reads a replay's Events (the report comes from the workloads);
    # they were a tenth of its cost. Their uids never shift the objects' own.
    cp.mgr.recorder.enabled = False
    try:
        # The first submission's Jobs are created with the design; the others
        # are made one instant ahead of their creation (a long trace's Jobs are
        # never all in memory), in the same order and at the same instants.
        groups = plan.job_groups()
        _, first = next(groups)
        cp.submit([*plan.objects, *first])
        cp.arrivals.add_stream(groups)
        assert cp.kueue.core is not None
        if log is not None:
            cp.mgr.informer(WORKLOAD).on_change(WorkloadWatcher(log, START, cp.mgr.clock.now))
        rec = SimRecorder(
            cp.mgr, cp.kueue.core, plan.job_team, plan.mapping.milli_resource, plan.job_created
        )
        burn = BudgetBurn(cp.mgr, START) if plan.queue_groups else None
        limit = InstantLimit(cp)
        cp.mgr.idle_hooks.append(limit)
        total = plan.total_jobs
        last = [0.0]

        def on_round() -> None:
            rec.sample()
            if progress is not None:
                t = time.monotonic()
                if t - last[0] >= 0.2:
                    last[0] = t
                    progress(design.name, rec.finished_jobs, total, rec.elapsed())

        stop_at = START + until if until is not None else None
        reason = cp.run(stop_at, on_round=on_round)
        rec.sample()
        rec.close()
        if progress is not None:
            progress(design.name, rec.finished_jobs, total, rec.elapsed())
        errors = [
            f"reconcile error: {e.controller} {e.key}: {e.error}" for e in cp.mgr.stats.errors[:10]
        ]
        if limit.spinning is not None:  # cycles at one instant that never end
            reason = "repeating"
            errors[:0] = [repeating_notice(design.name, rec.elapsed()), *limit.spinning]
        elif reason == "repeating":  # a replay that would never end (embedded.repetition)
            assert cp.repetition is not None
            errors[:0] = [
                f"{design.name}: stopped: the replay only repeats itself (nothing new for "
                f"{cp.repetition.horizon.total_seconds() / 3600:.0f}h of virtual time but the "
                "same evictions and re-admissions); these workloads cycle:",
                *cp.repeating,
            ]
        result = build_result(
            plan,
            rec,
            stopped=reason,
            admissions=cp.kueue.admissions,
            errors=errors,
        )
        if burn is not None:
            result.budgets = burn.results(refused_by_group(cp.refused))
        return result
    finally:
        cp.close()


# ---------------------------------------------------------------------- several designs
_QUEUE: Any = None


def _init_worker(q: Any) -> None:
    global _QUEUE
    _QUEUE = q
    gcpolicy.tune(replay=True)  # a spawned worker starts with the default pace


def _queue_progress(design: str, done: int, total: int, virtual_s: float) -> None:
    if _QUEUE is not None:
        with contextlib.suppress(Exception):
            _QUEUE.put_nowait((design, done, total, virtual_s))


def _worker(
    trace: Trace,
    design: Design,
    mapping: Mapping,
    node_rows: list[NodeRow] | None,
    until: timedelta | None,
    report_progress: bool,
    full: bool = False,
) -> DesignResult:
    plan = prepare(trace, design, mapping, node_rows)
    return run_plan(plan, until, _queue_progress if report_progress else None, full=full)


def replay(
    trace: Trace,
    design: Design,
    mapping: Mapping,
    node_rows: list[NodeRow] | None = None,
    *,
    until: timedelta | None = None,
    full: bool = False,
    progress: Progress | None = None,
) -> DesignResult:
    """One design on a trace, as a function (``kuota simulate`` without the
    CLI): checked (an :class:`InputError` before anything runs), then
    replayed on the fast path when it decides the same, else on the full one
    (``full``: always the full one). ``DesignResult.replay`` says which."""
    return run_plan(prepare(trace, design, mapping, node_rows), until, progress, full=full)


def simulate(
    trace: Trace,
    designs: list[Design],
    mapping: Mapping,
    node_rows: list[NodeRow] | None = None,
    *,
    until: timedelta | None = None,
    jobs: int = 1,
    progress: Progress | None = None,
    on_plans: Callable[[list[Plan]], None] | None = None,
    checking: Callable[[str, int], None] | None = None,
    full: bool = False,
) -> list[DesignResult]:
    """Every design on the same trace; results in the designs' order. All designs
    are checked first: an :class:`InputError` comes before anything runs.
    ``checking(design, line)`` now and then as the trace is checked."""
    plans = [
        prepare(
            trace,
            d,
            mapping,
            node_rows,
            functools.partial(checking, d.name) if checking is not None else None,
        )
        for d in designs
    ]
    if on_plans is not None:
        on_plans(plans)
    if jobs <= 1 or len(designs) <= 1:
        return [run_plan(p, until, progress, full=full) for p in plans]
    del plans  # the workers build their own (what crosses processes is the input)
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    with ProcessPoolExecutor(
        max_workers=min(jobs, len(designs)),
        mp_context=ctx,
        initializer=_init_worker,
        initargs=(q,),
    ) as pool:
        futures: list[Future[DesignResult]] = [
            pool.submit(_worker, trace, d, mapping, node_rows, until, progress is not None, full)
            for d in designs
        ]
        while progress is not None and not all(f.done() for f in futures):
            try:
                msg = q.get(timeout=0.1)
            except queue_mod.Empty:
                continue
            progress(*msg)
        results = [f.result() for f in futures]
    while True:
        try:
            msg = q.get_nowait()
        except (queue_mod.Empty, OSError, ValueError):
            break
        if progress is not None:
            progress(*msg)
    return results
