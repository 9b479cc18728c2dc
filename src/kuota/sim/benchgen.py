"""Kueue's scheduler-performance generator config, read and expanded into a
world: the same cohorts, ClusterQueues, LocalQueues and Workloads (names,
priorities, requests, creation times) Kueue's runner creates, so the figures
of the two systems can be set side by side. Schema: Kueue's
test/performance/scheduler/runner/generator (``../shared/bench/README.md``).
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec

from kuota.api.decode import YamlError, load_yaml_documents
from kuota.api.k8s.validation.resource_requirements import range_errors
from kuota.api.kueue import types as kt
from kuota.api.meta import ObjectMeta
from kuota.api.names import is_dns1123_label
from kuota.api.quantity import Quantity, QuantityError

RUNNING_LABEL = "kueue.x-k8s.io/performance-scheduler-running-ms"
CLASS_LABEL = "kueue.x-k8s.io/performance-scheduler-class"
FLAVOR = "rf"  # Kueue's generator's default ResourceFlavor name
# The largest world kuota bench builds: counts multiply (cohorts x queues x
# rounds x templates), and each workload is held in memory for the run, so a
# config is refused up front rather than left to grow without bound. 20 times
# Kueue's large-scale world (50,000 workloads, 1,000 ClusterQueues).
MAX_WORKLOADS = 1_000_000
MAX_CLUSTER_QUEUES = 20_000


class BenchConfigError(Exception):
    """A generator config kuota cannot read: the file, the field path, why."""


class _Struct(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    pass


class WorkloadTemplate(_Struct):
    class_name: str
    runtime_ms: int = 0
    priority: int = 0
    request: str | int | float = "1"
    pod_count: int = 1


class WorkloadsSet(_Struct):
    count: int
    creation_interval_ms: int = 0
    workloads: list[WorkloadTemplate] = []


class QueuesSet(_Struct):
    class_name: str
    count: int
    nominal_quota: str | int | float
    borrowing_limit: str | int | float | None = None
    reclaim_within_cohort: str = "Never"
    within_cluster_queue: str = "Never"
    workloads_sets: list[WorkloadsSet] = []


class CohortSet(_Struct):
    class_name: str
    count: int
    queues_sets: list[QueuesSet] = []


class ResourceFlavorConfig(_Struct):
    name: str = FLAVOR


class GeneratorConfig(_Struct):
    cohorts: list[CohortSet] = []
    resource_flavor: ResourceFlavorConfig | None = None
    topology: Any = None


@dataclass(frozen=True, slots=True)
class Arrival:
    at_ms: int
    namespace: str
    name: str
    class_name: str
    priority: int
    request_milli: int  # cpu per pod
    pods: int
    runtime_ms: int


@dataclass
class BenchWorld:
    objects: list[Any]  # flavor, cohorts, ClusterQueues, namespaces, LocalQueues
    arrivals: list[Arrival]  # in creation order
    nominal_milli: dict[str, int]  # ClusterQueue -> cpu nominal quota
    classes: list[str] = field(default_factory=list)
    # ClusterQueue -> the quota it can use at most: its cohort's name (a
    # cohort's queues share their quota), else its own.
    pool_of: dict[str, str] = field(default_factory=dict)

    @property
    def total_work_milli_ms(self) -> int:
        return sum(a.request_milli * a.pods * a.runtime_ms for a in self.arrivals)

    @property
    def capacity_milli(self) -> int:
        return sum(self.nominal_milli.values())

    @property
    def last_creation_ms(self) -> int:
        return max((a.at_ms for a in self.arrivals), default=0)

    def lower_bound_s(self, extra_milli_ms: float = 0) -> float:
        """No schedule finishes earlier: all work spread over all quota, and
        not before the last workload exists (``extra_milli_ms``: work done
        on top, such as admissions an eviction threw away)."""
        cap = self.capacity_milli
        work = (self.total_work_milli_ms + extra_milli_ms) / cap / 1000 if cap else float("inf")
        return max(work, self.last_creation_ms / 1000)

    def arrival_bound_s(self, lost: Iterable[tuple[str, float, float, int]] = ()) -> float:
        """A tighter bound, from the first creation, on any schedule of this
        world: work cannot start before it exists, a workload runs at most at
        its request, and a cohort's workloads share only its quota. For each
        pool of quota and each creation instant t, what no workload could have
        done by t, plus the ``lost`` work done after t, must still be done on
        the pool's quota after t; and no workload ends before its creation
        plus its runtime. ``lost``: (ClusterQueue, start ms, end ms, milli-cpu)
        of each admission an eviction ended, work done again."""
        first = min((a.at_ms for a in self.arrivals), default=0)
        pools: dict[str, list[tuple[float, float, int]]] = {}
        bound = 0.0
        for a in self.arrivals:
            pool = self.pool_of.get(a.namespace, a.namespace)
            pools.setdefault(pool, []).append((a.at_ms, a.runtime_ms, a.request_milli * a.pods))
            bound = max(bound, a.at_ms + a.runtime_ms - first)
        lost_by_pool: dict[str, list[tuple[float, float, int]]] = {}
        for cq, start, end, milli in lost:
            pool = self.pool_of.get(cq, cq)
            lost_by_pool.setdefault(pool, []).append((start, end - start, milli))
        capacity: dict[str, int] = {}
        for cq, milli in self.nominal_milli.items():
            pool = self.pool_of.get(cq, cq)
            capacity[pool] = capacity.get(pool, 0) + milli
        for pool, items in pools.items():
            cap = capacity.get(pool, 0)
            if cap <= 0:
                return float("inf")  # work no quota can ever run
            instants = sorted({s for s, _, _ in items})
            waste = lost_by_pool.get(pool, [])
            work = sum(d * r for _, d, r in items)
            wasted = sum(d * r for _, d, r in waste)
            done = _done_by(items, instants)
            redone = _done_by(waste, instants)
            for t, u, w in zip(instants, done, redone, strict=True):
                bound = max(bound, t - first + (work - u + wasted - w) / cap)
        return bound / 1000


def _done_by(items: list[tuple[float, float, int]], times: list[float]) -> list[float]:
    """For each of the ascending ``times`` t, the most work (rate x time) the
    ``items`` (start, duration, rate) can have done by t: each from its
    start, at its rate, for at most its duration. One sweep: an item counts
    rate x (t - start) while it runs and its whole work once it would end."""
    by_start = sorted(items)
    running: list[tuple[float, float, int]] = []  # (end, start, rate), a heap
    full = rate_sum = rate_start = 0.0
    out: list[float] = []
    i = 0
    for t in times:
        while i < len(by_start) and by_start[i][0] < t:
            s, d, r = by_start[i]
            heapq.heappush(running, (s + d, s, r))
            rate_sum += r
            rate_start += r * s
            i += 1
        while running and running[0][0] <= t:
            e, s, r = heapq.heappop(running)
            rate_sum -= r
            rate_start -= r * s
            full += r * (e - s)
        out.append(full + rate_sum * t - rate_start)
    return out


def load(path: str | Path) -> GeneratorConfig:
    p = Path(path)
    try:
        # The one YAML loader of every file kuota reads (duplicate keys refused).
        docs = load_yaml_documents(p.read_bytes())
    except OSError as err:
        raise BenchConfigError(f"{p}: {err.strerror or err}") from None
    except YamlError as err:
        raise BenchConfigError(f"{p}: {err}") from None
    if len(docs) > 1:
        raise BenchConfigError(f"{p}: a generator config is one YAML document, found {len(docs)}")
    return parse(docs[0] if docs else None, str(p))


def parse(raw: Any, source: str = "<config>") -> GeneratorConfig:
    try:
        cfg = msgspec.convert(raw, GeneratorConfig)
    except msgspec.ValidationError as err:
        # msgspec names the path as `$.cohorts[0].queuesSets[0]...`.
        msg = str(err)
        where = ""
        if " - at `$" in msg:
            msg, _, at = msg.partition(" - at `$")
            where = at.rstrip("`").lstrip(".") + ": "
        raise BenchConfigError(f"{source}: {where}{msg}") from None
    if not cfg.cohorts:
        raise BenchConfigError(f"{source}: cohorts: the config must contain at least one cohort")
    if cfg.topology is not None:
        raise BenchConfigError(
            f"{source}: topology: topology-aware scheduling worlds are not supported"
        )
    queues = workloads = 0
    for i, c in enumerate(cfg.cohorts):
        _positive(source, f"cohorts[{i}].count", c.count)
        for j, q in enumerate(c.queues_sets):
            at = f"cohorts[{i}].queuesSets[{j}]"
            _positive(source, f"{at}.count", q.count)
            queues += c.count * q.count
            if queues > MAX_CLUSTER_QUEUES:
                raise BenchConfigError(
                    f"{source}: {at}.count: the config makes {queues:,} ClusterQueues "
                    f"(cohorts[{i}].count {c.count:,} x {q.count:,} here, with those before); "
                    f"kuota bench builds at most {MAX_CLUSTER_QUEUES:,}"
                )
            _milli(source, f"{at}.nominalQuota", q.nominal_quota)
            if q.borrowing_limit is not None:
                _milli(source, f"{at}.borrowingLimit", q.borrowing_limit)
            for name, v in (
                ("reclaimWithinCohort", q.reclaim_within_cohort),
                ("withinClusterQueue", q.within_cluster_queue),
            ):
                allowed = ("Never", "LowerPriority", "Any")
                if name == "withinClusterQueue":
                    allowed = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
                if v not in allowed:
                    raise BenchConfigError(
                        f"{source}: {at}.{name}: Unsupported value: {v!r}: "
                        f"supported values: {', '.join(allowed)}"
                    )
            for k, ws in enumerate(q.workloads_sets):
                wat = f"{at}.workloadsSets[{k}]"
                if ws.count < 0 or ws.creation_interval_ms < 0:
                    raise BenchConfigError(f"{source}: {wat}: count and interval must be ≥ 0")
                workloads += c.count * q.count * ws.count * len(ws.workloads)
                if workloads > MAX_WORKLOADS:
                    raise BenchConfigError(
                        f"{source}: {wat}.count: the config makes {workloads:,} workloads "
                        f"({c.count:,} cohorts x {q.count:,} queues x {ws.count:,} rounds x "
                        f"{len(ws.workloads)} templates here, with those before); "
                        f"kuota bench runs at most {MAX_WORKLOADS:,}"
                    )
                for m, w in enumerate(ws.workloads):
                    if w.runtime_ms < 0:
                        raise BenchConfigError(
                            f"{source}: {wat}.workloads[{m}].runtimeMs: must be ≥ 0"
                        )
                    _milli(source, f"{wat}.workloads[{m}].request", w.request)
    _check_names_and_ranges(cfg, source)
    return cfg


# A Go time.Duration (int64 nanoseconds) holds at most ~292 years.
_MAX_RUNTIME_MS = (2**63 - 1) // 1_000_000


def _check_names_and_ranges(cfg: GeneratorConfig, source: str) -> None:
    """What the generated objects' validation would refuse, said of the config
    field that causes it: class names start object names (DNS-1123 labels),
    requests are counted in int64 milli-units, runtimes are Go durations."""
    for i, c in enumerate(cfg.cohorts):
        _class_name(source, f"cohorts[{i}].className", c.class_name)
        for j, q in enumerate(c.queues_sets):
            at = f"cohorts[{i}].queuesSets[{j}]"
            _class_name(source, f"{at}.className", q.class_name)
            for k, ws in enumerate(q.workloads_sets):
                for m, w in enumerate(ws.workloads):
                    wat = f"{at}.workloadsSets[{k}].workloads[{m}]"
                    _class_name(source, f"{wat}.className", w.class_name)
                    if w.runtime_ms > _MAX_RUNTIME_MS:
                        raise BenchConfigError(
                            f"{source}: {wat}.runtimeMs: Invalid value: {w.runtime_ms}: "
                            f"must be at most {_MAX_RUNTIME_MS} (a Go time.Duration)"
                        )


def _class_name(source: str, path: str, name: str) -> None:
    problems = is_dns1123_label(name)
    if problems:
        raise BenchConfigError(
            f"{source}: {path}: Invalid value: {name!r}: it starts object names: "
            + "; ".join(problems)
        )


def _positive(source: str, path: str, v: int) -> None:
    if v < 1:
        raise BenchConfigError(f"{source}: {path}: must be at least 1, got {v}")


def _milli(source: str, path: str, v: Any) -> int:
    try:
        q = Quantity.parse(str(v))
    except QuantityError as err:
        raise BenchConfigError(f"{source}: {path}: {err}") from None
    if q.nanos < 0:
        raise BenchConfigError(f"{source}: {path}: must not be negative")
    for err in range_errors("cpu", q, ""):  # requests are cpu, counted in milli-units
        raise BenchConfigError(f"{source}: {path}: Invalid value: {v!r}: {err.detail}")
    return -(-q.nanos // 1_000_000)


def generate(cfg: GeneratorConfig, start: datetime) -> BenchWorld:
    """The world Kueue's generator creates: per cohort class and index a
    cohort ``<class>-<i>``; per queue set a ClusterQueue
    ``<class>-<set>-<i>-<cohort>`` with a namespace and LocalQueue of the same
    name; per workload set, ``count`` rounds of its templates, one creation
    every ``creationIntervalMs`` (the first after one interval), all sets and
    queues in parallel."""
    flavor = cfg.resource_flavor.name if cfg.resource_flavor else FLAVOR
    objects: list[Any] = [
        kt.ResourceFlavor(
            api_version=kt.V1BETA2, kind="ResourceFlavor", metadata=ObjectMeta(name=flavor)
        )
    ]
    arrivals: list[Arrival] = []
    nominal: dict[str, int] = {}
    pool_of: dict[str, str] = {}
    classes: list[str] = []
    for cset in cfg.cohorts:
        for ci in range(cset.count):
            cohort = f"{cset.class_name}-{ci}"
            objects.append(
                kt.Cohort(api_version=kt.V1BETA2, kind="Cohort", metadata=ObjectMeta(name=cohort))
            )
            for qi, qset in enumerate(cset.queues_sets):
                for i in range(qset.count):
                    name = f"{qset.class_name}-{qi}-{i}-{cohort}"
                    nominal[name] = _milli("", "", qset.nominal_quota)
                    pool_of[name] = cohort
                    objects += _queue(name, cohort, flavor, qset)
                    for si, ws in enumerate(qset.workloads_sets):
                        t = 0
                        for r in range(ws.count):
                            for wi, tmpl in enumerate(ws.workloads):
                                t += ws.creation_interval_ms
                                if tmpl.class_name not in classes:
                                    classes.append(tmpl.class_name)
                                arrivals.append(
                                    Arrival(
                                        at_ms=t,
                                        namespace=name,
                                        name=f"{tmpl.class_name}-{si}-{r}-{wi}",
                                        class_name=tmpl.class_name,
                                        priority=tmpl.priority,
                                        request_milli=_milli("", "", tmpl.request),
                                        pods=max(tmpl.pod_count, 1),
                                        runtime_ms=tmpl.runtime_ms,
                                    )
                                )
    arrivals.sort(key=lambda a: a.at_ms)  # stable: queue order within an instant
    del start
    return BenchWorld(objects, arrivals, nominal, classes, pool_of)


def _queue(name: str, cohort: str, flavor: str, q: QueuesSet) -> list[Any]:
    res: dict[str, Any] = {"name": "cpu", "nominalQuota": str(q.nominal_quota)}
    if q.borrowing_limit is not None:
        res["borrowingLimit"] = str(q.borrowing_limit)
    spec = {
        "cohortName": cohort,
        "namespaceSelector": {},
        "resourceGroups": [
            {"coveredResources": ["cpu"], "flavors": [{"name": flavor, "resources": [res]}]}
        ],
        "preemption": {
            "reclaimWithinCohort": q.reclaim_within_cohort,
            "withinClusterQueue": q.within_cluster_queue,
        },
    }
    cq = msgspec.convert(
        {
            "apiVersion": kt.V1BETA2,
            "kind": "ClusterQueue",
            "metadata": {"name": name, "labels": {CLASS_LABEL: q.class_name}},
            "spec": spec,
        },
        kt.ClusterQueue,
        dec_hook=_dec_hook,
    )
    from kuota.api import k8s as kc

    ns = kc.Namespace(api_version="v1", kind="Namespace", metadata=ObjectMeta(name=name))
    lq = kt.LocalQueue(
        api_version=kt.V1BETA2,
        kind="LocalQueue",
        metadata=ObjectMeta(name=name, namespace=name),
        spec=kt.LocalQueueSpec(cluster_queue=name),
    )
    return [ns, cq, lq]


def _dec_hook(typ: type, obj: Any) -> Any:
    if isinstance(typ, type) and isinstance(obj, typ):
        return obj  # a value the generator made already (an immutable Quantity)
    from kuota.api.base import dec_hook

    return dec_hook(typ, obj)


@functools.cache
def _milli_cpu(milli: int) -> Quantity:
    # Parsed once per size, as the text Kueue's generator writes: the world
    # generates a Workload per arrival, while the clock runs in real time.
    return Quantity.parse(f"{milli}m")


def workload(a: Arrival, start: datetime) -> kt.Workload:
    """The Workload Kueue's generator creates for an arrival."""
    return msgspec.convert(
        {
            "apiVersion": kt.V1BETA2,
            "kind": "Workload",
            "metadata": {
                "name": a.name,
                "namespace": a.namespace,
                "labels": {RUNNING_LABEL: str(a.runtime_ms), CLASS_LABEL: a.class_name},
                "creationTimestamp": start + timedelta(milliseconds=a.at_ms),
            },
            "spec": {
                "queueName": a.namespace,
                "priority": a.priority,
                "podSets": [
                    {
                        "name": "main",
                        "count": a.pods,
                        "template": {
                            "spec": {
                                "restartPolicy": "Never",
                                "containers": [
                                    {
                                        "name": "c",
                                        "resources": {
                                            "requests": {"cpu": _milli_cpu(a.request_milli)}
                                        },
                                    }
                                ],
                            }
                        },
                    }
                ],
            },
        },
        kt.Workload,
        dec_hook=_dec_hook,
    )
