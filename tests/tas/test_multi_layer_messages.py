"""Why a multi-layer slice request does not fit, as Kueue words it
(multiLayerNotFitMessage: per layer, the slices the best domain of the
required level holds), in the pending Workload's QuotaReserved condition.
The worlds are the scenarios tests/scenarios/tas/22-25; the texts are the
wantReason of Kueue's tas_cache_test.go TestFindTopologyAssignment cases."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from embedded.world import T0, control_plane, obj
from kuota.store.resources import POD, WORKLOAD
from tas.world import BLOCK as W_BLOCK
from tas.world import RACK as W_RACK
from tas.world import job, node, plane

SCENARIOS = Path(__file__).parents[1] / "scenarios" / "tas"
RACK = "cloud.com/topology-rack"
HOST = "kubernetes.io/hostname"
BLOCK = "cloud.com/topology-block"
HEAD = "couldn't assign flavors to pod set one: topology \"default\" doesn't allow to fit"

CASES = [
    (
        # "multi-layer topology: host slice rounding makes rack slice impossible"
        "22-multi-layer-host-rounding-no-fit.yaml",
        f"; 0/1 slice(s) fit on level {RACK}; 2/3 slice(s) fit on level {HOST}"
        '. Total nodes: 3; excluded: resource "cpu": 1',
    ),
    (
        # "multi-layer topology: small host kills rack slices despite enough total capacity"
        "23-multi-layer-small-host-kills-rack-slice.yaml",
        f"; 1/2 slice(s) fit on level {RACK}; 3/4 slice(s) fit on level {HOST}",
    ),
    (
        # "multi-layer topology: enough hostname slices but not enough rack slices"
        "24-multi-layer-enough-hosts-not-racks.yaml",
        f"; 0/2 slice(s) fit on level {RACK}; 6/6 slice(s) fit on level {HOST}",
    ),
    (
        # "multi-layer topology: 3-layer negative case with small hosts cascading up"
        "25-three-layers-small-hosts-cascade.yaml",
        f"; 1/2 slice(s) fit on level {BLOCK}; 3/4 slice(s) fit on level {RACK}"
        f"; 6/8 slice(s) fit on level {HOST}",
    ),
]


@pytest.mark.parametrize(("scenario", "tail"), CASES, ids=[c[0][:2] for c in CASES])
def test_pending_message_names_each_layer(scenario: str, tail: str) -> None:
    world = yaml.safe_load((SCENARIOS / scenario).read_text())
    cp = control_plane(cluster=False)
    cp.create([obj(o) for o in world["objects"]])
    cp.settle()
    (wl,) = cp.store.list(WORKLOAD, "default").items
    qr = next(c for c in wl.status.conditions if c.type == "QuotaReserved")
    assert (qr.status, qr.message) == ("False", HEAD + tail)


def test_inner_layer_above_the_outer_one_is_refused_at_placement() -> None:
    """buildSliceSizeAtLevel: an inner layer must be below the one before it
    (the webhook cannot check the order: the Topology is the flavor's)."""
    world = yaml.safe_load((SCENARIOS / "19-multi-layer-rack-and-host-slices.yaml").read_text())
    for o in world["objects"]:
        if o["kind"] == "Workload":
            tr = o["spec"]["podSets"][0]["topologyRequest"]
            tr["podsetSliceRequiredTopologyConstraints"] = [
                {"topology": HOST, "size": 4},
                {"topology": RACK, "size": 2},
            ]
    cp = control_plane(cluster=False)
    cp.create([obj(o) for o in world["objects"]])
    cp.settle()
    (wl,) = cp.store.list(WORKLOAD, "default").items
    qr = next(c for c in wl.status.conditions if c.type == "QuotaReserved")
    assert qr.status == "False"
    assert qr.message.endswith(
        f"additional slice layer topology {RACK} must be at a lower level than {HOST}"
    ), qr.message


def test_job_with_layers_runs_its_pods_in_whole_slices() -> None:
    """A Job's constraints annotation, end to end: its Workload is admitted
    with the multi-layer assignment (the world of scenario tas/19) and the
    ungated pods run on those hosts, every rack and host holding whole slices."""
    nodes = [node("x1", "b1", "r1", 1), node("x2", "b1", "r1", 4)]
    nodes += [node("x3", "b1", "r2", 3), node("x4", "b1", "r2", 4)]
    cp = plane(nodes)
    layers = f'[{{"topology":"{W_RACK}","size":4}},{{"topology":"{HOST}","size":2}}]'
    cp.create(
        [
            job(
                "layered",
                8,
                {
                    "kueue.x-k8s.io/podset-required-topology": W_BLOCK,
                    "kueue.x-k8s.io/podset-slice-required-topology-constraints": layers,
                },
            )
        ]
    )
    cp.settle()
    cp.advance(T0 + timedelta(seconds=30))
    pods = cp.store.list(POD, "default").items
    assert all(p.status.phase == "Running" for p in pods)
    assert Counter(p.spec.node_name for p in pods) == {"x2": 4, "x3": 2, "x4": 2}
