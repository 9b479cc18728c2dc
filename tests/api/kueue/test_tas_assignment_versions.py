"""A Workload's topology assignment (TAS) read in either version and written
back in the other: v1beta1 lists domains one by one, v1beta2 packs them into
slices (one value for all, or prefix + roots + suffix; one pod count for all,
or one each), as Kueue's conversion does."""

from __future__ import annotations

from typing import Any

import msgspec
import yaml

from kuota.api.decode import decode_yaml, to_wire
from kuota.api.kueue import types as kt

WL = """
apiVersion: kueue.x-k8s.io/{v}
kind: Workload
metadata: {{name: w, namespace: ns}}
spec:
  queueName: q
  podSets: [{{name: main, count: 6, template: {{spec: {{containers: [{{name: c}}]}}}}}}]
status:
  conditions:
    - {{type: QuotaReserved, status: "True", reason: QuotaReserved, message: "", lastTransitionTime: "2026-01-01T00:00:00Z"}}
  admission:
    clusterQueue: cq
    podSetAssignments:
      - name: main
        count: 6
        flavors: {{cpu: default}}
        topologyAssignment: {ta}
"""

V1 = """
          levels: [cloud.com/block, kubernetes.io/hostname]
          domains:
            - {values: [b1, node-1.east], count: 2}
            - {values: [b1, node-2.east], count: 2}
            - {values: [b1, node-10.east], count: 2}
"""


def read(text: str) -> Any:
    (doc,) = decode_yaml(text)
    assert doc.ok, [str(e) for e in doc.errors]
    return doc.obj


def assignment(wl: Any) -> Any:
    return wl.status.admission.pod_set_assignments[0].topology_assignment


def test_v1beta1_domains_become_v1beta2_slices_and_come_back() -> None:
    wl = read(WL.format(v="v1beta1", ta=V1))
    ta = assignment(wl)
    assert ta.levels == ["cloud.com/block", "kubernetes.io/hostname"]
    (sl,) = ta.slices
    assert sl.domain_count == 3
    assert sl.pod_counts == kt.TopologyAssignmentSlicePodCounts(universal=2)
    block, host = sl.values_per_level
    assert block.universal == "b1"
    assert host.individual == kt.TopologyAssignmentSliceLevelIndividualValues(
        prefix="node-", suffix=".east", roots=["1", "2", "10"]
    )
    # Written back as v1beta1, the domains are the ones read, in order.
    back = to_wire(wl)["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]
    assert back == yaml.safe_load(V1)
    # And as v1beta2, the slice form.
    v2 = to_wire(msgspec.structs.replace(wl, api_version=kt.V1BETA2))
    slices = v2["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]["slices"]
    assert slices[0]["valuesPerLevel"][1]["individual"]["roots"] == ["1", "2", "10"]


def test_uneven_counts_are_listed_one_by_one() -> None:
    uneven = V1.replace(
        "count: 2}\n            - {values: [b1, node-2",
        "count: 3}\n            - {values: [b1, node-2",
    )
    ta = assignment(read(WL.format(v="v1beta1", ta=uneven)))
    assert ta.slices[0].pod_counts == kt.TopologyAssignmentSlicePodCounts(individual=[3, 2, 2])


def test_v1beta2_slices_are_checked_as_the_crd_checks_them() -> None:
    bad = """
          levels: [kubernetes.io/hostname]
          slices:
            - domainCount: 2
              valuesPerLevel: [{individual: {roots: [a]}}]
              podCounts: {universal: 1, individual: [1, 1]}
"""
    (doc,) = decode_yaml(WL.format(v="v1beta2", ta=bad))
    paths = sorted((e.path, e.detail) for e in doc.errors)
    base = "status.admission.podSetAssignments[0].topologyAssignment.slices[0]"
    assert (
        f"{base}.podCounts",
        "exactly one of the fields in [universal individual] must be set",
    ) in paths
    assert (
        base,
        "valuesPerLevel.individual, if set, must have roots of length equal to domainCount of "
        "this TopologyAssignmentSlice",
    ) in paths
