"""The scenario model: what a scenario file holds once read, and what running it found.

``kuota.sim.scenario_parse`` reads files into these; ``kuota.sim.scenario``
plays and checks them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, get_args

from kuota.api.kueue.config import KueueConfig
from kuota.api.quantity import Quantity
from kuota.scheduler.views import State

START = datetime(2026, 1, 1, tzinfo=UTC)  # first creation stamp and the clock's start

STATES: tuple[str, ...] = get_args(State)
NOT_ADMITTED = "notAdmitted"
HOLDING = frozenset(("admitted", "reserved"))  # the states notAdmitted excludes
EXPECTABLE_STATES = (*STATES, NOT_ADMITTED)


# ============================================================================ errors
class ScenarioError(Exception):
    """A scenario file that cannot be read or is not a valid scenario.

    ``problems`` are (head, details): per object, where it is and what it is
    (``file (document 1) objects[3]: ClusterQueue/team-a``), then each error with
    its full field path, worded as ``kuota validate`` words them.
    """

    def __init__(self, file: str, problems: list[tuple[str, list[str]]]) -> None:
        self.file = file
        self.problems = problems
        super().__init__(
            "\n".join("\n".join([head, *(f"  {d}" for d in details)]) for head, details in problems)
        )


class NotAScenario(ScenarioError):
    """The file holds no scenario (no ``steps``/``objects``, or it is a manifest)."""


# ============================================================================ the model
@dataclass(frozen=True)
class ObjectRef:
    kind: str
    namespace: str  # "" for cluster-scoped kinds
    name: str

    def __str__(self) -> str:
        if self.namespace:
            return f"{self.kind}/{self.namespace}/{self.name}"
        return f"{self.kind}/{self.name}"


@dataclass(frozen=True)
class RequeueExpect:
    count: int | None = None
    has_requeue_at: bool | None = None


@dataclass
class WorkloadExpect:
    state: tuple[str, ...] | None = None  # any of these
    reason: tuple[str, ...] | None = None  # any of these
    flavors: dict[str, dict[str, str]] | None = None
    count: dict[str, int] | None = None
    topology: dict[str, dict[str, int]] | None = None  # podSet -> domain -> pods
    delayed: dict[str, str | None] | None = None  # podSet -> delayedTopologyRequest
    active: bool | None = None
    check_requeue: bool = False
    requeue: RequeueExpect | None = None  # None with check_requeue: must be unset


@dataclass
class QueueExpect:
    usage: dict[str, dict[str, Quantity]] | None = None
    admitted_usage: dict[str, dict[str, Quantity]] | None = None
    pending_workloads: int | None = None
    reserving_workloads: int | None = None
    admitted_workloads: int | None = None
    active: bool | None = None
    reason: tuple[str, ...] | None = None


@dataclass
class BizrqExpect:
    """A BizGroupResourceQuota's status maps: key -> quantity (absent: 0)."""

    used: dict[str, Quantity] | None = None
    self_used: dict[str, Quantity] | None = None
    hard: dict[str, Quantity] | None = None


@dataclass
class Expect:
    workloads: dict[str, WorkloadExpect] = field(default_factory=dict)
    # None: not checked; a list: exactly these victims; a dict: victims and reasons.
    preempted: list[str] | dict[str, tuple[str, ...]] | None = None
    cluster_queues: dict[str, QueueExpect] = field(default_factory=dict)
    local_queues: dict[str, QueueExpect] = field(default_factory=dict)
    # None: no refusal allowed (one fails the step); a map: exactly these
    # objects (``Kind/ns/name``) were refused, each with this text in its error.
    refused: dict[str, str] | None = None
    bizrqs: dict[str, BizrqExpect] = field(default_factory=dict)


@dataclass
class Step:
    index: int
    action: str  # cycles, settle, apply, delete, finish, advance, or "expect" alone
    text: str  # the action as written, e.g. "cycles: 1"
    cycles: int = 0
    objects: list[Any] = field(default_factory=list)  # apply: typed, stamped
    refs: list[ObjectRef] = field(default_factory=list)  # delete
    keys: list[str] = field(default_factory=list)  # finish
    duration: timedelta = timedelta(0)  # advance
    expect: Expect | None = None


@dataclass
class Scenario:
    name: str
    file: str
    config: KueueConfig
    objects: list[Any]  # typed, stamped, in file order
    steps: list[Step]
    about: str = ""
    source: str = ""
    document: int = 0  # the scenario's document in its file (0-based)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Failure:
    step: int | None  # index into steps; None while the starting world is set up
    action: str
    subject: str  # "workload ns/name", "clusterQueue name", "localQueue ns/name", "preempted"
    expected: str
    actual: str

    @property
    def where(self) -> str:
        return "objects" if self.step is None else f"steps[{self.step}] ({self.action})"

    def __str__(self) -> str:
        return f"{self.where}: {self.subject}: expected {self.expected}, got {self.actual}"


@dataclass
class ScenarioResult:
    name: str
    file: str
    passed: bool
    failures: list[Failure] = field(default_factory=list)
