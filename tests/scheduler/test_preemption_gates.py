"""Preemption gates (MultiKueueOrchestratedPreemption): a workload that must
preempt while a gate of its spec is closed preempts nobody and says so with
BlockedOnPreemptionGates=True; the signal is withdrawn when it reserves quota
and when it is evicted, and an eviction closes every gate again."""

from __future__ import annotations

import copy
from datetime import timedelta
from pathlib import Path
from typing import Any

from kuota.api.kueue import types as kt
from kuota.quota.workload import find_condition, has_closed_preemption_gate
from kuota.scheduler.admission.admission_core import AdmissionCore
from kuota.sim.scenario import START, load_scenario

WORLD = (
    Path(__file__).parent.parent
    / "scenarios/kuota/preemption-gate-opened-lets-the-preemption-go.yaml"
)
PRE = "eng-beta/preemptor"


def _core(strategy: str = "StrictFIFO") -> AdmissionCore:
    sc = load_scenario(WORLD)
    core = AdmissionCore(sc.config, START)
    for obj in sc.objects:
        obj = copy.deepcopy(obj)
        if obj.kind == "ClusterQueue":
            obj.spec.queueing_strategy = strategy
        core.add(obj)
    return core


def _cond(core: AdmissionCore, ctype: str) -> Any:
    return find_condition(core.workloads[PRE], ctype)


def _open(core: AdmissionCore) -> None:
    wl = copy.deepcopy(core.workloads[PRE])
    wl.spec.preemption_gates = None
    core.apply(wl)


def test_a_gated_preemptor_waits_and_says_so_until_it_reserves_quota() -> None:
    core = _core()
    r = core.cycle()
    assert r.preempted == [] and PRE in r.waiting
    c = _cond(core, "BlockedOnPreemptionGates")
    assert (c.status, c.reason) == ("True", "PreemptionGated")
    assert _cond(core, "QuotaReserved").reason == "AdmissionGated"
    _open(core)
    assert [p.victim for p in core.cycle().preempted] == ["eng-beta/low-priority"]
    core.complete_evictions()
    core.cycle()
    c = _cond(core, "BlockedOnPreemptionGates")
    assert (c.status, c.message) == (
        "False",
        "Previously: " + "Workload requires preemption, but it's gated",
    )


def test_best_effort_fifo_parks_the_gated_preemptor_and_an_opened_gate_brings_it_back() -> None:
    core = _core("BestEffortFIFO")
    core.cycle()
    q = core.queues.cluster_queue_of(PRE)
    assert q is not None and q.is_inadmissible(PRE)
    _open(core)
    assert not q.is_inadmissible(PRE)
    assert [p.victim for p in core.cycle().preempted] == ["eng-beta/low-priority"]


def test_an_eviction_withdraws_the_signal_and_closes_every_gate() -> None:
    core = _core()
    core.cycle()
    wl = core.workloads[PRE]
    # Say it got in meanwhile, its gate opened by the orchestrator, and is now evicted.
    wl.status.preemption_gates = [kt.PreemptionGateState(name="gate", position="Open")]
    assert not has_closed_preemption_gate(wl)
    wl.status.admission = kt.Admission(cluster_queue="eng-beta", pod_set_assignments=[])
    core.now += timedelta(seconds=5)
    core._evict(PRE, "PodsReadyTimeout", "Exceeded the PodsReady timeout")
    c = _cond(core, "BlockedOnPreemptionGates")
    assert (c.status, c.reason) == ("False", "PodsReadyTimeout")
    (g,) = wl.status.preemption_gates
    assert (g.position, g.last_transition_time) == ("Closed", core.now)
    assert has_closed_preemption_gate(wl)
