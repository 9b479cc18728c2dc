"""Running scenario files (tests/scenarios/README.md) against the admission core.

``load_scenario`` (``kuota.sim.scenario_parse``) reads a file into the model
of ``kuota.sim.scenario_model``; both are re-exported here.
``run_scenario`` plays the steps on an ``AdmissionCore`` and checks each step's
``expect`` block, collecting every mismatch as a ``Failure``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from kuota.api.kueue.config import KueueConfig
from kuota.api.quantity import Quantity, QuantityError
from kuota.sim.scenario_model import (
    HOLDING,
    NOT_ADMITTED,
    START,
    BizrqExpect,
    Expect,
    Failure,
    NotAScenario,
    ObjectRef,
    QueueExpect,
    RequeueExpect,
    Scenario,
    ScenarioError,
    ScenarioResult,
    Step,
    WorkloadExpect,
)
from kuota.sim.scenario_parse import load_scenario, load_scenarios, scenario_config, synthetic_uid

if TYPE_CHECKING:
    from kuota.scheduler.views import (
        ClusterQueueView,
        CycleResult,
        LocalQueueView,
        Preemption,
        WorkloadView,
    )

__all__ = [
    "START",
    "Core",
    "CoreFactory",
    "Expect",
    "Failure",
    "NotAScenario",
    "ObjectRef",
    "QueueExpect",
    "RequeueExpect",
    "Scenario",
    "ScenarioError",
    "ScenarioResult",
    "Step",
    "WorkloadExpect",
    "default_core_factory",
    "direct_core_factory",
    "load_scenario",
    "load_scenarios",
    "run_scenario",
    "scenario_config",
    "synthetic_uid",
]


# ============================================================================ running
class Core(Protocol):
    """The admission core as the runner drives it (kuota.scheduler.admission.admission_core.AdmissionCore)."""

    @property
    def now(self) -> datetime: ...
    @property
    def preemptions(self) -> list[Preemption]: ...
    def add(self, obj: Any) -> None: ...
    def apply(self, obj: Any) -> None: ...
    def delete(self, kind: str, namespace: str, name: str) -> bool: ...
    def finish(self, key: str) -> None: ...
    def advance(self, to: datetime) -> None: ...
    def complete_evictions(self) -> None: ...
    def cycle(self) -> CycleResult: ...
    def settle(self, max_cycles: int = 1000) -> list[CycleResult]: ...
    def workload(self, key: str) -> WorkloadView | None: ...
    def cluster_queue(self, name: str) -> ClusterQueueView | None: ...
    def local_queue(self, key: str) -> LocalQueueView | None: ...


CoreFactory = Callable[[KueueConfig, datetime], Core]


def default_core_factory() -> CoreFactory:
    """The embedded control plane, as ``kuota run`` uses it: the store, the
    manager and Kueue's controllers around the admission core."""
    from kuota.embedded.controlplane import scenario_control_plane

    factory: CoreFactory = scenario_control_plane
    return factory


def direct_core_factory() -> CoreFactory:
    """The admission core alone, without store or controllers."""
    from kuota.scheduler.admission.admission_core import AdmissionCore

    factory: CoreFactory = AdmissionCore
    return factory


def _exc_text(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def run_scenario(scenario: Scenario, core_factory: CoreFactory | None = None) -> ScenarioResult:
    """Play the scenario's steps and check every expectation.

    Evictions complete at the start of every step but the first and between
    the cycles of a ``cycles: N`` step, never after its last cycle: the victims
    of a step's last cycle are still ``preempted`` when its expectations are
    checked, and a workload of the starting world whose eviction is in
    progress (Evicted, quota still reserved) still holds its quota in the first
    cycle, as in Kueue's tests (an evicted candidate is preempted first and
    counted, not evicted again). An exception from the core ends the scenario
    with a failure for that step.
    """
    result = ScenarioResult(scenario.name, scenario.file, passed=False)
    try:
        factory = core_factory if core_factory is not None else default_core_factory()
        core = factory(scenario.config, START)
        for obj in scenario.objects:
            core.add(copy.deepcopy(obj))
        # Kueue's controllers see the starting world at once: what is already
        # overdue in it (a PodsReady timeout, a maximum execution time) happens
        # now, not when the clock first moves.
        core.advance(core.now)
    except Exception as err:
        result.failures.append(Failure(None, "objects", "core", "no error", _exc_text(err)))
        return result
    for i, step in enumerate(scenario.steps):
        try:
            before = len(core.preemptions)
            if i:  # evictions of earlier steps complete between steps
                core.complete_evictions()
            refused = _play(core, step)
            expected_refusals = step.expect.refused if step.expect is not None else None
            result.failures += _check_refused(step, expected_refusals, refused)
            if step.expect is not None:
                preempted = list(core.preemptions[before:])
                result.failures += _check(core, step, step.expect, preempted)
        except Exception as err:
            result.failures.append(
                Failure(step.index, step.text, "core", "no error", _exc_text(err))
            )
            break
    result.passed = not result.failures
    return result


def _play(core: Core, step: Step) -> dict[str, str]:
    """Play one step; the objects an admission webhook refused (``apply``,
    ``delete``), by ``Kind/ns/name``, with their errors."""
    from kuota.store.protocol import Invalid

    refused: dict[str, str] = {}
    if step.action == "cycles":
        for n in range(step.cycles):
            if n:
                core.complete_evictions()
            core.cycle()
    elif step.action == "settle":
        core.settle()
    elif step.action == "apply":
        for obj in step.objects:
            try:
                core.apply(copy.deepcopy(obj))
            except Invalid as err:
                m = obj.metadata
                refused[str(ObjectRef(obj.kind, m.namespace or "", m.name))] = str(err)
    elif step.action == "delete":
        for ref in step.refs:
            try:
                core.delete(ref.kind, ref.namespace, ref.name)
            except Invalid as err:
                refused[str(ref)] = str(err)
    elif step.action == "finish":
        for k in step.keys:
            core.finish(k)
    elif step.action == "advance":
        core.advance(core.now + step.duration)
    return refused


def _check_refused(
    step: Step, expected: dict[str, str] | None, got: dict[str, str]
) -> list[Failure]:
    """Exactly the expected objects were refused, each with its text."""
    out = []
    want = expected or {}
    for ref, err in got.items():
        if ref not in want:
            out.append(Failure(step.index, step.text, f"object {ref}", "no refusal", err))
    for ref, text in want.items():
        if ref not in got:
            out.append(
                Failure(step.index, step.text, f"object {ref}", f"refused: {text}", "admitted")
            )
        elif text not in got[ref]:
            out.append(
                Failure(step.index, step.text, f"object {ref}", f"refused: ...{text}...", got[ref])
            )
    return out


# ----------------------------------------------------------------------------- checking
def _fmt(value: Any) -> str:
    """Compact flow-style YAML: ``{main: {cpu: default}}``, ``[a, b]``."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_fmt(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


def _any_of(values: tuple[str, ...]) -> str:
    return values[0] if len(values) == 1 else f"one of {_fmt(values)}"


def _check(core: Core, step: Step, exp: Expect, preempted: list[Preemption]) -> list[Failure]:
    out: list[Failure] = []

    def fail(subject: str, expected: str, actual: str) -> None:
        out.append(Failure(step.index, step.text, subject, expected, actual))

    for k, we in exp.workloads.items():
        view = core.workload(k)
        if view is None:
            fail(f"workload {k}", "the workload to exist", "no such workload")
            continue
        for expected, actual in _check_workload(we, view):
            fail(f"workload {k}", expected, actual)
    if exp.preempted is not None:
        for expected, actual in _check_preempted(exp.preempted, preempted):
            fail("preempted", expected, actual)
    for name, qe in exp.cluster_queues.items():
        cq = core.cluster_queue(name)
        if cq is None:
            fail(f"clusterQueue {name}", "the ClusterQueue to exist", "no such ClusterQueue")
            continue
        for expected, actual in _check_queue(qe, cq):
            fail(f"clusterQueue {name}", expected, actual)
    for name, be in exp.bizrqs.items():
        for expected, actual in _check_bizrq(core, name, be):
            fail(f"bizrq {name}", expected, actual)
    for k, qe in exp.local_queues.items():
        lq = core.local_queue(k)
        if lq is None:
            fail(f"localQueue {k}", "the LocalQueue to exist", "no such LocalQueue")
            continue
        for expected, actual in _check_queue(qe, lq):
            fail(f"localQueue {k}", expected, actual)
    return out


def _check_bizrq(core: Core, name: str, be: BizrqExpect) -> Iterator[tuple[str, str]]:
    from kuota.store.protocol import NotFound
    from kuota.store.resources import BIZRQ

    store = getattr(core, "store", None)
    if store is None:
        yield "a BizGroupResourceQuota", "a core without a store (bizrqs need the control plane)"
        return
    try:
        obj = store.get(BIZRQ, "", name)
    except NotFound:
        yield "the BizGroupResourceQuota to exist", "no such BizGroupResourceQuota"
        return
    st = obj.status
    for label, want in (("used", be.used), ("selfUsed", be.self_used), ("hard", be.hard)):
        if want is None:
            continue
        got = getattr(st, "self_used" if label == "selfUsed" else label, None) if st else None
        got = got or {}
        zero = Quantity.from_int(0)
        if any(got.get(k, zero) != q for k, q in want.items()):
            shown = {k: str(got.get(k, zero)) for k in want}
            yield (
                f"{label}: {_fmt({k: str(q) for k, q in want.items()})}",
                f"{label}: {_fmt(shown)}",
            )


def _check_workload(we: WorkloadExpect, view: WorkloadView) -> Iterator[tuple[str, str]]:
    if we.state is not None:
        ok = any(
            view.state not in HOLDING if s == NOT_ADMITTED else view.state == s for s in we.state
        )
        if not ok:
            actual = f"state: {view.state}"
            if view.reason:
                actual += f" (reason {view.reason})"
            if getattr(view, "explanation", ""):
                actual += f": {view.explanation}"
            yield f"state: {_any_of(we.state)}", actual
    if we.reason is not None and view.reason not in we.reason:
        yield f"reason: {_any_of(we.reason)}", f"reason: {view.reason or '(none)'}"
    if we.flavors is not None:
        got = view.flavors
        if got is None:
            if we.flavors:
                yield f"flavors: {_fmt(we.flavors)}", "flavors: none (no quota reserved)"
        else:
            shown = {
                ps: {r: got.get(ps, {}).get(r, "-") for r in res} for ps, res in we.flavors.items()
            }
            if shown != we.flavors:
                yield f"flavors: {_fmt(we.flavors)}", f"flavors: {_fmt(shown)}"
    if we.count is not None:
        counts = view.count
        if counts is None:
            if we.count:
                yield f"count: {_fmt(we.count)}", "count: none (no quota reserved)"
        else:
            shown_count = {ps: counts.get(ps, "-") for ps in we.count}
            if shown_count != we.count:
                yield f"count: {_fmt(we.count)}", f"count: {_fmt(shown_count)}"
    if we.topology is not None:
        got_t = view.topology or {}
        shown_t = {ps: got_t.get(ps, {}) for ps in we.topology}
        if shown_t != we.topology:
            yield f"topology: {_fmt(we.topology)}", f"topology: {_fmt(shown_t)}"
    if we.delayed is not None:
        got_d = view.delayed or {}
        shown_d = {ps: got_d.get(ps) for ps in we.delayed}
        if shown_d != we.delayed:
            yield (
                f"delayedTopologyRequest: {_fmt(we.delayed)}",
                f"delayedTopologyRequest: {_fmt(shown_d)}",
            )
    if we.active is not None and view.active != we.active:
        yield f"active: {_fmt(we.active)}", f"active: {_fmt(view.active)}"
    if we.check_requeue:
        actual_rs = (
            f"requeueState: {_fmt({'count': view.requeue_count, 'hasRequeueAt': view.has_requeue_at})}"
            if view.requeue_state_set
            else "requeueState: null"
        )
        if we.requeue is None:
            if view.requeue_state_set:
                yield "requeueState: null", actual_rs
        else:
            want: dict[str, Any] = {}
            if we.requeue.count is not None:
                want["count"] = we.requeue.count
            if we.requeue.has_requeue_at is not None:
                want["hasRequeueAt"] = we.requeue.has_requeue_at
            ok = view.requeue_state_set and (
                (we.requeue.count is None or view.requeue_count == we.requeue.count)
                and (
                    we.requeue.has_requeue_at is None
                    or view.has_requeue_at == we.requeue.has_requeue_at
                )
            )
            if not ok:
                yield f"requeueState: {_fmt(want)}", actual_rs


def _check_preempted(
    expected: list[str] | dict[str, tuple[str, ...]], got: list[Preemption]
) -> Iterator[tuple[str, str]]:
    reasons: dict[str, str] = {}
    for p in got:
        reasons[p.victim] = p.reason
    if isinstance(expected, list):
        if set(expected) != set(reasons):
            yield _fmt(sorted(set(expected))), _fmt(sorted(reasons))
        return
    ok = set(expected) == set(reasons) and all(reasons[k] in v for k, v in expected.items())
    if not ok:
        want = {k: v[0] if len(v) == 1 else list(v) for k, v in sorted(expected.items())}
        yield _fmt(want), _fmt(dict(sorted(reasons.items())))


def _usage_mismatch(
    want: dict[str, dict[str, Quantity]], got: Mapping[str, Mapping[str, str]]
) -> tuple[str, str] | None:
    shown: dict[str, dict[str, str]] = {}
    ok = True
    for flavor, res in want.items():
        shown[flavor] = {}
        for r, q in res.items():
            text = got.get(flavor, {}).get(r)
            try:
                actual = Quantity.from_value(text) if text is not None else Quantity.from_int(0)
            except QuantityError:
                actual = None
            ok = ok and actual == q
            shown[flavor][r] = text if text is not None else "0"
    if ok:
        return None
    want_shown = {f: {r: str(q) for r, q in res.items()} for f, res in want.items()}
    return _fmt(want_shown), _fmt(shown)


def _check_queue(
    qe: QueueExpect, view: ClusterQueueView | LocalQueueView
) -> Iterator[tuple[str, str]]:
    for label, want_usage, got_usage in (
        ("usage", qe.usage, view.usage),
        ("admittedUsage", qe.admitted_usage, view.admitted_usage),
    ):
        if want_usage is not None:
            mismatch = _usage_mismatch(want_usage, got_usage)
            if mismatch is not None:
                yield f"{label}: {mismatch[0]}", f"{label}: {mismatch[1]}"
    for label, want_n, got_n in (
        ("pendingWorkloads", qe.pending_workloads, view.pending_workloads),
        ("reservingWorkloads", qe.reserving_workloads, view.reserving_workloads),
        ("admittedWorkloads", qe.admitted_workloads, view.admitted_workloads),
    ):
        if want_n is not None and want_n != got_n:
            yield f"{label}: {want_n}", f"{label}: {got_n}"
    if qe.active is not None and qe.active != view.active:
        yield f"active: {_fmt(qe.active)}", f"active: {_fmt(view.active)}"
    if qe.reason is not None and view.reason not in qe.reason:
        yield f"reason: {_any_of(qe.reason)}", f"reason: {view.reason or '(none)'}"
