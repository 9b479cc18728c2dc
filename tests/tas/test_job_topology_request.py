"""The pod-set annotations a Job's template carries, as Kueue's job webhook
checks them (jobframework/tas_validation.go, messages and field paths) and as
its job framework carries them into the Workload's podSets[].topologyRequest
(jobframework/tas.go)."""

from __future__ import annotations

import pytest

from kuota.store import Invalid
from kuota.store.resources import WORKLOAD
from tas.world import BLOCK, RACK, job, node, plane

P = "spec.template.metadata.annotations"
REQ = "kueue.x-k8s.io/podset-required-topology"
PREF = "kueue.x-k8s.io/podset-preferred-topology"
UNC = "kueue.x-k8s.io/podset-unconstrained-topology"
SLICE = "kueue.x-k8s.io/podset-slice-required-topology"
SIZE = "kueue.x-k8s.io/podset-slice-size"
GROUP = "kueue.x-k8s.io/podset-group-name"


def _refused(annotations: dict[str, str], count: int = 2) -> str:
    cp = plane([node("n1", "b1", "r1")], cluster=False)
    with pytest.raises(Invalid) as err:
        cp.create([job("bad", count, annotations)])
    return str(err.value)


def test_conflicting_and_malformed_annotations_are_refused() -> None:
    msg = _refused({REQ: BLOCK, PREF: BLOCK})
    assert (
        f"{P}: Invalid value: must not contain more than one topology annotation: "
        f'["{REQ}", "{PREF}", "{UNC}"]' in msg
    )
    assert f'{P}[{REQ}]: Invalid value: "bad label!"' in _refused({REQ: "bad label!"})
    assert f'{P}[{UNC}]: Invalid value: "maybe": must be a boolean value' in _refused(
        {UNC: "maybe"}
    )
    msg = _refused({SLICE: RACK})
    assert f"{P}[{SIZE}]: Required value: must be set when '{SLICE}' is specified" in msg
    msg = _refused({SIZE: "2"})
    assert f"{P}[{SIZE}]: Forbidden: may not be set when '{SLICE}' is not specified" in msg
    msg = _refused({REQ: BLOCK, SLICE: RACK, SIZE: "0"})
    assert f'{P}[{SIZE}]: Invalid value: "0": must be greater than or equal to 1' in msg
    msg = _refused({REQ: BLOCK, SLICE: RACK, SIZE: "3"}, count=2)
    assert f'{P}[{SIZE}]: Invalid value: "3": must not be greater than pod set count 2' in msg
    msg = _refused({GROUP: "7"})
    assert f'{P}[{GROUP}]: Invalid value: "7": must not be a number' in msg
    assert f"{P}[{GROUP}]: Forbidden: may not be set when neither '{PREF}' nor '{REQ}'" in msg


def test_annotations_become_the_workload_topology_request() -> None:
    cp = plane([node("n1", "b1", "r1")], cluster=False)
    cp.create(
        [
            job("req", 2, {REQ: BLOCK, SLICE: RACK, SIZE: "2"}),
            job("pref", 1, {PREF: RACK}),
            job("unc", 1, {UNC: "true"}),
            job("none", 1, {}),
        ]
    )
    cp.settle()
    reqs = {
        w.metadata.owner_references[0].name: w.spec.pod_sets[0].topology_request
        for w in cp.store.list(WORKLOAD, "default").items
    }
    assert reqs["req"] is not None and reqs["req"].required == BLOCK
    assert reqs["req"].pod_set_slice_required_topology == RACK
    assert reqs["req"].pod_set_slice_size == 2
    assert reqs["req"].pod_index_label == "batch.kubernetes.io/job-completion-index"
    assert reqs["pref"] is not None and reqs["pref"].preferred == RACK
    assert reqs["unc"] is not None and reqs["unc"].unconstrained is True
    assert reqs["none"] is None
