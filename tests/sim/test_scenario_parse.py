"""Reading scenario files: creation stamps, UIDs, steps, and the errors of invalid ones."""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kuota.sim.scenario_model import START, NotAScenario, ObjectRef, ScenarioError
from kuota.sim.scenario_parse import load_scenario, load_scenarios, synthetic_uid
from sim.scenario_fakes import A, load, scenario_text, workload, write


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
