"""Property tests of the admission core on random worlds.

Hypothesis builds random but valid worlds (flavors with labels and taints,
cohort trees with their own quota, ClusterQueues with borrowing and lending
limits, random preemption policies, fungibility and fair-sharing weights,
partially admissible workloads) as raw kueue.x-k8s.io/v1beta2 manifests, then
runs scheduling cycles with classic and with fair sharing, a third of them
with admission fair sharing too (several LocalQueues per ClusterQueue, some
with a usage-based admissionScope, weights and a persisted usage that decays
as the clock moves): workloads arrive
over several cycles, evictions complete between cycles and some admitted
workloads finish. After every cycle the decisions are checked against a model
of the quota rules computed here from the manifests, not from the core:

1. quota: every ClusterQueue's usage equals the sum of its quota holders'
   ``status.admission`` (each at per-pod requests x admitted count) and every
   cohort's usage and subtree quota equal the ones recomputed from the specs;
   no node holds more than it could ever hold (``potential_available``) nor
   more than its subtree quota plus its borrowing limit. A non-root cohort may
   hold more than its subtree quota: it borrows from its parent as a queue
   borrows from its cohort (see the last test); only roots are capped by it;
2. lending limits: the root of every tree uses no more than its subtree quota,
   which counts only what each child may lend (nominal - local quota);
3. an admitted podSet tolerates its flavors' taints and its nodeSelector agrees
   with their labels;
4. every preemption is one the preemptor's ClusterQueue policy allows, and
   quota is reclaimed only from a queue that borrows;
5. decisions do not depend on the order the objects were added in;
6. partial admission stays within [minCount, count];
7. admission fair sharing: with no admission checks every entry penalty is
   settled by the admission that charged it, and usage never goes negative.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from kuota.api.decode import decode_object
from kuota.api.kueue import types as kt
from kuota.api.kueue.config import KueueConfig, config_from_scenario
from kuota.quota.requests import resource_value
from kuota.quota.tree import potential_available
from kuota.quota.workload import condition_true, has_quota_reservation, is_finished
from kuota.scheduler.admission.admission_core import AdmissionCore
from kuota.scheduler.views import CycleResult

V1B2 = "kueue.x-k8s.io/v1beta2"
START = datetime(2026, 1, 1, tzinfo=UTC)
NS = "ns"
CPU, GPU = "cpu", "example.com/gpu"
POOL, ZONE, TAINT_KEY = "kuota.test/pool", "kuota.test/zone", "kuota.test/dedicated"
FLAVORS = ("f0", "f1", "f2")
COHORTS = ("co0", "co1", "co2")
MAX_CYCLES = 30
CYCLE_SECONDS = 10  # the clock moves this much before every cycle
PRIORITIES = st.integers(min_value=-2, max_value=2)

FR = tuple[str, str]

# The valid fair-sharing preemption strategy lists (v1beta2 requires one once
# fairSharing is set); the first is Kueue's default.
FS_STRATEGIES: list[tuple[str, ...]] = [
    ("LessThanOrEqualToFinalShare", "LessThanInitialShare"),
    ("LessThanOrEqualToFinalShare",),
    ("LessThanInitialShare",),
]
CLASSIC = config_from_scenario({}, None)
FAIR = {
    s: config_from_scenario({"fairSharing": {"preemptionStrategies": list(s)}}, None)
    for s in FS_STRATEGIES
}


def config(mode: str, world: World) -> KueueConfig:
    if world.afs is None:
        return CLASSIC if mode == "classic" else FAIR[world.fs_strategies]
    block: dict[str, Any] = {"admissionFairSharing": world.afs}
    if mode == "fair":
        block["fairSharing"] = {"preemptionStrategies": list(world.fs_strategies)}
    return config_from_scenario(block, None)


# ============================================================================ the world model


@dataclass(frozen=True)
class Quota:
    nominal: int  # Kueue units (cpu in milli)
    borrowing_limit: int | None = None
    lending_limit: int | None = None


@dataclass
class FlavorSpec:
    name: str
    labels: dict[str, str]
    taints: list[dict[str, str]]
    tolerations: list[dict[str, str]]


@dataclass
class CohortSpec:
    name: str
    parent: str | None
    quotas: dict[FR, Quota]
    groups: list[dict[str, Any]]
    weight: str | None = None  # fairSharing.weight


@dataclass
class CQSpec:
    name: str
    cohort: str | None
    quotas: dict[FR, Quota]
    groups: list[dict[str, Any]]
    within: str
    reclaim: str
    bwc_policy: str | None
    bwc_threshold: int | None
    strategy: str
    fungibility: dict[str, str] | None
    weight: str | None = None  # fairSharing.weight
    # Admission fair sharing: usage-based ordering, and per LocalQueue its
    # fairSharing.weight and persisted consumed cpu (None: unset).
    usage_based: bool = False
    local_queues: list[tuple[str | None, str | None]] = field(
        default_factory=lambda: [(None, None)]
    )


@dataclass
class PodSetSpec:
    name: str
    count: int
    min_count: int | None
    requests: dict[str, int]  # per pod, Kueue units
    raw_requests: dict[str, str]
    tolerations: list[dict[str, str]]
    node_selector: dict[str, str]


@dataclass
class WorkloadSpec:
    name: str
    cq: str
    priority: int
    podsets: list[PodSetSpec]
    arrival: int  # the cycle before which it is created (0: with the world)
    local_queue: int = 0  # which of its ClusterQueue's LocalQueues

    @property
    def key(self) -> str:
        return f"{NS}/{self.name}"


@dataclass
class World:
    flavors: dict[str, FlavorSpec]
    cohorts: dict[str, CohortSpec]
    cqs: dict[str, CQSpec]
    workloads: dict[str, WorkloadSpec]  # by key
    objects: list[dict[str, Any]] = field(default_factory=list)
    stamps: list[tuple[datetime, str]] = field(default_factory=list)
    arrival: list[int] = field(default_factory=list)  # per object, see WorkloadSpec
    order: list[int] = field(default_factory=list)  # a permutation of objects
    finish_every: int | None = None  # finish the first admitted workload every n cycles
    fs_strategies: tuple[str, ...] = FS_STRATEGIES[0]  # when run with fair sharing
    afs: dict[str, Any] | None = None  # the admissionFairSharing configuration

    def __repr__(self) -> str:  # what hypothesis prints for a failing example
        lines = ["World("]
        for o, (ts, uid), a in zip(self.objects, self.stamps, self.arrival, strict=True):
            lines.append(f"  {o!r}  # created {ts.isoformat()} uid {uid[-4:]} cycle {a}")
        lines.append(f"  order={self.order}, finish_every={self.finish_every},")
        lines.append(f"  fs_strategies={self.fs_strategies}, afs={self.afs})")
        return "\n".join(lines)


def _clock(cycle: int) -> datetime:
    return START + timedelta(seconds=cycle * CYCLE_SECONDS)


def _units(resource: str, whole: int) -> int:
    return whole * 1000 if resource == CPU else whole


# ============================================================================ strategies

QUOTA_VALUES = st.one_of(
    st.integers(min_value=0, max_value=10), st.integers(min_value=4, max_value=10)
)


@st.composite
def _quota(
    draw: st.DrawFn, resource: str, limits: bool, lending_le_nominal: bool, borrower: bool
) -> Quota:
    nominal = 0 if borrower else draw(QUOTA_VALUES)
    bl = ll = None
    if limits:
        if draw(st.booleans()):
            bl = draw(QUOTA_VALUES)
        if draw(st.booleans()):
            ll = draw(st.integers(min_value=0, max_value=nominal if lending_le_nominal else 10))
    return Quota(
        _units(resource, nominal),
        None if bl is None else _units(resource, bl),
        None if ll is None else _units(resource, ll),
    )


def _raw_quota(resource: str, q: Quota) -> dict[str, str]:
    def s(v: int) -> str:
        return f"{v}m" if resource == CPU else str(v)

    out = {"name": resource, "nominalQuota": s(q.nominal)}
    if q.borrowing_limit is not None:
        out["borrowingLimit"] = s(q.borrowing_limit)
    if q.lending_limit is not None:
        out["lendingLimit"] = s(q.lending_limit)
    return out


@st.composite
def _resource_groups(
    draw: st.DrawFn,
    flavors: list[str],
    limits: bool,
    lending_le_nominal: bool,
    layouts: list[list[list[str]]],
    borrower: bool = False,
) -> tuple[list[dict[str, Any]], dict[FR, Quota]]:
    """The resource groups of a queue or cohort, and their quotas; a borrower
    has no quota of its own."""
    layout = draw(st.sampled_from(layouts))
    if len(layout) > len(flavors):
        layout = [[r for g in layout for r in g]]
    pool = draw(st.permutations(flavors))
    groups: list[dict[str, Any]] = []
    quotas: dict[FR, Quota] = {}
    for gi, covered in enumerate(layout):
        left = len(pool) - (len(layout) - gi - 1)  # leave one flavor for each later group
        n = draw(st.integers(min_value=1, max_value=max(1, left)))
        chosen, pool = pool[:n], pool[n:]
        raw_flavors = []
        for f in chosen:
            resources = []
            for r in covered:
                q = draw(_quota(r, limits, lending_le_nominal, borrower))
                quotas[(f, r)] = q
                resources.append(_raw_quota(r, q))
            raw_flavors.append({"name": f, "resources": resources})
        groups.append({"coveredResources": list(covered), "flavors": raw_flavors})
    return groups, quotas


CQ_LAYOUTS = [[[CPU]], [[CPU, GPU]], [[CPU], [GPU]]]
COHORT_LAYOUTS = [[[CPU]], [[CPU, GPU]]]

TOLERATIONS = [
    {"key": TAINT_KEY, "operator": "Exists"},
    {"key": TAINT_KEY, "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
    {"key": TAINT_KEY, "operator": "Equal", "value": "spot"},
    {"key": TAINT_KEY, "operator": "Exists", "effect": "NoExecute"},
    {"operator": "Exists"},
]
CPU_REQUESTS = {"0": 0, "500m": 500, "1": 1000, "2": 2000, "3": 3000, "4": 4000}
WEIGHTS = st.sampled_from([None, None, None, "0", "500m", "1", "2"])


@st.composite
def _flavor(draw: st.DrawFn, name: str, contended: bool) -> FlavorSpec:
    labels: dict[str, str] = {}
    if draw(st.booleans()):
        labels[POOL] = name
    if draw(st.booleans()):
        labels[ZONE] = draw(st.sampled_from(["a", "b"]))
    taints: list[dict[str, str]] = []
    if not contended and draw(st.integers(min_value=0, max_value=2)) == 0:
        taints.append(
            {
                "key": TAINT_KEY,
                "value": draw(st.sampled_from(["gpu", "spot"])),
                "effect": draw(st.sampled_from(["NoSchedule", "NoSchedule", "NoExecute"])),
            }
        )
        if draw(st.integers(min_value=0, max_value=3)) == 0:
            taints.append({"key": "kuota.test/soft", "effect": "PreferNoSchedule"})
    tolerations: list[dict[str, str]] = []
    if taints and draw(st.integers(min_value=0, max_value=3)) == 0:
        tolerations.append({"key": TAINT_KEY, "operator": "Exists"})
    return FlavorSpec(name, labels, taints, tolerations)


@st.composite
def _podset(
    draw: st.DrawFn, name: str, may_min: bool, flavors: list[str], contended: bool
) -> PodSetSpec:
    count = draw(st.sampled_from([1, 1, 1, 2, 2, 3, 4]))
    min_count = None
    if may_min and count > 1 and draw(st.booleans()):
        min_count = draw(st.integers(min_value=1, max_value=count))
    raw: dict[str, str] = {}
    req: dict[str, int] = {}
    if draw(st.integers(min_value=0, max_value=5)) > 0:
        c = draw(st.sampled_from(["0", "500m", "500m", "1", "1", "1", "2", "2", "3", "4"]))
        raw[CPU], req[CPU] = c, CPU_REQUESTS[c]
    if draw(st.integers(min_value=0, max_value=4 if contended else 1)) == 0:
        g = draw(st.integers(min_value=0, max_value=2))
        raw[GPU], req[GPU] = str(g), g
    tolerations: list[dict[str, str]] = []
    if draw(st.integers(min_value=0, max_value=3)) > 0:
        tolerations = draw(
            st.lists(st.sampled_from(TOLERATIONS), min_size=1, max_size=2, unique_by=str)
        )
    selector: dict[str, str] = {}
    if not contended and draw(st.integers(min_value=0, max_value=4)) == 0:
        selector[POOL] = draw(st.sampled_from(flavors))
    if not contended and draw(st.integers(min_value=0, max_value=4)) == 0:
        selector[ZONE] = draw(st.sampled_from(["a", "b"]))
    return PodSetSpec(name, count, min_count, req, raw, tolerations, selector)


@st.composite
def worlds(draw: st.DrawFn, contended: bool | None = None) -> World:
    # Half the worlds are "contended": every queue in a cohort tree, some queues
    # with no quota of their own, no taints or selectors, few GPUs, waves of
    # higher-priority arrivals: borrowing, reclaim and preemption. The others
    # mix everything, much of which can never be admitted.
    if contended is None:
        contended = draw(st.booleans())
    flavors = {
        n: draw(_flavor(n, contended))
        for n in FLAVORS[: draw(st.integers(min_value=1, max_value=3))]
    }
    flavor_names = list(flavors)

    cohorts: dict[str, CohortSpec] = {}
    cohort_names = list(COHORTS[: draw(st.integers(min_value=1, max_value=3))])
    for i, name in enumerate(cohort_names):
        if not draw(st.booleans()):
            continue  # only named by ClusterQueues (an implicit cohort)
        parent = None
        if i > 0 and draw(st.booleans()):
            parent = draw(st.sampled_from(cohort_names[:i]))
        groups: list[dict[str, Any]] = []
        quotas: dict[FR, Quota] = {}
        if draw(st.booleans()):
            groups, quotas = draw(
                _resource_groups(flavor_names, parent is not None, False, COHORT_LAYOUTS)
            )
        cohorts[name] = CohortSpec(name, parent, quotas, groups, draw(WEIGHTS))

    afs = None
    if draw(st.integers(min_value=0, max_value=2)) == 0:
        afs = {
            "usageHalfLifeTime": draw(st.sampled_from(["0s", "15s", "1m"])),
            "usageSamplingInterval": draw(st.sampled_from(["5s", "10s", "25s"])),
        }
        if draw(st.booleans()):
            afs["resourceWeights"] = {CPU: 1.0, GPU: draw(st.sampled_from([0.0, 4.0]))}

    cqs: dict[str, CQSpec] = {}
    for i in range(draw(st.integers(min_value=1, max_value=3 if contended else 5))):
        name = f"cq{i}"
        cohort = draw(
            st.sampled_from(cohort_names)
            if contended
            else st.one_of(st.none(), st.sampled_from(cohort_names))
        )
        # In contended worlds some queues only borrow: the ones others reclaim from.
        borrower = contended and draw(st.integers(min_value=0, max_value=3)) == 0
        groups, quotas = draw(
            _resource_groups(flavor_names, cohort is not None, True, CQ_LAYOUTS, borrower)
        )
        within = draw(st.sampled_from(["Never", "LowerPriority", "LowerOrNewerEqualPriority"]))
        reclaim = draw(st.sampled_from(["Never", "LowerPriority", "Any"][contended:]))
        bwc_policy = bwc_threshold = None
        if reclaim != "Never" and (contended or draw(st.booleans())):
            bwc_policy = draw(st.sampled_from(["Never", "LowerPriority", "LowerPriority"]))
            if draw(st.booleans()):
                bwc_threshold = draw(PRIORITIES)
        fungibility = None
        if draw(st.integers(min_value=0, max_value=2)) == 0:
            fungibility = {
                "whenCanBorrow": draw(st.sampled_from(["MayStopSearch", "TryNextFlavor"])),
                "whenCanPreempt": draw(st.sampled_from(["MayStopSearch", "TryNextFlavor"])),
            }
            if set(fungibility.values()) == {"TryNextFlavor"} and draw(st.booleans()):
                fungibility["preference"] = draw(
                    st.sampled_from(["BorrowingOverPreemption", "PreemptionOverBorrowing"])
                )
        cqs[name] = CQSpec(
            name,
            cohort,
            quotas,
            groups,
            within,
            reclaim,
            bwc_policy,
            bwc_threshold,
            draw(
                st.sampled_from(["BestEffortFIFO", "BestEffortFIFO", "StrictFIFO"][: 3 - contended])
            ),
            fungibility,
            draw(WEIGHTS),
        )
        if afs is not None:
            cqs[name].usage_based = draw(st.booleans())
            cqs[name].local_queues = draw(
                st.lists(
                    st.tuples(WEIGHTS, st.sampled_from([None, None, "0", "1500m", "8"])),
                    min_size=1,
                    max_size=3,
                )
            )

    workloads: dict[str, WorkloadSpec] = {}
    for i in range(draw(st.integers(min_value=5 if contended else 1, max_value=15))):
        n_ps = draw(st.sampled_from([1, 1, 2]))
        min_at = draw(st.integers(min_value=0, max_value=n_ps - 1))  # at most one minCount
        podsets = [
            draw(_podset(ps, j == min_at, flavor_names, contended))
            for j, ps in enumerate(["main", "side"][:n_ps])
        ]
        arrival = draw(
            # In contended worlds workloads arrive in waves: preemptors of one cycle compete.
            st.sampled_from([0, 0, 2, 2, 4])
            if contended
            else st.one_of(st.just(0), st.integers(min_value=0, max_value=6))
        )
        # Late arrivals and a favourite queue make for contention, hence preemption.
        cq = draw(
            st.sampled_from(sorted(cqs))
            if contended
            else st.one_of(st.just("cq0"), st.sampled_from(sorted(cqs)))
        )
        prio = draw(st.one_of(PRIORITIES, st.integers(0, 2) if arrival else st.integers(-2, 0)))
        lq = draw(st.integers(min_value=0, max_value=len(cqs[cq].local_queues) - 1))
        w = WorkloadSpec(f"w{i}", cq, prio, podsets, arrival, lq)
        workloads[w.key] = w

    world = World(flavors, cohorts, cqs, workloads, afs=afs)
    _render(world)
    # Creation timestamps: a few seconds apart within the cycle an object
    # arrives in, ties allowed; UIDs unique, as the scenario runner makes them.
    wl_arrival = {f"{NS}/{wl.name}": wl.arrival for wl in workloads.values()}
    for i, o in enumerate(world.objects):
        a = wl_arrival.get(f"{NS}/{o['metadata']['name']}", 0) if o["kind"] == "Workload" else 0
        jitter = draw(st.integers(min_value=0, max_value=3))  # ties are common
        world.stamps.append(
            (_clock(a) + timedelta(seconds=jitter), f"00000000-0000-4000-8000-{i + 1:012d}")
        )
        world.arrival.append(a)
    world.order = list(draw(st.permutations(range(len(world.objects)))))
    world.finish_every = draw(st.sampled_from([None, None, 2, 3]))
    world.fs_strategies = draw(st.sampled_from(FS_STRATEGIES))
    return world


def _render(w: World) -> None:
    objs = w.objects
    objs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    for f in w.flavors.values():
        spec: dict[str, Any] = {}
        if f.labels:
            spec["nodeLabels"] = dict(f.labels)
        if f.taints:
            spec["nodeTaints"] = [dict(t) for t in f.taints]
        if f.tolerations:
            spec["tolerations"] = [dict(t) for t in f.tolerations]
        objs.append(
            {
                "apiVersion": V1B2,
                "kind": "ResourceFlavor",
                "metadata": {"name": f.name},
                "spec": spec,
            }
        )
    for c in w.cohorts.values():
        cspec: dict[str, Any] = {}
        if c.parent:
            cspec["parentName"] = c.parent
        if c.groups:
            cspec["resourceGroups"] = copy.deepcopy(c.groups)
        if c.weight is not None:
            cspec["fairSharing"] = {"weight": c.weight}
        objs.append(
            {"apiVersion": V1B2, "kind": "Cohort", "metadata": {"name": c.name}, "spec": cspec}
        )
    for q in w.cqs.values():
        preemption: dict[str, Any] = {
            "withinClusterQueue": q.within,
            "reclaimWithinCohort": q.reclaim,
        }
        if q.bwc_policy is not None:
            bwc: dict[str, Any] = {"policy": q.bwc_policy}
            if q.bwc_threshold is not None:
                bwc["maxPriorityThreshold"] = q.bwc_threshold
            preemption["borrowWithinCohort"] = bwc
        qspec: dict[str, Any] = {
            "namespaceSelector": {},
            "queueingStrategy": q.strategy,
            "resourceGroups": copy.deepcopy(q.groups),
            "preemption": preemption,
        }
        if q.cohort:
            qspec["cohortName"] = q.cohort
        if q.fungibility:
            qspec["flavorFungibility"] = dict(q.fungibility)
        if q.weight is not None:
            qspec["fairSharing"] = {"weight": q.weight}
        if q.usage_based:
            qspec["admissionScope"] = {"admissionMode": "UsageBasedAdmissionFairSharing"}
        objs.append(
            {
                "apiVersion": V1B2,
                "kind": "ClusterQueue",
                "metadata": {"name": q.name},
                "spec": qspec,
            }
        )
        for i, (weight, consumed) in enumerate(q.local_queues):
            lq: dict[str, Any] = {
                "apiVersion": V1B2,
                "kind": "LocalQueue",
                "metadata": {"name": _lq_name(q.name, i), "namespace": NS},
                "spec": {"clusterQueue": q.name},
            }
            if weight is not None:
                lq["spec"]["fairSharing"] = {"weight": weight}
            if consumed is not None:
                afs_status = {
                    "consumedResources": {CPU: consumed},
                    "lastUpdate": "2025-12-31T00:00:00Z",
                }
                lq["status"] = {"fairSharing": {"admissionFairSharingStatus": afs_status}}
            objs.append(lq)
    for wl in w.workloads.values():
        podsets = []
        for ps in wl.podsets:
            resources: dict[str, Any] = {"requests": dict(ps.raw_requests)}
            if GPU in ps.raw_requests:
                resources["limits"] = {GPU: ps.raw_requests[GPU]}  # extended: limits = requests
            pod: dict[str, Any] = {"containers": [{"name": "c", "resources": resources}]}
            if ps.tolerations:
                pod["tolerations"] = [dict(t) for t in ps.tolerations]
            if ps.node_selector:
                pod["nodeSelector"] = dict(ps.node_selector)
            raw_ps: dict[str, Any] = {"name": ps.name, "count": ps.count, "template": {"spec": pod}}
            if ps.min_count is not None:
                raw_ps["minCount"] = ps.min_count
            podsets.append(raw_ps)
        objs.append(
            {
                "apiVersion": V1B2,
                "kind": "Workload",
                "metadata": {"name": wl.name, "namespace": NS},
                "spec": {
                    "queueName": _lq_name(wl.cq, wl.local_queue),
                    "priority": wl.priority,
                    "podSets": podsets,
                },
            }
        )


def _lq_name(cq: str, i: int) -> str:
    return f"lq-{cq}" if i == 0 else f"lq-{cq}-{i}"


# ============================================================================ running


def add_objects(core: AdmissionCore, world: World, order: Iterable[int], cycle: int) -> None:
    """Add the objects that arrive before ``cycle``, in ``order``."""
    for i in order:
        if world.arrival[i] != cycle:
            continue
        doc = decode_object(copy.deepcopy(world.objects[i]))
        assert doc.ok, [doc.shown(err) for err in doc.errors]
        obj = doc.obj
        obj.metadata.creation_timestamp, obj.metadata.uid = world.stamps[i]
        core.add(obj)


def build(world: World, mode: str, order: Iterable[int]) -> AdmissionCore:
    core = AdmissionCore(config(mode, world), START)
    add_objects(core, world, order, 0)
    return core


Decision = tuple[tuple[str, ...], tuple[tuple[str, str, str], ...], str | None]


def run(
    core: AdmissionCore,
    world: World,
    order: list[int],
    cycles: int | None = None,
    check: bool = True,
) -> list[Decision]:
    """Cycles until all workloads have arrived and three cycles in a row change
    no decision and no workload's state (or exactly ``cycles``). Before every
    cycle the clock moves, the workloads due arrive (in ``order``) and
    evictions complete; if the world says so, the first admitted workload
    finishes every few cycles. Returns each cycle's decisions."""
    trace: list[Decision] = []
    quiet = 0
    before: list[str] = []
    last_arrival = max(world.arrival)
    for n in range(cycles if cycles is not None else MAX_CYCLES):
        core.advance(_clock(n) + timedelta(seconds=CYCLE_SECONDS - 1))
        if n:
            add_objects(core, world, order, n)
        core.complete_evictions()
        r = core.cycle()
        if check:
            check_cycle(core, world, r)
            check_state(core, world)
        finished = None
        if world.finish_every and n % world.finish_every == world.finish_every - 1:
            for key in sorted(core.workloads):
                v = core.workload(key)
                if v is not None and v.state == "admitted":
                    core.finish(key)
                    finished = key
                    break
            if check and finished:
                check_state(core, world)
        trace.append(
            (
                tuple(sorted(r.admitted)),
                tuple(sorted((p.victim, p.reason, p.preemptor) for p in r.preempted)),
                finished,
            )
        )
        states = [core.workload(k).state for k in sorted(core.workloads)]  # type: ignore[union-attr]
        same = states == before
        before = states
        quiet = 0 if r.changed or finished or n < last_arrival or not same else quiet + 1
        if cycles is None and quiet >= 3:
            break
    return trace


# ============================================================================ the model


def holders(core: AdmissionCore) -> dict[str, kt.Workload]:
    """Workloads holding quota by their status (the preempted ones included)."""
    return {
        k: wl
        for k, wl in core.workloads.items()
        if has_quota_reservation(wl)
        and not is_finished(wl)
        and wl.status is not None
        and wl.status.admission is not None
    }


@dataclass
class TreeModel:
    """The quota tree recomputed from the specs (Kueue's resource_node.go rules)."""

    parent: dict[str, str | None]  # node -> parent cohort
    quotas: dict[str, dict[FR, Quota]]
    subtree: dict[str, dict[FR, int]]
    usage: dict[str, dict[FR, int]]
    is_cq: dict[str, bool]

    def local(self, n: str, fr: FR) -> int:
        q = self.quotas[n].get(fr)
        if q is None or q.lending_limit is None:
            return 0
        return max(0, self.subtree[n].get(fr, 0) - q.lending_limit)

    def root(self, n: str) -> str:
        while self.parent[n] is not None:
            n = self.parent[n]  # type: ignore[assignment]
        return n


def usage_by_cq(held: dict[str, kt.Workload]) -> dict[str, dict[FR, int]]:
    """What the holders' ``status.admission`` says each ClusterQueue uses."""
    out: dict[str, dict[FR, int]] = {}
    for wl in held.values():
        adm = wl.status.admission  # type: ignore[union-attr]
        assert adm is not None
        u = out.setdefault(adm.cluster_queue, {})
        for psa in adm.pod_set_assignments:
            for r, q in (psa.resource_usage or {}).items():
                v = resource_value(r, q)
                if v:
                    fr = ((psa.flavors or {})[r], r)
                    u[fr] = u.get(fr, 0) + v
    return out


def tree_model(world: World, cq_usage: dict[str, dict[FR, int]]) -> TreeModel:
    parent: dict[str, str | None] = {}
    quotas: dict[str, dict[FR, Quota]] = {}
    is_cq: dict[str, bool] = {}
    for c in world.cohorts.values():
        parent["co:" + c.name] = "co:" + c.parent if c.parent else None
        quotas["co:" + c.name] = c.quotas
        is_cq["co:" + c.name] = False
        if c.parent and "co:" + c.parent not in parent:
            parent["co:" + c.parent], quotas["co:" + c.parent] = None, {}
            is_cq["co:" + c.parent] = False
    for q in world.cqs.values():
        parent[q.name] = "co:" + q.cohort if q.cohort else None
        quotas[q.name] = q.quotas
        is_cq[q.name] = True
        if q.cohort and "co:" + q.cohort not in parent:
            parent["co:" + q.cohort], quotas["co:" + q.cohort] = None, {}
            is_cq["co:" + q.cohort] = False
    m = TreeModel(parent, quotas, {}, {}, is_cq)
    children: dict[str, list[str]] = {n: [] for n in parent}
    for n, p in parent.items():
        if p is not None:
            children[p].append(n)

    def fill(n: str) -> None:
        sub = {fr: q.nominal for fr, q in quotas[n].items()}
        use: dict[FR, int] = dict(cq_usage.get(n, {})) if is_cq[n] else {}
        for ch in children[n]:
            fill(ch)
            for fr, v in m.subtree[ch].items():
                sub[fr] = sub.get(fr, 0) + v - m.local(ch, fr)
            for fr, u in m.usage[ch].items():
                stored = max(0, u - m.local(ch, fr))
                if stored:
                    use[fr] = use.get(fr, 0) + stored
        m.subtree[n], m.usage[n] = sub, use

    for n, p in parent.items():
        if p is None:
            fill(n)
    return m


def _tolerates(t: dict[str, str], taint: dict[str, str]) -> bool:
    if t.get("effect") and t["effect"] != taint["effect"]:
        return False
    if t.get("key") and t["key"] != taint["key"]:
        return False
    if t.get("operator", "Equal") == "Exists":
        return True
    return t.get("value", "") == taint.get("value", "")


# ============================================================================ the checks


def check_state(core: AdmissionCore, world: World) -> None:
    held = holders(core)
    cq_usage = usage_by_cq(held)
    for key, wl in held.items():
        spec = world.workloads[key]
        assert wl.status is not None and wl.status.admission is not None
        adm = wl.status.admission
        cq = world.cqs[adm.cluster_queue]
        # Admitted to the ClusterQueue of its LocalQueue.
        assert adm.cluster_queue == spec.cq, (key, adm.cluster_queue)
        by_name = {ps.name: ps for ps in spec.podsets}
        assert sorted(p.name for p in adm.pod_set_assignments) == sorted(by_name), key
        for psa in adm.pod_set_assignments:
            ps = by_name[psa.name]
            count = psa.count if psa.count is not None else ps.count
            # 6. partial admission stays within [minCount, count].
            assert count <= ps.count, (key, psa.name, count)
            assert count >= (ps.min_count if ps.min_count is not None else ps.count), (
                key,
                psa.name,
                count,
                ps.min_count,
            )
            flavors = psa.flavors or {}
            usage = psa.resource_usage or {}
            # Every requested resource is assigned a flavor and accounted at the admitted count.
            for r, per_pod in ps.requests.items():
                if per_pod:
                    assert r in flavors and r in usage, (key, psa.name, r, flavors, usage)
            for r, q in usage.items():
                v = resource_value(r, q)
                assert v == ps.requests.get(r, 0) * count, (key, psa.name, r, str(q), count)
                f = flavors[r]
                # The flavor is one of the queue's flavors for that resource.
                assert (f, r) in cq.quotas, (key, psa.name, f, r)
            # 3. an admitted podSet matches its flavors.
            for f in set(flavors.values()):
                fl = world.flavors[f]
                tols = ps.tolerations + fl.tolerations
                for taint in fl.taints:
                    if taint["effect"] in ("NoSchedule", "NoExecute"):
                        assert any(_tolerates(t, taint) for t in tols), (key, psa.name, f, taint)
                for k, val in ps.node_selector.items():
                    if k in fl.labels:
                        assert fl.labels[k] == val, (key, psa.name, f, k, val)

    # 7. penalties settle at once and usage stays non-negative.
    if core.afs is not None:
        for lq, entry in core.afs.entries.items():
            assert not entry.penalties and not entry.pending, (lq, entry.penalties)
            assert all(v >= 0 for v in entry.resources.values()), (lq, entry.resources)

    # 8. a running LocalQueue's workloads are all queued in its ClusterQueue:
    # its status counts them as pending (Kueue's len(items)).
    for key, lq in core.queues.lqs.items():
        q = core.queues.cqs.get(lq.cluster_queue)
        if q is not None and not lq.stopped:
            assert all(q.has(k) for k in lq.items), key

    # 1. the core's usage is the sum of what its holders' admissions say.
    for name, st_ in core.snap.cqs.items():
        node = st_.node
        want = cq_usage.get(name, {})
        got = {fr: v for fr, v in node.usage.items() if v}
        assert got == want, (name, got, want)

    model = tree_model(world, cq_usage)
    # The bounds hold for the holders not being evicted. Kueue's scheduler
    # checks that an entry fits with the usage of every workload preempted in
    # the cycle taken out (fits in pkg/scheduler/scheduler.go simulates their
    # removal), so a workload that fits may be admitted into room the victims
    # of another entry have not yet given back: until their evictions
    # complete, the tree holds both.
    settled = tree_model(
        world, usage_by_cq({k: w for k, w in held.items() if not condition_true(w, "Evicted")})
    )
    for n, p in model.parent.items():
        node = core.snap.cqs[n].node if model.is_cq[n] else core.tree.cohorts[n[3:]]
        # The tree's shape, subtree quotas and usage are the model's.
        assert (node.parent.name if node.parent else None) == (p[3:] if p else None), n
        assert {fr: v for fr, v in node.subtree.items() if v} == {
            fr: v for fr, v in model.subtree[n].items() if v
        }, (n, node.subtree, model.subtree[n])
        assert {fr: v for fr, v in node.usage.items() if v} == {
            fr: v for fr, v in model.usage[n].items() if v
        }, (n, node.usage, model.usage[n])
        for fr in set(settled.usage[n]) | set(model.quotas[n]):
            used = settled.usage[n].get(fr, 0)
            # 1. nothing holds more than it could ever hold.
            assert used <= potential_available(node, fr), (n, fr, used)
            q = model.quotas[n].get(fr)
            if p is None:
                # 2. a root holds at most its subtree quota, which counts only what
                # each child can lend (nominal - local quota): lending limits hold.
                assert used <= model.subtree[n].get(fr, 0), (n, fr, used, model.subtree[n])
            elif q is not None and q.borrowing_limit is not None:
                # A borrowing limit caps what the node takes beyond its own quota.
                assert used <= model.subtree[n].get(fr, 0) + q.borrowing_limit, (n, fr, used)
            if model.is_cq[n] and p is None:
                # A queue in no cohort never borrows.
                assert used <= (q.nominal if q else 0), (n, fr, used)


def check_cycle(core: AdmissionCore, world: World, r: CycleResult) -> None:
    held = holders(core)
    for key in r.admitted:
        v = core.workload(key)
        assert v is not None and v.state == "admitted", (key, v)
    model_parent = {n: (None if q.cohort is None else q.cohort) for n, q in world.cqs.items()}
    cohort_parent = {c.name: c.parent for c in world.cohorts.values()}

    def root(cq: str) -> str | None:
        c = model_parent[cq]
        if c is None:
            return None
        while cohort_parent.get(c):
            c = cohort_parent[c]  # type: ignore[assignment]
        return c

    cq_usage = usage_by_cq(held)
    victims = [p.victim for p in r.preempted]
    assert len(victims) == len(set(victims)), victims
    for p in r.preempted:
        # 4. preemption only as the policy allows.
        assert p.victim in core.workloads and p.preemptor in core.workloads, p
        assert p.victim != p.preemptor, p
        assert p.victim in held, p
        vv = core.workload(p.victim)
        assert vv is not None and vv.state == "preempted", (p, vv)
        pv = core.workload(p.preemptor)
        assert pv is not None and pv.state not in ("admitted", "reserved"), (p, pv)
        victim, preemptor = world.workloads[p.victim], world.workloads[p.preemptor]
        adm = held[p.victim].status.admission  # type: ignore[union-attr]
        victim_cq = adm.cluster_queue  # type: ignore[union-attr]
        assert victim_cq == victim.cq, p
        pcq = world.cqs[preemptor.cq]
        lower = victim.priority < preemptor.priority
        if p.reason == "InClusterQueue":
            assert victim_cq == pcq.name, p
            assert pcq.within != "Never", (p, pcq.within)
            if pcq.within == "LowerPriority":
                assert lower, (p, victim.priority, preemptor.priority)
            else:
                older = _created(core, p.preemptor) < _created(core, p.victim)
                assert lower or (victim.priority == preemptor.priority and older), (
                    p,
                    victim.priority,
                    preemptor.priority,
                )
        elif p.reason in (
            "InCohortReclamation",
            "InCohortReclaimWhileBorrowing",
            "InCohortFairSharing",
        ):
            assert victim_cq != pcq.name, p
            assert root(victim_cq) is not None and root(victim_cq) == root(pcq.name), p
            assert pcq.reclaim != "Never", (p, pcq.reclaim)
            if pcq.reclaim == "LowerPriority":
                assert lower, (p, victim.priority, preemptor.priority)
            if p.reason == "InCohortReclaimWhileBorrowing":
                assert pcq.bwc_policy == "LowerPriority", (p, pcq.bwc_policy)
                assert lower, (p, victim.priority, preemptor.priority)
                if pcq.bwc_threshold is not None:
                    assert victim.priority <= pcq.bwc_threshold, (p, pcq.bwc_threshold)
            if p.reason == "InCohortFairSharing":
                assert core.config.fair_sharing is not None, p
            # Quota is reclaimed only from a queue that borrows (its victims still
            # count: they hold their quota until their eviction completes). So
            # does the usage a preemptor of this cycle reserved in its queue:
            # Kueue adds it to the snapshot, and a later entry whose targets
            # overlapped recomputes them against it (processEntry,
            # updateAssignmentIfNeeded), so that queue may borrow only then.
            vq = world.cqs[victim_cq].quotas
            usage = dict(cq_usage[victim_cq])
            for pre in {x.preemptor for x in r.preempted}:
                spec = world.workloads[pre]
                if spec.cq != victim_cq:
                    continue
                for ps in spec.podsets:
                    for res, q in ps.requests.items():
                        for fr in vq:  # the flavor it was given is not in the model
                            if fr[1] == res:
                                usage[fr] = usage.get(fr, 0) + q * ps.count
            assert any(u > (vq[fr].nominal if fr in vq else 0) for fr, u in usage.items()), (
                p,
                usage,
            )
        else:
            raise AssertionError(f"unknown preemption reason {p.reason}")


def _created(core: AdmissionCore, key: str) -> datetime:
    ts = core.workloads[key].metadata.creation_timestamp
    assert ts is not None
    return ts


_STAMPED = frozenset({"PendingEvaluation", "Suspended", "Misconfigured", "Inadmissible"})


def final_states(core: AdmissionCore) -> dict[str, tuple[Any, ...]]:
    out: dict[str, tuple[Any, ...]] = {}
    for key in sorted(core.workloads):
        v = core.workload(key)
        assert v is not None
        # A workload waiting for the scheduler's next look (or in no queue)
        # carries what Kueue's workload controller last stamped from its
        # queue's state, which is history, as in Kueue: filed before its
        # LocalQueue, it was stamped "doesn't exist" and then PendingEvaluation
        # once the queue came; filed while its ClusterQueue lacked a flavor,
        # it says "inactive" until the scheduler tries it. Those are compared
        # as no reason; the scheduler's own reasons are compared as they are.
        # A workload parked with its shape (inadmissible) was never tried
        # itself: what it carries is history too.
        reason = v.reason
        if v.state in ("pending", "unqueued", "inadmissible") and reason in _STAMPED:
            reason = ""
        out[key] = (v.state, reason, v.flavors, v.count)
    return out


# ============================================================================ the tests


def test_fair_sharing_config_is_on() -> None:
    assert CLASSIC.fair_sharing is None
    for s, cfg in FAIR.items():
        assert cfg.fair_sharing is not None
        assert tuple(cfg.fair_sharing.preemption_strategies) == s


@pytest.mark.parametrize("mode", ["classic", "fair"])
@settings(max_examples=200)
@given(world=worlds())
def test_invariants_hold_after_every_cycle(mode: str, world: World) -> None:
    order = list(range(len(world.objects)))
    core = build(world, mode, order)
    check_state(core, world)
    trace = run(core, world, order)
    # What the examples exercised (pytest --hypothesis-show-statistics).
    event("cycles", len(trace))
    if world.afs is not None:
        event("admission fair sharing")
    event("admissions", min(sum(len(d[0]) for d in trace), 10))
    for reason in sorted({p[1] for d in trace for p in d[1]}):
        event("preempted " + reason)


@pytest.mark.parametrize("mode", ["classic", "fair"])
@settings(max_examples=100)
@given(world=worlds())
def test_decisions_do_not_depend_on_object_order(mode: str, world: World) -> None:
    order = list(range(len(world.objects)))
    first = build(world, mode, order)
    trace = run(first, world, order, check=False)
    second = build(world, mode, world.order)
    assert run(second, world, world.order, cycles=len(trace), check=False) == trace
    assert final_states(second) == final_states(first)


# ============================================================================ hand-made worlds


def cpu_world(
    cqs: dict[str, tuple[str | None, int]],
    cohorts: dict[str, tuple[str | None, int]],
    workloads: dict[str, tuple[str, int, int, int]],
) -> World:
    """One flavor, cpu only. cqs: name -> (cohort, nominal cores); cohorts:
    name -> (parent, nominal cores); workloads: name -> (queue, priority,
    cores, arrival cycle). Queues preempt lower priorities anywhere."""

    def groups(nominal: int) -> list[dict[str, Any]]:
        res = [{"name": CPU, "nominalQuota": str(nominal)}]
        return [{"coveredResources": [CPU], "flavors": [{"name": "f0", "resources": res}]}]

    w = World(
        {"f0": FlavorSpec("f0", {}, [], [])},
        {
            n: CohortSpec(n, p, {("f0", CPU): Quota(_units(CPU, q))}, groups(q))
            for n, (p, q) in cohorts.items()
        },
        {
            n: CQSpec(
                n,
                c,
                {("f0", CPU): Quota(_units(CPU, q))},
                groups(q),
                "LowerPriority",
                "LowerPriority",
                None,
                None,
                "BestEffortFIFO",
                None,
            )
            for n, (c, q) in cqs.items()
        },
        {
            f"{NS}/{n}": WorkloadSpec(
                n,
                q,
                prio,
                [PodSetSpec("main", 1, None, {CPU: _units(CPU, c)}, {CPU: str(c)}, [], {})],
                a,
            )
            for n, (q, prio, c, a) in workloads.items()
        },
    )
    _render(w)
    for i, o in enumerate(w.objects):
        spec = w.workloads.get(f"{NS}/{o['metadata']['name']}") if o["kind"] == "Workload" else None
        a = spec.arrival if spec is not None else 0
        w.stamps.append(
            (_clock(a) + timedelta(seconds=i % 3), f"00000000-0000-4000-8000-{i + 1:012d}")
        )
        w.arrival.append(a)
    w.order = list(reversed(range(len(w.objects))))
    return w


@pytest.mark.parametrize("mode", ["classic", "fair"])
def test_two_queues_reclaim_from_the_same_borrower_in_one_cycle(mode: str) -> None:
    """Both lenders want their quota back in the same cycle and both need the
    same victim: one preempts it, the other waits for that preemption (its
    targets overlap) and neither is admitted before the victim is gone."""
    world = cpu_world(
        {"borrower": ("co", 0), "lender-a": ("co", 4), "lender-b": ("co", 4)},
        {},
        {"big": ("borrower", -2, 8, 0), "a": ("lender-a", 0, 4, 1), "b": ("lender-b", 0, 4, 1)},
    )
    order = list(range(len(world.objects)))
    core = build(world, mode, order)
    trace = run(core, world, order)
    assert trace[0][0] == (f"{NS}/big",)
    assert trace[1][0] == ()
    assert [(v, p) for v, _, p in trace[1][1]] == [(f"{NS}/big", f"{NS}/a")]
    assert trace[2][0] == (f"{NS}/a", f"{NS}/b")
    second = build(world, mode, world.order)
    assert run(second, world, world.order, cycles=len(trace)) == trace


def test_a_child_cohort_may_hold_more_than_its_subtree_quota() -> None:
    """Why the quota property bounds non-root cohorts by what they could ever
    hold, not by their subtree quota: a cohort borrows from its parent as a
    ClusterQueue borrows from its cohort. Only the root is capped by its subtree."""
    world = cpu_world(
        {"q": ("child", 0)},
        {"root": (None, 4), "child": ("root", 1)},
        {"w": ("q", 0, 3, 0)},
    )
    core = build(world, "classic", range(len(world.objects)))
    run(core, world, list(range(len(world.objects))))
    assert core.workload(f"{NS}/w").state == "admitted"  # type: ignore[union-attr]
    child, root = core.tree.cohorts["child"], core.tree.cohorts["root"]
    assert child.usage[("f0", CPU)] == 3000 > child.subtree[("f0", CPU)] == 1000
    assert root.usage[("f0", CPU)] == 3000 <= root.subtree[("f0", CPU)] == 5000
