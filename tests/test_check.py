"""The scenario runner and ``kuota check``, against a small fake admission core.

The fake follows the core's interface (kuota.scheduler.admission.admission_core.AdmissionCore) with
a toy model driven by Workload annotations:

* ``fake/fits: "false"`` -- never admitted, parked inadmissible (WaitingForQuota);
* ``fake/preempts: ns/victim`` -- while the victim holds quota, a cycle preempts
  it (InClusterQueue, or ``fake/reason``) instead of admitting;
* ``fake/flavor: NAME`` -- the flavor of every resource (default ``default``).

Every other workload is admitted in the first cycle it is pending in.
"""

from __future__ import annotations

import dataclasses
import json
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import kuota.sim.scenario as sc
from kuota.api.kueue.config import KueueConfig
from kuota.cli.main import main
from kuota.scheduler.views import (
    ClusterQueueView,
    CycleResult,
    LocalQueueView,
    Preemption,
    WorkloadView,
)
from kuota.sim.scenario import (
    START,
    Failure,
    NotAScenario,
    ObjectRef,
    Scenario,
    ScenarioError,
    load_scenario,
    load_scenarios,
    run_scenario,
    synthetic_uid,
)

HOLDING = ("admitted", "reserved", "preempted", "evicted")


# ============================================================================ the fake core
class FakeCore:
    created: list[FakeCore] = []  # noqa: RUF012 -- every instance, for the tests to inspect

    def __init__(
        self,
        config: KueueConfig,
        now: datetime,
        *,
        patches: dict[str, dict[str, Any]] | None = None,
        cqs: dict[str, ClusterQueueView] | None = None,
        lqs: dict[str, LocalQueueView] | None = None,
        fail_on: str | None = None,
    ) -> None:
        self.config = config
        self.now = now
        self.calls: list[tuple[Any, ...]] = []
        self.objects: dict[tuple[str, str, str], Any] = {}
        self.wls: dict[str, dict[str, Any]] = {}
        self.preemptions: list[Preemption] = []
        self.evictions: list[tuple[str, str]] = []
        self.patches = patches or {}
        self.cqs = cqs or {}
        self.lqs = lqs or {}
        self.fail_on = fail_on
        FakeCore.created.append(self)

    def _maybe_fail(self, what: str) -> None:
        if self.fail_on == what:
            raise RuntimeError(f"boom in {what}\nsecond line")

    # -- objects
    def _put(self, obj: Any) -> None:
        meta = obj.metadata
        self.objects[(obj.kind, meta.namespace, meta.name)] = obj
        if obj.kind != "Workload":
            return
        key = f"{meta.namespace}/{meta.name}"
        wl = self.wls.setdefault(
            key, {"state": "pending", "reason": "", "flavors": None, "count": None}
        )
        wl["obj"] = obj
        wl["active"] = obj.spec.active
        adm = obj.status.admission if obj.status is not None else None
        if adm is not None and wl["flavors"] is None:
            wl["state"] = "admitted"
            wl["flavors"] = {a.name: dict(a.flavors or {}) for a in adm.pod_set_assignments}
            wl["count"] = {a.name: a.count for a in adm.pod_set_assignments}

    def add(self, obj: Any) -> None:
        self.calls.append(("add", obj))
        self._maybe_fail("add")
        self._put(obj)

    def apply(self, obj: Any) -> None:
        self.calls.append(("apply", obj))
        self._maybe_fail("apply")
        self._put(obj)

    def delete(self, kind: str, namespace: str, name: str) -> bool:
        self.calls.append(("delete", kind, namespace, name))
        if kind == "Workload":
            self.wls.pop(f"{namespace}/{name}", None)
        return self.objects.pop((kind, namespace, name), None) is not None

    def finish(self, key: str) -> None:
        self.calls.append(("finish", key))
        self.wls[key].update(state="finished", reason="", flavors=None, count=None)

    def advance(self, to: datetime) -> None:
        self.calls.append(("advance", to))
        self.now = to

    # -- scheduling
    def complete_evictions(self) -> None:
        self.calls.append(("complete_evictions",))
        for wl in self.wls.values():
            if wl["state"] in ("preempted", "evicted"):
                wl.update(state="inadmissible", reason="WaitingForQuota", flavors=None, count=None)

    def cycle(self) -> CycleResult:
        self.calls.append(("cycle",))
        self._maybe_fail("cycle")
        return self._cycle()

    def _cycle(self) -> CycleResult:
        res = CycleResult()
        pending = [(k, w) for k, w in self.wls.items() if w["state"] == "pending"]
        pending.sort(key=lambda kw: (kw[1]["obj"].metadata.creation_timestamp, kw[0]))
        for k, wl in pending:
            ann = wl["obj"].metadata.annotations or {}
            victim = ann.get("fake/preempts")
            if ann.get("fake/fits") == "false":
                wl.update(state="inadmissible", reason="WaitingForQuota")
                res.waiting[k] = "no quota"
            elif victim and self.wls.get(victim, {}).get("state") in HOLDING:
                v = self.wls[victim]
                if v["state"] in ("admitted", "reserved"):
                    reason = ann.get("fake/reason", "InClusterQueue")
                    v.update(state="preempted", reason=reason)
                    p = Preemption(victim, reason, k, "preempted by fake")
                    self.preemptions.append(p)
                    self.evictions.append((victim, "Preempted"))
                    res.preempted.append(p)
                wl["reason"] = "WaitingForPreemptedWorkloads"
                res.waiting[k] = "waiting for preempted workloads"
            else:
                flavor = ann.get("fake/flavor", "default")
                pod_sets = wl["obj"].spec.pod_sets
                wl.update(
                    state="admitted",
                    reason="",
                    flavors={ps.name: {"cpu": flavor} for ps in pod_sets},
                    count={ps.name: ps.count for ps in pod_sets},
                )
                res.admitted.append(k)
        return res

    def settle(self, max_cycles: int = 1000) -> list[CycleResult]:
        self.calls.append(("settle",))
        out = []
        for _ in range(max_cycles):
            self.complete_evictions()
            r = self._cycle()
            out.append(r)
            if not r.changed:
                break
        return out

    # -- views
    def workload(self, key: str) -> WorkloadView | None:
        wl = self.wls.get(key)
        if wl is None:
            return None
        view = WorkloadView(
            key=key,
            state=wl["state"],
            reason=wl["reason"],
            message="",
            flavors=wl["flavors"],
            count=wl["count"],
            active=wl["active"],
            requeue_count=None,
            has_requeue_at=False,
            requeue_state_set=False,
        )
        return dataclasses.replace(view, **self.patches.get(key, {}))

    def cluster_queue(self, name: str) -> ClusterQueueView | None:
        return self.cqs.get(name)

    def local_queue(self, key: str) -> LocalQueueView | None:
        return self.lqs.get(key)


def factory(**kw: Any) -> sc.CoreFactory:
    return lambda config, now: FakeCore(config, now, **kw)


def core_calls(core: FakeCore) -> list[str]:
    return [c[0] for c in core.calls if c[0] != "add"]


# ============================================================================ scenario text
HEAD = """\
name: {name}
objects:
  - apiVersion: v1
    kind: Namespace
    metadata: {{name: ns}}
  - apiVersion: kueue.x-k8s.io/v1beta1
    kind: ResourceFlavor
    metadata: {{name: default}}
  - apiVersion: kueue.x-k8s.io/v1beta1
    kind: ClusterQueue
    metadata: {{name: cq}}
    spec:
      namespaceSelector: {{}}
      resourceGroups:
        - coveredResources: [cpu]
          flavors: [{{name: default, resources: [{{name: cpu, nominalQuota: "4"}}]}}]
  - apiVersion: kueue.x-k8s.io/v1beta1
    kind: LocalQueue
    metadata: {{name: lq, namespace: ns}}
    spec: {{clusterQueue: cq}}
"""


def workload(name: str, cpu: str = "1", annotations: dict[str, str] | None = None) -> str:
    ann = f", annotations: {json.dumps(annotations)}" if annotations else ""
    return f"""\
  - apiVersion: kueue.x-k8s.io/v1beta1
    kind: Workload
    metadata: {{name: {name}, namespace: ns{ann}}}
    spec:
      queueName: lq
      podSets:
        - name: main
          count: 2
          template:
            spec:
              containers:
                - name: c
                  resources: {{requests: {{cpu: "{cpu}"}}}}
"""


def scenario_text(steps: str, *workloads: str, name: str = "fake-scenario", extra: str = "") -> str:
    return (
        HEAD.format(name=name)
        + "".join(workloads)
        + extra
        + "steps:\n"
        + textwrap.indent(textwrap.dedent(steps).strip("\n"), "  ")
        + "\n"
    )


def write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def load(tmp_path: Path, steps: str, *workloads: str, **kw: Any) -> Scenario:
    return load_scenario(write(tmp_path, scenario_text(steps, *workloads, **kw)))


def run(
    tmp_path: Path, steps: str, *workloads: str, **core_kw: Any
) -> tuple[sc.ScenarioResult, FakeCore]:
    s = load(tmp_path, steps, *workloads)
    FakeCore.created.clear()
    result = run_scenario(s, factory(**core_kw))
    return result, FakeCore.created[-1]


A = workload("a")
B_PREEMPTS_A = workload("b", annotations={"fake/preempts": "ns/a"})
NEVER = workload("never", annotations={"fake/fits": "false"})


# ============================================================================ loading: stamps, UIDs
def test_starting_objects_stamped_one_second_apart_in_file_order(tmp_path: Path) -> None:
    given = """\
  - apiVersion: kueue.x-k8s.io/v1beta1
    kind: ResourceFlavor
    metadata: {name: given, uid: my-uid, creationTimestamp: "2025-12-31T23:54:00Z"}
"""
    s = load(tmp_path, "- cycles: 1", A, given, workload("c"))
    stamps = [(o.kind, o.metadata.name, o.metadata.creation_timestamp) for o in s.objects]
    assert stamps == [
        ("Namespace", "ns", START),
        ("ResourceFlavor", "default", START + timedelta(seconds=1)),
        ("ClusterQueue", "cq", START + timedelta(seconds=2)),
        ("LocalQueue", "lq", START + timedelta(seconds=3)),
        ("Workload", "a", START + timedelta(seconds=4)),
        ("ResourceFlavor", "given", datetime(2025, 12, 31, 23, 54, tzinfo=UTC)),
        ("Workload", "c", START + timedelta(seconds=5)),
    ]
    assert datetime(2026, 1, 1, tzinfo=UTC) == START
    uids = [o.metadata.uid for o in s.objects]
    assert uids[5] == "my-uid"
    made = uids[:5] + uids[6:]
    assert made == [synthetic_uid(n) for n in range(1, 7)]
    assert made == sorted(made) and len(set(made)) == 6


def test_applied_objects_stamped_after_newest_and_with_the_clock(tmp_path: Path) -> None:
    steps = f"""\
- apply:
{textwrap.indent(workload("x") + workload("y"), "  ")}
- advance: 1h
- apply:
{textwrap.indent(workload("z"), "  ")}
"""
    s = load(tmp_path, steps, A)
    newest = START + timedelta(seconds=4)  # the Workload a, fifth object
    x, y = s.steps[0].objects
    (z,) = s.steps[2].objects
    assert x.metadata.creation_timestamp == newest + timedelta(milliseconds=1)
    assert y.metadata.creation_timestamp == newest + timedelta(milliseconds=2)
    assert z.metadata.creation_timestamp == START + timedelta(hours=1)  # the clock is later
    uids = [o.metadata.uid for o in (*s.objects, x, y, z)]
    assert uids == sorted(uids) and len(set(uids)) == len(uids)


def test_applied_after_a_future_stamp_is_still_newer(tmp_path: Path) -> None:
    future = """\
  - apiVersion: kueue.x-k8s.io/v1beta1
    kind: ResourceFlavor
    metadata: {name: future, creationTimestamp: "2030-01-01T00:00:00Z"}
"""
    steps = f"- apply:\n{textwrap.indent(workload('x'), '  ')}"
    s = load(tmp_path, steps, future)
    (x,) = s.steps[0].objects
    assert x.metadata.creation_timestamp == datetime(2030, 1, 1, 0, 0, 0, 1000, tzinfo=UTC)


def test_update_keeps_stamp_and_uid_recreate_gets_new_ones(tmp_path: Path) -> None:
    cq_update = """\
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: ClusterQueue
  metadata: {name: cq}
  spec:
    namespaceSelector: {}
    stopPolicy: Hold
    resourceGroups:
      - coveredResources: [cpu]
        flavors: [{name: default, resources: [{name: cpu, nominalQuota: "8"}]}]
"""
    steps = f"""\
- apply:
{textwrap.indent(cq_update, "    ")}
- delete: [ClusterQueue/cq]
- apply:
{textwrap.indent(cq_update, "    ")}
"""
    s = load(tmp_path, steps)
    cq = s.objects[2]
    (upd,) = s.steps[0].objects
    (new,) = s.steps[2].objects
    assert (upd.metadata.creation_timestamp, upd.metadata.uid) == (
        cq.metadata.creation_timestamp,
        cq.metadata.uid,
    )
    assert new.metadata.creation_timestamp > cq.metadata.creation_timestamp
    assert new.metadata.uid > cq.metadata.uid


# ============================================================================ loading: steps
def test_step_parsing_delete_forms_and_durations(tmp_path: Path) -> None:
    steps = """\
- delete: [Workload/ns/a, ClusterQueue/cq, ns/b, LocalQueue/ns/lq, ResourceFlavor/default]
- advance: 90s
- advance: 1500ms
- advance: 1m30s
- finish: [ns/a]
- settle: true
- cycles: 3
- expect: {workloads: {ns/a: {}}}
"""
    s = load(tmp_path, steps)
    assert s.steps[0].refs == [
        ObjectRef("Workload", "ns", "a"),
        ObjectRef("ClusterQueue", "", "cq"),
        ObjectRef("Workload", "ns", "b"),
        ObjectRef("LocalQueue", "ns", "lq"),
        ObjectRef("ResourceFlavor", "", "default"),
    ]
    assert [st.duration for st in s.steps[1:4]] == [
        timedelta(seconds=90),
        timedelta(milliseconds=1500),
        timedelta(seconds=90),
    ]
    assert [st.text for st in s.steps] == [
        "delete: Workload/ns/a, ClusterQueue/cq, ns/b, LocalQueue/ns/lq, ResourceFlavor/default",
        "advance: 90s",
        "advance: 1500ms",
        "advance: 1m30s",
        "finish: ns/a",
        "settle: true",
        "cycles: 3",
        "expect",
    ]
    assert s.steps[4].keys == ["ns/a"]
    assert s.steps[6].cycles == 3


@pytest.mark.parametrize(
    ("step", "path", "text"),
    [
        ("delete: [Workload/a]", "steps[0].delete[0]", "Workload is namespaced"),
        ("delete: [ClusterQueue/ns/cq]", "steps[0].delete[0]", "ClusterQueue is cluster-scoped"),
        ("delete: [Foo/x]", "steps[0].delete[0]", "unknown kind 'Foo'"),
        ("delete: [a/b/c/d]", "steps[0].delete[0]", "must be Kind/namespace/name"),
        ("delete: [5]", "steps[0].delete[0]", "must be Kind/namespace/name"),
        ("finish: [just-a-name]", "steps[0].finish[0]", "namespace/name"),
        ("advance: 90", "steps[0].advance", "must be a Go duration"),
        ("advance: 90x", "steps[0].advance", 'unknown unit "x"'),
        ("advance: -1s", "steps[0].advance", "only moves forward"),
        ("settle: false", "steps[0].settle", "must be true"),
        ("cycles: -1", "steps[0].cycles", "non-negative"),
        ("expect: {workload: {}}", "steps[0].expect.workload", "Unsupported value"),
        (
            "expect: {workloads: {ns/a: {state: ready}}}",
            "steps[0].expect.workloads[ns/a].state",
            '"ready"',
        ),
        (
            "expect: {workloads: {ns/a: {stat: admitted}}}",
            "steps[0].expect.workloads[ns/a].stat",
            "Unsupported",
        ),
        ("expect: {workloads: {a: {}}}", "steps[0].expect.workloads[a]", "namespace/name"),
        (
            "expect: {workloads: {ns/a: {count: {main: x}}}}",
            "steps[0].expect.workloads[ns/a].count[main]",
            "non-negative",
        ),
        (
            "expect: {workloads: {ns/a: {requeueState: {count: 1, at: 2}}}}",
            "steps[0].expect.workloads[ns/a].requeueState.at",
            "Unsupported",
        ),
        ("expect: {preempted: ns/a}", "steps[0].expect.preempted", "list of workload keys"),
        (
            "expect: {clusterQueues: {cq: {usage: {default: {cpu: lots}}}}}",
            "steps[0].expect.clusterQueues[cq].usage[default][cpu]",
            "Invalid value",
        ),
        ("expect: {localQueues: {lq: {}}}", "steps[0].expect.localQueues[lq]", "namespace/name"),
    ],
)
def test_invalid_steps_name_the_field(tmp_path: Path, step: str, path: str, text: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load(tmp_path, f"- {step}")
    msg = str(info.value)
    assert f"(document 1): Scenario/fake-scenario\n  {path}:" in msg, msg
    assert text in msg, msg


def test_invalid_object_is_reported_with_its_full_path(tmp_path: Path) -> None:
    text = scenario_text("- cycles: 1").replace('nominalQuota: "4"', 'nominalQuota: "-4"')
    with pytest.raises(ScenarioError) as info:
        load_scenario(write(tmp_path, text))
    err = info.value
    assert err.file.endswith("s.yaml")
    head, details = err.problems[0]
    assert head.endswith("s.yaml (document 1) objects[2]: ClusterQueue/cq")
    assert details == [
        'objects[2].spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid value: "-4": '
        "must be greater than or equal to 0"
    ]


def test_invalid_applied_object_and_config_and_gates(tmp_path: Path) -> None:
    bad_wl = workload("x").replace("count: 2", "count: -2")
    text = scenario_text(
        f"- apply:\n{textwrap.indent(bad_wl, '  ')}",
        extra="config: {fairSharing: {preemptionStrategies: [Nope]}}\nfeatureGates: {NoSuchGate: true}\n",
    )
    with pytest.raises(ScenarioError) as info:
        load_scenario(write(tmp_path, text))
    msg = str(info.value)
    assert "steps[0].apply[0]: Workload/ns/x" in msg
    assert "steps[0].apply[0].spec.podSets[0].count" in msg
    assert "config.fairSharing.preemptionStrategies" in msg


def test_unknown_feature_gate_at_top_level(tmp_path: Path) -> None:
    text = scenario_text("- cycles: 1", extra="featureGates: {NoSuchGate: true}\n")
    with pytest.raises(ScenarioError) as info:
        load_scenario(write(tmp_path, text))
    assert "featureGates" in str(info.value)
    assert "NoSuchGate" in str(info.value)


def test_feature_gates_reach_the_config(tmp_path: Path) -> None:
    text = scenario_text("- cycles: 1", extra="featureGates: {PartialAdmission: false}\n")
    s = load_scenario(write(tmp_path, text))
    assert s.config.gate("PartialAdmission") is False


def test_duplicate_starting_object(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as info:
        load(tmp_path, "- cycles: 1", A, A)
    assert 'objects[5]: Duplicate value: "Workload/ns/a"' in str(info.value)


def test_not_a_scenario_and_unreadable(tmp_path: Path) -> None:
    with pytest.raises(NotAScenario):
        load_scenario(write(tmp_path, "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n"))
    with pytest.raises(ScenarioError, match="invalid YAML"):
        load_scenario(write(tmp_path, "name: [unclosed\n"))
    with pytest.raises(ScenarioError, match="No such file"):
        load_scenario(tmp_path / "missing.yaml")


def test_two_scenarios_in_one_file(tmp_path: Path) -> None:
    text = (
        scenario_text("- cycles: 1", name="one")
        + "---\n"
        + scenario_text("- cycles: 1", name="two")
    )
    p = write(tmp_path, text)
    assert [s.name for s in load_scenarios(p)] == ["one", "two"]
    assert [s.document for s in load_scenarios(p)] == [0, 1]
    with pytest.raises(ScenarioError, match="holds 2 scenarios"):
        load_scenario(p)


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


# ============================================================================ kuota check
@pytest.fixture
def fake_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sc, "default_core_factory", lambda: FakeCore)


def cli(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args))
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.stdout, r.stderr


PASSING = scenario_text(
    "- settle: true\n  expect: {workloads: {ns/a: {state: admitted}}}", A, name="passes"
)
FAILING = scenario_text(
    "- settle: true\n  expect: {workloads: {ns/a: {state: pending}}}", A, name="fails"
)


def test_check_json_shape_and_exit_codes(tmp_path: Path, fake_core: None) -> None:
    good = write(tmp_path, PASSING, "good.yaml")
    bad = write(tmp_path, FAILING, "bad.yaml")
    code, out, _ = cli("check", "--json", str(good))
    assert code == 0
    assert json.loads(out) == {
        "passed": 1,
        "failed": 0,
        "scenarios": [{"name": "passes", "file": str(good), "passed": True, "failures": []}],
    }
    code, out, _ = cli("check", "--json", str(good), str(bad))
    assert code == 1
    data = json.loads(out)
    assert (data["passed"], data["failed"]) == (1, 1)
    assert data["scenarios"][1] == {
        "name": "fails",
        "file": str(bad),
        "passed": False,
        "failures": [
            {
                "step": 0,
                "action": "settle: true",
                "subject": "workload ns/a",
                "expected": "state: pending",
                "actual": "state: admitted",
                "message": "steps[0] (settle: true): workload ns/a: expected state: pending, "
                "got state: admitted",
            }
        ],
    }


def test_check_human_output(tmp_path: Path, fake_core: None) -> None:
    good = write(tmp_path, PASSING, "good.yaml")
    bad = write(tmp_path, FAILING, "bad.yaml")
    code, out, _ = cli("check", str(good), str(bad))
    assert code == 1
    assert out.splitlines() == [
        f"PASS passes ({good})",
        f"FAIL fails ({bad})",
        "      steps[0] (settle: true): workload ns/a: expected state: pending, got state: admitted",
        "1 passed, 1 failed",
    ]


def test_check_directory_skips_manifests(tmp_path: Path, fake_core: None) -> None:
    write(tmp_path, PASSING, "d/sub/good.yml")
    manifest = write(
        tmp_path, "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n", "d/ns.yaml"
    )
    write(tmp_path, "not yaml at all", "d/README.md")
    code, out, err = cli("check", str(tmp_path / "d"))
    assert code == 0, err
    assert out.splitlines()[-1] == "1 passed, 0 failed"
    assert f"{manifest}: skipped, not a scenario" in err
    # Named directly, a manifest is an error.
    code, out, err = cli("check", str(manifest))
    assert code == 2
    assert "not a scenario" in err


def test_check_invalid_scenario_exits_2_with_field_path(tmp_path: Path, fake_core: None) -> None:
    good = write(tmp_path, PASSING, "good.yaml")
    text = PASSING.replace('nominalQuota: "4"', 'nominalQuota: "-4"')
    bad = write(tmp_path, text, "bad.yaml")
    code, out, err = cli("check", str(good), str(bad))
    assert code == 2
    assert f"{bad} (document 1) objects[2]: ClusterQueue/cq" in err
    assert (
        'objects[2].spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid value: "-4"'
        in err
    )
    assert out.splitlines()[-1] == "1 passed, 0 failed, 1 error (see above)"
    code, out, err = cli("check", "--json", str(bad))
    assert code == 2
    assert json.loads(out) == {"passed": 0, "failed": 0, "scenarios": []}


def test_check_unreadable_exits_2(tmp_path: Path, fake_core: None) -> None:
    code, _, err = cli("check", str(tmp_path / "missing.yaml"))
    assert code == 2
    assert "missing.yaml: no such file or directory" in err
    code, _, err = cli("check", str(write(tmp_path, "a: [b\n", "broken.yaml")))
    assert code == 2
    assert "broken.yaml: invalid YAML at line 2" in err
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"name: \xff\xfe\n")
    code, _, err = cli("check", str(binary))
    assert code == 2
    assert "bin.yaml: invalid YAML" in err


def test_check_without_the_core_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> sc.CoreFactory:
        raise ImportError("No module named 'kuota.scheduler.admission'")

    monkeypatch.setattr(sc, "default_core_factory", missing)
    code, _, err = cli("check", str(write(tmp_path, PASSING)))
    assert code == 2
    assert "needs the admission core" in err


def test_check_core_exception_is_a_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sc, "default_core_factory", lambda: factory(fail_on="cycle"))
    p = write(tmp_path, scenario_text("- cycles: 1", A))
    code, out, _ = cli("check", str(p))
    assert code == 1
    assert (
        "steps[0] (cycles: 1): core: expected no error, got RuntimeError: boom in cycle second line"
        in out
    )
