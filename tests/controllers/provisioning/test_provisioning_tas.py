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


def test_provisioned_node_takes_the_delayed_topology(tmp_path: Path) -> None:
    group = NODE_GROUP.replace("MIN", "0").replace("FAIL", "0")
    job = _job("tas-job").replace(
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
    state = _run(tmp_path, world, until="8m")
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
