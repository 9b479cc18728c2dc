"""TAS admission through the control plane, as Kueue words it: the pending
message of a workload that fits its quota but not the topology (with the
node exclusion stats), a ClusterQueue inactive while its TAS flavor's
Topology is missing, and the topology assignment in both API versions."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import msgspec

from embedded.world import T0
from kuota.api.kueue import v1beta1
from kuota.store.resources import CLUSTER_QUEUE, TOPOLOGY, WORKLOAD
from tas.world import BLOCK, RACK, job, node, plane, setup

REQ = "kueue.x-k8s.io/podset-required-topology"
PREF = "kueue.x-k8s.io/podset-preferred-topology"


def _wl(cp: Any, job_name: str) -> Any:
    (wl,) = [
        w
        for w in cp.store.list(WORKLOAD, "default").items
        if w.metadata.owner_references[0].name == job_name
    ]
    return wl


def _cond(obj: Any, ctype: str) -> Any:
    return next(c for c in obj.status.conditions if c.type == ctype)


NODES = [node("n1", "b1", "r1"), node("n2", "b1", "r2"), node("n3", "b2", "r1")]


def test_required_rack_too_small_waits_with_kueues_message() -> None:
    cp = plane(NODES, cluster=False)
    cp.create([job("big", 2, {REQ: RACK})])
    cp.settle()
    qr = _cond(_wl(cp, "big"), "QuotaReserved")
    assert qr.status == "False"
    assert qr.message == (
        'couldn\'t assign flavors to pod set main: topology "default" allows to fit only '
        "1 out of 2 pod(s)"
    )


def test_exclusions_are_counted_in_the_message() -> None:
    cp = plane(NODES, cluster=False)
    cp.create([job("huge", 1, {REQ: BLOCK}, cpu="2")])
    cp.settle()
    qr = _cond(_wl(cp, "huge"), "QuotaReserved")
    assert qr.message == (
        "couldn't assign flavors to pod set main: topology \"default\" doesn't allow to fit "
        'any of 1 pod(s). Total nodes: 3; excluded: resource "cpu": 3'
    )


def test_preferred_spreads_when_no_block_holds_it() -> None:
    cp = plane(NODES, cluster=False)
    cp.create([job("wide", 3, {PREF: BLOCK})])
    cp.settle()
    wl = _wl(cp, "wide")
    (psa,) = wl.status.admission.pod_set_assignments
    assert sorted(v[0] for v, _ in v1beta1.domains_of(psa.topology_assignment)) == [
        "n1",
        "n2",
        "n3",
    ]


def test_cluster_queue_inactive_while_topology_missing() -> None:
    cp = plane(NODES, cluster=False)
    cp.store.delete(TOPOLOGY, "", "default")
    cp.create([job("a", 1, {REQ: RACK})])
    cp.settle()
    cq = cp.store.get(CLUSTER_QUEUE, "", "tas-cluster-queue")
    active = _cond(cq, "Active")
    assert (active.status, active.reason) == ("False", "TopologyNotFound")
    assert active.message == (
        'Can\'t admit new workloads: there is no Topology "default" for TAS flavor "tas-flavor".'
    )
    assert _cond(_wl(cp, "a"), "QuotaReserved").status == "False"
    cp.create([setup()[0]])  # the Topology again
    cp.settle()
    cp.advance(T0 + timedelta(seconds=2))  # past Kueue's queue-status batch period
    assert _cond(cp.store.get(CLUSTER_QUEUE, "", "tas-cluster-queue"), "Active").status == "True"
    assert _cond(_wl(cp, "a"), "QuotaReserved").status == "True"


def test_assignment_reads_in_v1beta1_as_listed_domains() -> None:
    cp = plane(NODES, cluster=False)
    cp.create([job("wide", 3, {PREF: BLOCK})])
    cp.settle()
    wl = _wl(cp, "wide")
    v1 = v1beta1.wl_from_internal(wl)
    ta = msgspec.to_builtins(v1.status.admission.pod_set_assignments[0].topology_assignment)
    assert ta == {
        "levels": ["kubernetes.io/hostname"],
        "domains": [
            {"values": ["n1"], "count": 1},
            {"values": ["n2"], "count": 1},
            {"values": ["n3"], "count": 1},
        ],
    }
