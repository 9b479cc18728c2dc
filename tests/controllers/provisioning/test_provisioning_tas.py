"""A ProvisioningRequest check with topology-aware scheduling through ``kuota
run`` (Kueue's delayed topology request: tas_flavorassigner.go
``podSetTopologyRequest``, scheduler.go's second pass): the first pass
reserves quota in the TAS flavor without a topology (there is no node yet),
the request scales a node group up, and once the check is Ready the second
pass places the pods on the new node, the Workload admitted with
delayedTopologyRequest Ready and its topologyAssignment, the pods on that
node."""

from __future__ import annotations

from pathlib import Path

from tests.controllers.provisioning.test_provisioning import (
    NODE_GROUP,
    _check,
    _get,
    _job,
    _run,
    _world,
)

TOPOLOGY = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: default}
spec:
  levels: [{nodeLabel: kubernetes.io/hostname}]
"""


def _tas_world(tmp_path: Path, gpus_per_pod: int) -> Path:
    group = NODE_GROUP.replace("MIN", "0").replace("FAIL", "0")
    job = _job("tas-job", gpus_per_pod).replace(
        "annotations: {kuota.dev/duration: 10m}",
        "annotations: {kuota.dev/duration: 10m, "
        "kueue.x-k8s.io/podset-required-topology: kubernetes.io/hostname}",
    )
    world = _world(
        tmp_path, TOPOLOGY, group, job, cls="best-effort-atomic-scale-up.autoscaling.x-k8s.io"
    )
    setup = (world / "setup.yaml").read_text()
    flavor = 'metadata:\n  name: "default-flavor"\n'
    assert flavor in setup
    (world / "setup.yaml").write_text(
        setup.replace(
            flavor,
            flavor + "spec:\n  nodeLabels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\n"
            "  topologyName: default\n",
        )
    )
    return world


def test_provisioned_node_takes_the_delayed_topology(tmp_path: Path) -> None:
    state = _run(tmp_path, _tas_world(tmp_path, 1), until="8m")
    (wl,) = _get(state, "workloads")
    assert _check(wl)["state"] == "Ready"
    conds = {c["type"]: (c["status"], c["reason"]) for c in wl["status"]["conditions"]}
    assert conds["Admitted"] == ("True", "Admitted")
    [psa] = wl["status"]["admission"]["podSetAssignments"]
    assert psa["delayedTopologyRequest"] == "Ready"
    assert psa["topologyAssignment"]["levels"] == ["kubernetes.io/hostname"]
    # The three pods on the one node the request brought.
    pods = _get(state, "pods")
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["gpu-pool-0"] * 3


def test_a_second_pass_that_does_not_fit_is_a_warning(tmp_path: Path) -> None:
    """Three pods of 2 GPUs required on one host: the request brings two
    nodes of 4 GPUs, where the three fit but not on one host. The workload
    keeps its quota with the request Pending, not admitted, and each failed
    second pass records Kueue's Warning SecondPassFailed with the reason."""
    state = _run(tmp_path, _tas_world(tmp_path, 2), until="8m")
    (wl,) = _get(state, "workloads")
    assert _check(wl)["state"] == "Ready"
    conds = {c["type"]: c["status"] for c in wl["status"]["conditions"]}
    assert conds["QuotaReserved"] == "True"
    assert conds["Admitted"] == "False"
    [psa] = wl["status"]["admission"]["podSetAssignments"]
    assert psa["delayedTopologyRequest"] == "Pending"
    # Before the nodes are up (the request is Provisioned at once, the nodes
    # join 3 minutes later), then on the two new nodes; each reason's
    # repeats, after a backoff, folded into one Event's count.
    evs = sorted(
        (e for e in _get(state, "events") if e["reason"] == "SecondPassFailed"),
        key=lambda e: e["lastTimestamp"],
    )
    assert [e["message"] for e in evs] == [
        "couldn't assign flavors to pod set main: no topology domains at level: kubernetes.io/hostname",
        "couldn't assign flavors to pod set main: "
        'topology "default" allows to fit only 2 out of 3 pod(s)',
    ]
    assert all(e["type"] == "Warning" and e["count"] > 1 for e in evs)
    assert {e["involvedObject"]["kind"] for e in evs} == {"Workload"}
