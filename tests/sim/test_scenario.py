"""The scenario runner: steps reach the core, expectations are checked, against
the fake admission core of sim/scenario_fakes.py."""

from __future__ import annotations

import textwrap
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import kuota.sim.scenario as sc
from kuota.scheduler.views import ClusterQueueView, LocalQueueView
from kuota.sim.scenario import START, Failure, run_scenario
from sim.scenario_fakes import (
    B_PREEMPTS_A,
    NEVER,
    A,
    FakeCore,
    core_calls,
    factory,
    load,
    run,
    workload,
)


# ============================================================================ running: steps
def test_cycles_complete_evictions_between_but_not_after(tmp_path: Path) -> None:
    # Not before the first step either: the starting world's evictions in
    # progress still hold their quota in its first cycle.
    result, core = run(tmp_path, "- cycles: 2\n- cycles: 0", A)
    assert result.passed
    assert core_calls(core) == [
        "advance",  # the starting world, at its own instant: what is overdue happens
        "cycle",
        "complete_evictions",
        "cycle",
        "complete_evictions",
    ]


def test_victims_of_the_last_cycle_stay_preempted_until_the_next_step(tmp_path: Path) -> None:
    steps = """\
- cycles: 1
  expect:
    workloads: {ns/a: {state: admitted}}
- cycles: 1
  expect:
    preempted: [ns/a]
    workloads:
      ns/a: {state: preempted, reason: InClusterQueue}
      ns/b: {state: pending, reason: WaitingForPreemptedWorkloads}
- cycles: 1
  expect:
    preempted: []
    workloads:
      ns/a: {state: inadmissible}
      ns/b: {state: admitted}
"""
    # b is applied after the first step so that a is admitted first.
    steps = steps.replace(
        "- cycles: 1\n  expect:\n    preempted: [ns/a]",
        f"- apply:\n{textwrap.indent(B_PREEMPTS_A, '  ')}- cycles: 1\n  expect:\n    preempted: [ns/a]",
        1,
    )
    result, _ = run(tmp_path, steps, A)
    assert result.passed, [str(f) for f in result.failures]


def test_two_cycles_in_one_step_complete_the_eviction_in_between(tmp_path: Path) -> None:
    steps = f"""\
- cycles: 1
- apply:
{textwrap.indent(B_PREEMPTS_A, "  ")}
- cycles: 2
  expect:
    preempted: [ns/a]
    workloads: {{ns/a: {{state: inadmissible}}, ns/b: {{state: admitted}}}}
"""
    result, _ = run(tmp_path, steps, A)
    assert result.passed, [str(f) for f in result.failures]


def test_settle_apply_delete_finish_advance_reach_the_core(tmp_path: Path) -> None:
    steps = f"""\
- settle: true
- apply:
{textwrap.indent(workload("x"), "  ")}
- delete: [ns/x, ClusterQueue/cq, LocalQueue/ns/lq]
- finish: [ns/a]
- advance: 1m30s
- advance: 1500ms
- expect: {{workloads: {{ns/a: {{state: finished}}}}}}
"""
    s = load(tmp_path, steps, A)
    FakeCore.created.clear()
    result = run_scenario(s, factory())
    assert result.passed, [str(f) for f in result.failures]
    core = FakeCore.created[-1]
    assert [c for c in core.calls if c[0] not in ("add", "complete_evictions")] == [
        ("advance", START),
        ("settle",),
        ("apply", core.calls[[c[0] for c in core.calls].index("apply")][1]),
        ("delete", "Workload", "ns", "x"),
        ("delete", "ClusterQueue", "", "cq"),
        ("delete", "LocalQueue", "ns", "lq"),
        ("finish", "ns/a"),
        ("advance", START + timedelta(seconds=90)),
        ("advance", START + timedelta(seconds=91, milliseconds=500)),
    ]
    applied = next(c[1] for c in core.calls if c[0] == "apply")
    # The core gets a copy: what it does to the object never leaks into the scenario.
    assert applied is not s.steps[1].objects[0]
    assert applied.metadata.uid == s.steps[1].objects[0].metadata.uid
    added = [c[1] for c in core.calls if c[0] == "add"]
    assert [o.metadata.name for o in added] == ["ns", "default", "cq", "lq", "a"]
    assert all(o is not p for o, p in zip(added, s.objects, strict=True))
    assert core.now == START + timedelta(seconds=91, milliseconds=500)
    assert core.config is s.config


def test_running_twice_gives_the_same_result(tmp_path: Path) -> None:
    s = load(tmp_path, "- settle: true\n  expect: {workloads: {ns/a: {state: admitted}}}", A)
    assert run_scenario(s, factory()).passed
    assert run_scenario(s, factory()).passed


def test_core_exception_fails_the_step_and_stops(tmp_path: Path) -> None:
    steps = """\
- settle: true
- cycles: 1
- expect: {workloads: {ns/a: {state: pending}}}
"""
    result, core = run(tmp_path, steps, A, fail_on="cycle")
    assert not result.passed
    assert result.failures == [
        Failure(1, "cycles: 1", "core", "no error", "RuntimeError: boom in cycle second line")
    ]
    assert core_calls(core)[-1] == "cycle"  # the third step never ran


def test_core_exception_while_adding_the_world(tmp_path: Path) -> None:
    result, _ = run(tmp_path, "- settle: true", A, fail_on="add")
    assert [str(f) for f in result.failures] == [
        "objects: core: expected no error, got RuntimeError: boom in add second line"
    ]


def test_missing_core_is_a_failure_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing() -> sc.CoreFactory:
        raise ImportError("No module named 'kuota.scheduler.admission'")

    monkeypatch.setattr(sc, "default_core_factory", missing)
    s = load(tmp_path, "- settle: true", A)
    result = run_scenario(s)
    assert not result.passed
    assert "ImportError" in result.failures[0].actual


# ============================================================================ running: expectations
def failures(
    tmp_path: Path, expect: str, *workloads: str, step: str = "settle: true", **kw: Any
) -> list[str]:
    result, _ = run(
        tmp_path,
        f"- {step}\n  expect:\n{textwrap.indent(textwrap.dedent(expect), '    ')}",
        *workloads,
        **kw,
    )
    assert result.passed == (not result.failures)
    return [str(f) for f in result.failures]


def test_state_pass_and_fail(tmp_path: Path) -> None:
    assert (
        failures(
            tmp_path,
            "workloads: {ns/a: {state: admitted}, ns/never: {state: inadmissible}}",
            A,
            NEVER,
        )
        == []
    )
    assert failures(tmp_path, "workloads: {ns/a: {state: pending}}", A) == [
        "steps[0] (settle: true): workload ns/a: expected state: pending, got state: admitted"
    ]
    assert failures(tmp_path, "workloads: {ns/never: {state: admitted}}", NEVER) == [
        "steps[0] (settle: true): workload ns/never: expected state: admitted, "
        "got state: inadmissible (reason WaitingForQuota)"
    ]


def test_state_any_of_and_not_admitted(tmp_path: Path) -> None:
    assert failures(tmp_path, "workloads: {ns/a: {state: [pending, admitted]}}", A) == []
    assert failures(tmp_path, "workloads: {ns/never: {state: notAdmitted}}", NEVER) == []
    assert failures(tmp_path, "workloads: {ns/a: {state: [pending, inadmissible]}}", A) == [
        "steps[0] (settle: true): workload ns/a: expected state: one of [pending, inadmissible], "
        "got state: admitted"
    ]
    assert failures(tmp_path, "workloads: {ns/a: {state: notAdmitted}}", A) == [
        "steps[0] (settle: true): workload ns/a: expected state: notAdmitted, got state: admitted"
    ]
    reserved = {"ns/a": {"state": "reserved"}}
    assert (
        len(failures(tmp_path, "workloads: {ns/a: {state: notAdmitted}}", A, patches=reserved)) == 1
    )
    finished = {"ns/a": {"state": "finished"}}
    assert failures(tmp_path, "workloads: {ns/a: {state: notAdmitted}}", A, patches=finished) == []


def test_reason(tmp_path: Path) -> None:
    assert failures(tmp_path, "workloads: {ns/never: {reason: WaitingForQuota}}", NEVER) == []
    assert (
        failures(
            tmp_path, "workloads: {ns/never: {reason: [NoMatchingFlavor, WaitingForQuota]}}", NEVER
        )
        == []
    )
    assert failures(tmp_path, "workloads: {ns/never: {reason: NoMatchingFlavor}}", NEVER) == [
        "steps[0] (settle: true): workload ns/never: expected reason: NoMatchingFlavor, "
        "got reason: WaitingForQuota"
    ]
    assert failures(tmp_path, "workloads: {ns/a: {reason: [X, Y]}}", A) == [
        "steps[0] (settle: true): workload ns/a: expected reason: one of [X, Y], got reason: (none)"
    ]


def test_flavors_only_what_is_named(tmp_path: Path) -> None:
    spot = workload("s", annotations={"fake/flavor": "spot"})
    assert failures(tmp_path, "workloads: {ns/s: {flavors: {main: {cpu: spot}}}}", spot) == []
    assert failures(tmp_path, "workloads: {ns/s: {flavors: {}}}", spot) == []
    assert failures(
        tmp_path, "workloads: {ns/s: {flavors: {main: {cpu: default, memory: default}}}}", spot
    ) == [
        "steps[0] (settle: true): workload ns/s: expected flavors: {main: {cpu: default, memory: default}}, "
        "got flavors: {main: {cpu: spot, memory: -}}"
    ]
    assert failures(
        tmp_path, "workloads: {ns/never: {flavors: {main: {cpu: default}}}}", NEVER
    ) == [
        "steps[0] (settle: true): workload ns/never: expected flavors: {main: {cpu: default}}, "
        "got flavors: none (no quota reserved)"
    ]


def test_count(tmp_path: Path) -> None:
    assert failures(tmp_path, "workloads: {ns/a: {count: {main: 2}}}", A) == []
    assert failures(tmp_path, "workloads: {ns/a: {count: {main: 1, other: 1}}}", A) == [
        "steps[0] (settle: true): workload ns/a: expected count: {main: 1, other: 1}, "
        "got count: {main: 2, other: -}"
    ]
    assert len(failures(tmp_path, "workloads: {ns/never: {count: {main: 2}}}", NEVER)) == 1


def test_active(tmp_path: Path) -> None:
    assert failures(tmp_path, "workloads: {ns/a: {active: true}}", A) == []
    assert failures(tmp_path, "workloads: {ns/a: {active: false}}", A) == [
        "steps[0] (settle: true): workload ns/a: expected active: false, got active: true"
    ]


def test_requeue_state(tmp_path: Path) -> None:
    set1 = {"ns/a": {"requeue_state_set": True, "requeue_count": 1, "has_requeue_at": True}}
    assert failures(tmp_path, "workloads: {ns/a: {requeueState: null}}", A) == []
    assert (
        failures(
            tmp_path,
            "workloads: {ns/a: {requeueState: {count: 1, hasRequeueAt: true}}}",
            A,
            patches=set1,
        )
        == []
    )
    assert (
        failures(tmp_path, "workloads: {ns/a: {requeueState: {count: 1}}}", A, patches=set1) == []
    )
    assert failures(
        tmp_path,
        "workloads: {ns/a: {requeueState: {count: 2, hasRequeueAt: false}}}",
        A,
        patches=set1,
    ) == [
        "steps[0] (settle: true): workload ns/a: expected requeueState: {count: 2, hasRequeueAt: false}, "
        "got requeueState: {count: 1, hasRequeueAt: true}"
    ]
    assert failures(tmp_path, "workloads: {ns/a: {requeueState: null}}", A, patches=set1) == [
        "steps[0] (settle: true): workload ns/a: expected requeueState: null, "
        "got requeueState: {count: 1, hasRequeueAt: true}"
    ]
    assert failures(tmp_path, "workloads: {ns/a: {requeueState: {count: 0}}}", A) == [
        "steps[0] (settle: true): workload ns/a: expected requeueState: {count: 0}, got requeueState: null"
    ]


def test_missing_workload(tmp_path: Path) -> None:
    assert failures(tmp_path, "workloads: {ns/ghost: {state: admitted}}", A) == [
        "steps[0] (settle: true): workload ns/ghost: expected the workload to exist, got no such workload"
    ]


def test_every_mismatch_is_reported(tmp_path: Path) -> None:
    out = failures(
        tmp_path,
        "workloads: {ns/a: {state: pending, active: false, count: {main: 9}}, ns/never: {state: admitted}}",
        A,
        NEVER,
    )
    assert len(out) == 4


def test_preempted_list_and_map(tmp_path: Path) -> None:
    world = (A, B_PREEMPTS_A)
    # In one cycle a is admitted and b, behind it, preempts it.
    assert failures(tmp_path, "preempted: [ns/a]", *world, step="cycles: 2") == []
    assert failures(tmp_path, "preempted: {ns/a: InClusterQueue}", *world, step="cycles: 2") == []
    assert (
        failures(
            tmp_path,
            "preempted: {ns/a: [InCohortReclamation, InClusterQueue]}",
            *world,
            step="cycles: 2",
        )
        == []
    )
    assert failures(tmp_path, "preempted: []", *world, step="cycles: 2") == [
        "steps[0] (cycles: 2): preempted: expected [], got [ns/a]"
    ]
    assert failures(tmp_path, "preempted: [ns/a, ns/b]", *world, step="cycles: 2") == [
        "steps[0] (cycles: 2): preempted: expected [ns/a, ns/b], got [ns/a]"
    ]
    assert failures(
        tmp_path, "preempted: {ns/a: InCohortReclamation}", *world, step="cycles: 2"
    ) == [
        "steps[0] (cycles: 2): preempted: expected {ns/a: InCohortReclamation}, got {ns/a: InClusterQueue}"
    ]
    # Not named: not checked.
    assert (
        failures(tmp_path, "workloads: {ns/a: {state: preempted}}", *world, step="cycles: 1") == []
    )


def test_preempted_counts_only_this_step(tmp_path: Path) -> None:
    steps = f"""\
- cycles: 1
- apply:
{textwrap.indent(B_PREEMPTS_A, "  ")}
- cycles: 1
  expect: {{preempted: [ns/a]}}
- settle: true
  expect: {{preempted: []}}
"""
    result, core = run(tmp_path, steps, A)
    assert result.passed, [str(f) for f in result.failures]
    assert len(core.preemptions) == 1


def cq_view(**kw: Any) -> ClusterQueueView:
    base: dict[str, Any] = {
        "name": "cq",
        "usage": {"default": {"cpu": "6000m", "memory": "1Gi"}},
        "admitted_usage": {"default": {"cpu": "4"}},
        "pending_workloads": 1,
        "reserving_workloads": 2,
        "admitted_workloads": 2,
        "active": True,
        "reason": "Ready",
    }
    return ClusterQueueView(**{**base, **kw})


def lq_view(**kw: Any) -> LocalQueueView:
    base: dict[str, Any] = {
        "key": "ns/lq",
        "usage": {"default": {"cpu": "1"}},
        "admitted_usage": {},
        "pending_workloads": 0,
        "reserving_workloads": 1,
        "admitted_workloads": 1,
        "active": False,
        "reason": "Stopped",
    }
    return LocalQueueView(**{**base, **kw})


def test_cluster_queue_expectations(tmp_path: Path) -> None:
    cqs = {"cq": cq_view()}
    ok = """\
clusterQueues:
  cq:
    usage: {default: {cpu: "6", memory: 1024Mi, gpu: 0}, spot: {cpu: 0}}
    admittedUsage: {default: {cpu: 4000m}}
    pendingWorkloads: 1
    reservingWorkloads: 2
    admittedWorkloads: 2
    active: true
    reason: [Ready, Other]
"""
    assert failures(tmp_path, ok, A, cqs=cqs) == []
    bad = """\
clusterQueues:
  cq:
    usage: {default: {cpu: "5"}, spot: {cpu: 1}}
    admittedUsage: {default: {cpu: 4, memory: 1}}
    pendingWorkloads: 0
    reservingWorkloads: 1
    admittedWorkloads: 3
    active: false
    reason: Stopped
  other: {}
"""
    assert failures(tmp_path, bad, A, cqs=cqs) == [
        f"steps[0] (settle: true): clusterQueue cq: {x}"
        for x in (
            "expected usage: {default: {cpu: 5}, spot: {cpu: 1}}, "
            "got usage: {default: {cpu: 6000m}, spot: {cpu: 0}}",
            "expected admittedUsage: {default: {cpu: 4, memory: 1}}, "
            "got admittedUsage: {default: {cpu: 4, memory: 0}}",
            "expected pendingWorkloads: 0, got pendingWorkloads: 1",
            "expected reservingWorkloads: 1, got reservingWorkloads: 2",
            "expected admittedWorkloads: 3, got admittedWorkloads: 2",
            "expected active: false, got active: true",
            "expected reason: Stopped, got reason: Ready",
        )
    ] + [
        "steps[0] (settle: true): clusterQueue other: expected the ClusterQueue to exist, "
        "got no such ClusterQueue"
    ]


def test_local_queue_expectations(tmp_path: Path) -> None:
    lqs = {"ns/lq": lq_view()}
    ok = """\
localQueues:
  ns/lq: {usage: {default: {cpu: 1000m}}, admittedUsage: {default: {cpu: 0}}, active: false, reason: Stopped, reservingWorkloads: 1}
"""
    assert failures(tmp_path, ok, A, lqs=lqs) == []
    bad = "localQueues: {ns/lq: {active: true, admittedUsage: {default: {cpu: 1}}}, ns/none: {}}"
    assert failures(tmp_path, bad, A, lqs=lqs) == [
        "steps[0] (settle: true): localQueue ns/lq: expected admittedUsage: {default: {cpu: 1}}, "
        "got admittedUsage: {default: {cpu: 0}}",
        "steps[0] (settle: true): localQueue ns/lq: expected active: true, got active: false",
        "steps[0] (settle: true): localQueue ns/none: expected the LocalQueue to exist, "
        "got no such LocalQueue",
    ]
