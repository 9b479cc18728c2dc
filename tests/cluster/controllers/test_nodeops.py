"""Node operations as ``oc adm`` performs them — as ``NodeOperation`` steps of
a world and as ``kuota node ... --state DIR`` — with drain above all: pods
move, each evicted pod keeps running for its grace period in virtual time,
nothing is lost and the Job completes."""

from __future__ import annotations

import re
import shlex
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kuota.api.kuotadev.nodeoperation import NodeOperation
from kuota.cli.main import main
from kuota.cluster.controllers.eviction import DISRUPTION_TARGET, GRACEFUL_FINALIZER
from kuota.cluster.podutil import NODE, POD
from kuota.store import open_store
from kuota.store.resources import NODE_OPERATION

from ..conftest import NS, T0, World, decode, job_manifest, node_manifest, pod_manifest
from .test_daemonset_controller import daemonset

WORLDS = Path(__file__).parents[2] / "fixtures" / "worlds"
NODE_OP = NODE_OPERATION


def seconds(n: float) -> timedelta:
    return timedelta(seconds=n)


def node_op(name: str, node: str, operation: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kuota.dev/v1alpha1",
        "kind": "NodeOperation",
        "metadata": {"name": name},
        "spec": {"nodeName": node, "operation": operation, **spec},
    }


def op_status(world: World, name: str) -> Any:
    op: NodeOperation = world.store.get(NODE_OP, "", name)
    return op.status


def where(world: World, job: str) -> dict[str, str]:
    """pod name -> node, for the Job's pods not yet deleted."""
    return {
        p.metadata.name: p.spec.node_name
        for p in world.pods_of(job)
        if p.metadata.deletion_timestamp is None
    }


# ------------------------------------------------------------------------ drain
def test_drain_moves_the_pods_honours_their_grace_and_the_job_completes(world: World) -> None:
    job = job_manifest("j", parallelism=2, completions=2, duration="10m", cpu="2")
    job["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 45
    world.apply(
        node_manifest("n1", cpu="2"),
        node_manifest("n2", cpu="2"),
        node_manifest("n3", cpu="2"),
        job,
    )
    world.run(until=seconds(60))
    before = where(world, "j")
    assert sorted(before.values()) == ["n1", "n2"]
    (victim,) = [name for name, node in before.items() if node == "n1"]

    world.apply(node_op("drain", "n1", "Drain"))
    world.run(until=seconds(61))
    assert world.node("n1").spec.unschedulable is True
    st = op_status(world, "drain")
    assert (st.phase, st.start_time, st.evicted_pods) == (
        "Running",
        T0 + seconds(60),
        [f"{NS}/{victim}"],
    )
    # Evicted: marked, terminating, still running and holding n1 for 45 s.
    pod = world.pod(victim)
    assert pod.metadata.deletion_timestamp == T0 + seconds(60)
    assert GRACEFUL_FINALIZER in pod.metadata.finalizers
    assert pod.status.phase == "Running"
    target = world.condition(victim, DISRUPTION_TARGET)
    assert (target.status, target.reason) == ("True", "EvictionByEvictionAPI")

    world.run(until=seconds(104))
    assert world.pod(victim).status.phase == "Running"
    assert op_status(world, "drain").phase == "Running"
    world.run(until=seconds(105))
    assert not world.exists(POD, victim)  # killed at 60 + 45 s, then gone
    st = op_status(world, "drain")
    assert (st.phase, st.completion_time) == ("Succeeded", T0 + seconds(105))
    assert st.message == "node/n1 cordoned; node/n1 drained"

    # The Job re-created the pod (after its 10 s failure backoff) on n3.
    after = where(world, "j")
    assert sorted(after.values()) == ["n2", "n3"]
    (moved,) = [name for name, node in after.items() if node == "n3"]
    assert world.pod(moved).status.start_time == T0 + seconds(70)

    assert world.run() == "idle"
    st = world.job("j").status
    assert (st.succeeded, st.failed) == (2, 1)  # the evicted pod counts as failed
    assert "Complete" in world.job_conditions("j")
    assert st.completion_time == T0 + seconds(70 + 600)


def test_drain_refuses_daemonset_pods_unless_they_are_ignored(world: World) -> None:
    world.apply(node_manifest("n1"), node_manifest("n2"), daemonset())
    world.run(until=seconds(1))
    (agent,) = [
        p.metadata.name for p in world.store.list(POD, NS).items if p.spec.node_name == "n1"
    ]
    world.apply(node_op("strict", "n1", "Drain"))
    world.run(until=seconds(2))
    st = op_status(world, "strict")
    assert st.phase == "Failed"
    assert st.message == (
        'node/n1 cordoned; error: unable to drain node "n1" due to error: cannot delete '
        f"DaemonSet-managed Pods (use --ignore-daemonsets to ignore): {NS}/{agent}"
    )
    assert world.node("n1").spec.unschedulable is True  # stays cordoned, as with oc
    world.apply(node_op("lenient", "n1", "Drain", ignoreDaemonSets=True))
    world.run(until=seconds(3))
    st = op_status(world, "lenient")
    assert st.phase == "Succeeded"
    assert st.message == (
        "node/n1 already cordoned; Warning: ignoring DaemonSet-managed Pods: "
        f"{NS}/{agent}; node/n1 drained"
    )
    assert world.pod(agent).status.phase == "Running"  # daemon pods stay


def test_drain_refuses_unmanaged_pods_and_local_data_unless_told(world: World) -> None:
    bare = pod_manifest("bare", duration="1h")
    scratch = job_manifest("scratch", duration="1h")
    scratch["spec"]["template"]["spec"]["volumes"] = [{"name": "tmp", "emptyDir": {}}]
    world.apply(node_manifest("n1", cpu="4"), bare, scratch)
    world.run(until=seconds(1))
    (job_pod,) = world.pods_of("scratch")
    world.apply(node_op("d1", "n1", "Drain"))
    world.run(until=seconds(2))
    assert op_status(world, "d1").message.endswith(
        'error: unable to drain node "n1" due to error: [cannot delete Pods declare no '
        f"controller (use --force to override): {NS}/bare, cannot delete Pods with local "
        f"storage (use --delete-emptydir-data to override): {NS}/{job_pod.metadata.name}]"
    )
    world.apply(
        node_op("d2", "n1", "Drain", force=True, deleteEmptyDirData=True, gracePeriodSeconds=5)
    )
    world.run(until=seconds(3))
    st = op_status(world, "d2")
    assert st.phase == "Running"
    assert "Warning: deleting Pods that declare no controller: default/bare" in st.message
    world.run(until=seconds(7))
    assert op_status(world, "d2").phase == "Succeeded"  # --grace-period 5 instead of 30
    assert op_status(world, "d2").completion_time == T0 + seconds(7)


def test_drain_gives_up_after_its_timeout(world: World) -> None:
    job = job_manifest("j", duration="1h")
    job["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 600
    world.apply(node_manifest("n1"), job)
    world.run(until=seconds(10))
    world.apply(node_op("d", "n1", "Drain", timeoutSeconds=60))
    world.run(until=seconds(100))
    st = op_status(world, "d")
    assert (st.phase, st.completion_time) == ("Failed", T0 + seconds(70))
    assert "drain did not complete within 60s: 1 pod(s) still terminating" in st.message


# ---------------------------------------------------------- the other operations
def test_cordon_taint_label_and_readiness_as_world_steps(world: World) -> None:
    world.apply(node_manifest("n1", labels={"zone": "a"}))
    world.apply(
        node_op("c", "n1", "Cordon"),
        node_op("t", "n1", "Taint", taints=["gpu=true:NoSchedule", "spot:NoExecute"]),
        node_op("l", "n1", "Label", labels=["zone=b", "team=ml"], overwrite=True),
    )
    world.run(until=seconds(1))
    n = world.node("n1")
    assert n.spec.unschedulable is True
    # The node lifecycle controller taints a cordoned node (TaintNodesByCondition).
    assert [(t.key, t.value, t.effect) for t in n.spec.taints] == [
        ("gpu", "true", "NoSchedule"),
        ("spot", None, "NoExecute"),
        ("node.kubernetes.io/unschedulable", None, "NoSchedule"),
    ]
    assert n.metadata.labels == {"zone": "b", "team": "ml"}
    assert [op_status(world, k).message for k in ("c", "t", "l")] == [
        "node/n1 cordoned",
        "node/n1 tainted",
        "node/n1 labeled",
    ]
    world.apply(
        node_op("u", "n1", "Uncordon"),
        node_op("t2", "n1", "Taint", taints=["spot-", "gpu:NoSchedule-"]),
        node_op("l2", "n1", "Label", labels=["team-"]),
        node_op("down", "n1", "NotReady"),
    )
    world.run(until=seconds(2))
    n = world.node("n1")
    assert not n.spec.unschedulable
    # Uncordoned and NotReady: only the not-ready taints are left.
    assert sorted((t.key, t.effect) for t in n.spec.taints or ()) == [
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/not-ready", "NoSchedule"),
    ]
    assert n.metadata.labels == {"zone": "b"}
    ready = next(c for c in n.status.conditions if c.type == "Ready")
    assert (ready.status, ready.reason) == ("False", "KubeletNotReady")
    assert op_status(world, "t2").message == "node/n1 untainted"


def test_failed_operations_say_why(world: World) -> None:
    world.apply(node_manifest("n1", taints=[{"key": "gpu", "value": "a", "effect": "NoSchedule"}]))
    world.apply(
        node_op("missing", "n9", "Cordon"),
        node_op("clash", "n1", "Taint", taints=["gpu=b:NoSchedule"]),
        node_op("gone", "n1", "Taint", taints=["spot:NoExecute-"]),
        node_op("relabel", "n1", "Label", labels=["x=1"]),
    )
    world.run(until=seconds(1))
    assert {
        k: (op_status(world, k).phase, op_status(world, k).message)
        for k in ("missing", "clash", "gone")
    } == {
        "missing": ("Failed", 'error: nodes "n9" not found'),
        "clash": (
            "Failed",
            "error: node n1 already has gpu taint(s) with same effect(s) and --overwrite is false",
        ),
        "gone": ("Failed", 'error: taint "spot:NoExecute" not found'),
    }


# --------------------------------------------------------------------- the CLI
@pytest.fixture
def state(tmp_path: Path) -> str:
    """The drain world run for 5 minutes (before its own drain at 00:10)."""
    d = str(tmp_path / "state")
    r = CliRunner().invoke(
        main, ["run", str(WORLDS / "drain.yaml"), "--state", d, "--no-live", "--until", "5m"]
    )
    assert r.exit_code == 0, r.output
    return d


def kuota(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def test_node_commands_on_a_kept_state(state: str) -> None:
    r = kuota("node", "cordon", "gpu-2", "--state", state)
    assert (r.exit_code, r.output) == (0, "node/gpu-2 cordoned\n")
    r = kuota("node", "cordon", "gpu-2", "--state", state)
    assert r.output == "node/gpu-2 already cordoned\n"
    r = kuota("node", "uncordon", "gpu-2", "--state", state)
    assert r.output == "node/gpu-2 uncordoned\n"
    r = kuota("node", "taint", "gpu-2", "maintenance=soon:PreferNoSchedule", "--state", state)
    assert (r.exit_code, r.output) == (0, "node/gpu-2 tainted\n")
    r = kuota("node", "label", "gpu-2", "rack=r7", "--state", state)
    assert (r.exit_code, r.output) == (0, "node/gpu-2 labeled\n")
    r = kuota("node", "label", "gpu-2", "rack=r8", "--state", state)
    assert r.exit_code == 1
    assert "error: 'rack' already has a value (r7), and --overwrite is false" in r.output

    store = open_store(state, lambda: datetime.now(UTC))
    try:
        n = store.get(NODE, "", "gpu-2")
    finally:
        store.close()
    assert n.metadata.labels["rack"] == "r7"
    assert [(t.key, t.effect) for t in n.spec.taints] == [("maintenance", "PreferNoSchedule")]
    assert not n.spec.unschedulable


def test_node_drain_on_a_kept_state_then_the_run_resumes(state: str) -> None:
    r = kuota("node", "drain", "gpu-1", "--state", state)
    assert r.exit_code == 1
    assert (
        'error: unable to drain node "gpu-1" due to error: cannot delete DaemonSet-managed Pods'
        in r.output
    )
    assert "There are pending nodes to be drained:\n gpu-1" in r.output
    r = kuota("node", "drain", "gpu-1", "--ignore-daemonsets", "--state", state)
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == "node/gpu-1 already cordoned"
    assert lines[1].startswith("Warning: ignoring DaemonSet-managed Pods: default/gpu-agent-")
    assert lines[2].startswith("evicting pod default/train-")
    assert lines[3].endswith("terminating (grace period 60s)")
    hint = re.fullmatch(
        r"node/gpu-1 draining: 1 pod ends within their grace period when the run resumes "
        r"\((kuota run .*)\)",
        lines[4],
    )
    assert hint, lines[4]
    resume = shlex.split(hint[1])
    r = kuota("get", "pods", "-o", "wide", "--state", state)
    assert "Terminating" in r.output
    assert r.output.splitlines()[0].split()[-3:] == ["QOS", "CLASS", "NODE"]
    assert "Guaranteed" in r.output

    # The hint's command, run as printed (no live table: no terminal here).
    assert resume[:2] == ["kuota", "run"]
    r = kuota(*resume[1:], "--no-live")
    assert r.exit_code == 0, r.output
    r = kuota("get", "jobs", "--state", state)
    assert r.output.splitlines()[1].split()[:3] == ["train", "Complete", "2/2"]
    r = kuota("get", "pods", "-o", "wide", "--state", state)
    trainers = [line.split() for line in r.output.splitlines() if line.startswith("train-")]
    assert {row[-1] for row in trainers} == {"gpu-2"}  # the evicted one moved off gpu-1


def test_node_commands_reject_bad_input_without_a_traceback(state: str, tmp_path: Path) -> None:
    cases = [
        (
            ("node", "taint", "gpu-1", "gpu=true", "--state", state),
            1,
            "invalid taint spec: gpu=true: a taint to add needs an effect",
        ),
        (
            ("node", "taint", "gpu-1", "gpu=true:Sometimes", "--state", state),
            1,
            "invalid taint effect: Sometimes",
        ),
        (
            ("node", "label", "gpu-1", "bad key=x", "--state", state),
            1,
            'invalid label key "bad key"',
        ),
        (("node", "cordon", "nope", "--state", state), 1, 'error: nodes "nope" not found'),
        (
            ("node", "cordon", "gpu-1", "--state", str(tmp_path / "none")),
            2,
            "no such state directory",
        ),
        (("node", "drain", "gpu-1", "--grace-period", "-5", "--state", state), 2, "--grace-period"),
    ]
    for args, code, text in cases:
        r = kuota(*args)
        assert r.exit_code == code, (args, r.output)
        assert text in r.output, (args, r.output)
        assert "Traceback" not in r.output


def test_a_world_drains_in_virtual_time() -> None:
    r = kuota("run", str(WORLDS / "drain.yaml"), "--no-live")
    assert r.exit_code == 0, r.output
    assert "1 admission of" in r.output
    # 2 pods of 1 h; one evicted at 00:10 and re-created 10 s later.
    assert "70.2m of virtual time" in r.output


def test_world_node_operation_arrives_at_its_time(tmp_path: Path) -> None:
    d = str(tmp_path / "s")
    r = kuota("run", str(WORLDS / "drain.yaml"), "--state", d, "--no-live")
    assert r.exit_code == 0, r.output
    store = open_store(d, lambda: datetime.now(UTC))
    try:
        op = store.get(NODE_OP, "", "drain-gpu-1")
    finally:
        store.close()
    start = datetime(2026, 1, 1, tzinfo=UTC)
    assert op.metadata.creation_timestamp == start + timedelta(minutes=10)
    assert op.status.phase == "Succeeded"
    assert op.status.completion_time == start + timedelta(minutes=11)  # the 60 s grace


def test_decoded_node_operation_defaults() -> None:
    op = decode(node_op("x", "n1", "Cordon"))
    assert (op.spec.node_name, op.spec.operation, op.status) == ("n1", "Cordon", None)
