"""What the flavor assigner returns: per podSet and resource, the flavor and
the mode it was found in (fit, preempt, no fit), and the messages saying why."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from kuota.api.kueue.types import TopologyAssignment
from kuota.quota.tree import (
    FR,
    Usage,
)
from kuota.quota.workload import PodSetResources, WorkloadInfo

# Flavor assignment modes (worst first).
NO_FIT: Final = 0
PREEMPT_MODE: Final = 1
DEFERRED_FIT: Final = 2
FIT: Final = 3

# Granular preemption modes (worst first).
PM_NOFIT: Final = 0
PM_NO_CANDIDATES: Final = 1
PM_PREEMPT: Final = 2
PM_RECLAIM: Final = 3
PM_FIT: Final = 4
INF: Final = 1 << 62

NO_MATCHING_FLAVOR: Final = "NoMatchingFlavor"
EXCEEDS_MAX_QUOTA: Final = "ExceedsMaxQuota"
WAITING_FOR_QUOTA: Final = "WaitingForQuota"
SEVERITY: Final = {
    "": 0,
    "TopologyPlacementFailed": 1,
    WAITING_FOR_QUOTA: 2,
    EXCEEDS_MAX_QUOTA: 3,
    NO_MATCHING_FLAVOR: 4,
}


def most_severe(a: str, b: str) -> str:
    return a if SEVERITY.get(a, 0) >= SEVERITY.get(b, 0) else b


@dataclass(slots=True, init=False)
class FlavorAssignment:
    name: str
    mode: int
    tried_idx: int
    borrow: int

    # A hand-written __init__ (init=False): compiled (mypyc), the one dataclasses
    # generates stays interpreted, and these are made in every cycle.
    def __init__(self, name: str, mode: int, tried_idx: int = -1, borrow: int = 0) -> None:
        self.name = name
        self.mode = mode
        self.tried_idx = tried_idx
        self.borrow = borrow


@dataclass(slots=True, init=False)
class PodSetAssignment:
    name: str
    count: int
    requests: dict[str, int]  # including `pods` when the queue covers it
    flavors: dict[str, FlavorAssignment]
    reasons: list[str]
    error: str | None
    attempts: dict[str, tuple[int, str]]  # flavor -> (mode, reason)
    topology: TopologyAssignment | None  # where TAS placed its pods
    # Kueue's DelayedTopologyRequest: "Pending" when the topology is left to
    # a MultiKueue worker or to after provisioning (tas_flavorassigner.go).
    delayed: str | None

    # A hand-written __init__ (init=False): compiled (mypyc), the one dataclasses
    # generates stays interpreted, and these are made in every cycle.
    def __init__(
        self,
        name: str,
        count: int,
        requests: dict[str, int],
        flavors: dict[str, FlavorAssignment] | None = None,
        reasons: list[str] | None = None,
        error: str | None = None,
        attempts: dict[str, tuple[int, str]] | None = None,
    ) -> None:
        self.name = name
        self.count = count
        self.requests = requests
        self.flavors = {} if flavors is None else flavors
        self.reasons = [] if reasons is None else reasons
        self.error = error
        self.attempts = {} if attempts is None else attempts
        self.topology = None
        self.delayed = None

    def is_fit(self) -> bool:
        return self.error is None and not self.reasons

    def mode(self) -> int:
        if self.is_fit():
            return FIT
        if self.error is not None or not self.flavors:
            return NO_FIT
        return min(f.mode for f in self.flavors.values())

    def message(self) -> str:
        if self.error is not None:
            return self.error
        return ", ".join(sorted(self.reasons))


@dataclass(slots=True, init=False)
class Assignment:
    podsets: list[PodSetAssignment]
    borrowing: int
    usage: Usage
    last_tried: list[dict[str, int]]
    no_fit_reason: str
    forced_mode: int | None
    generation: int
    cycle: int
    # The podSets' own mode, kept: a podSet is complete when appended (see
    # FlavorAssigner._append, which resets this), and the cycle asks often.
    podsets_mode: int | None = field(repr=False, compare=False)
    # The admitted workload slice this one replaces (ElasticJobsViaWorkloadSlices):
    # its quota is already held, so only the difference is requested.
    replaced: WorkloadInfo | None = field(repr=False, compare=False)

    # A hand-written __init__ (init=False): compiled (mypyc), the one dataclasses
    # generates stays interpreted, and these are made in every cycle.
    def __init__(
        self,
        podsets: list[PodSetAssignment] | None = None,
        borrowing: int = 0,
        usage: Usage | None = None,
        last_tried: list[dict[str, int]] | None = None,
        no_fit_reason: str = "",
        forced_mode: int | None = None,
        generation: int = 0,
        cycle: int = 0,
        podsets_mode: int | None = None,
        replaced: WorkloadInfo | None = None,
    ) -> None:
        self.podsets = [] if podsets is None else podsets
        self.borrowing = borrowing
        self.usage = {} if usage is None else usage
        self.last_tried = [] if last_tried is None else last_tried
        self.no_fit_reason = no_fit_reason
        self.forced_mode = forced_mode
        self.generation = generation
        self.cycle = cycle
        self.podsets_mode = podsets_mode
        self.replaced = replaced

    def mode(self) -> int:
        if not self.podsets:
            return NO_FIT
        if self.forced_mode is not None:
            return self.forced_mode
        m = self.podsets_mode
        if m is None:
            m = self.podsets_mode = min(ps.mode() for ps in self.podsets)
        return m

    def message(self) -> str:
        parts = []
        for ps in self.podsets:
            if ps.is_fit():
                continue
            if ps.error is not None:
                return f"failed to assign flavors to pod set {ps.name}: {ps.error}"
            parts.append(f"couldn't assign flavors to pod set {ps.name}: {ps.message()}")
        return "; ".join(parts)

    def pending_flavors(self) -> bool:
        return any(i != -1 for d in self.last_tried for i in d.values())

    def flavors_by_podset(self) -> dict[str, dict[str, str]]:
        return {ps.name: {r: f.name for r, f in ps.flavors.items()} for ps in self.podsets}

    def frs_need_preemption(self) -> frozenset[FR]:
        return frozenset(
            (f.name, r)
            for ps in self.podsets
            for r, f in ps.flavors.items()
            if f.mode == PREEMPT_MODE
        )

    def total_requests_for(self, info: WorkloadInfo) -> Usage:
        """The workload's requests at the assigned counts, without `pods`."""
        out: Usage = {}
        for i, ps in enumerate(info.podsets):
            pa = self.podsets[i]
            # A replacing slice needs room for its new pods only.
            count = pa.count
            if self.replaced is not None:
                old = old_podset(self.replaced, i)
                count = ps.count - (old.count if old is not None else 0)
            scaled = ps.scaled_to(count)
            for r, q in scaled.requests.items():
                if not q:
                    continue
                fa = pa.flavors.get(r)
                if fa is None:
                    continue
                fr = (fa.name, r)
                out[fr] = out.get(fr, 0) + q
        return out


def old_podset(replaced: WorkloadInfo, i: int) -> PodSetResources | None:
    return replaced.podsets[i] if i < len(replaced.podsets) else None
