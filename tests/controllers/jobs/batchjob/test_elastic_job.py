"""Elastic batch Jobs (ElasticJobsViaWorkloadSlices, Kueue's
pkg/workloadslicing and the jobframework reconciler's slice path) through the
control plane with the simulated cluster: a running Job annotated
``kueue.x-k8s.io/elastic-job: "true"`` scaled up gets a new Workload slice
that queues while the Job runs on at its admitted size (its extra pods made
but held by the ``kueue.x-k8s.io/elastic-job`` scheduling gate); once the
slice is admitted the old one is finished and the extra pods run. Scaled
down, the admitted slice shrinks in place and its quota goes to whoever waits.
(Kueue's test/integration/singlecluster/controller/jobs/job/job_controller_test.go
"Job with elastic jobs via workload-slices support".)"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from tests.embedded.world import (
    T0,
    cluster_queue,
    control_plane,
    flavor,
    job,
    local_queue,
    namespace,
    node,
    obj,
)

from kuota.store import clone
from kuota.store.resources import CLUSTER_QUEUE as CQ
from kuota.store.resources import JOB, POD
from kuota.store.resources import WORKLOAD as WL

ELASTIC = {"kueue.x-k8s.io/elastic-job": "true"}
GATE = "kueue.x-k8s.io/elastic-job"
REPLACES = "kueue.x-k8s.io/workload-slice-replacement-for"
SLICE_NAME = "kueue.x-k8s.io/workload-slice-name"


def _world() -> list[Any]:
    return [
        namespace("team"),
        flavor("a100", {"gpu": "a100"}),
        cluster_queue("cq", {"a100": 4}),
        local_queue("team", "main", "cq"),
        node("n1", 8, {"gpu": "a100"}),
    ]


def _elastic(name: str, pods: int, completions: int, duration: str) -> Any:
    j = job("team", name, 1, pods=pods, duration=duration)
    j.metadata.annotations = dict(ELASTIC)
    j.spec.completions = completions
    return j


def _cond(obj: Any, ctype: str) -> Any:
    return next((c for c in (obj.status.conditions or ()) if c.type == ctype), None)


def _slices(cp: Any, job_name: str) -> list[Any]:
    wls = [
        w
        for w in cp.store.list(WL, "team").items
        if w.metadata.owner_references[0].name == job_name
    ]
    return sorted(wls, key=lambda w: w.metadata.creation_timestamp)


def _scale(cp: Any, name: str, parallelism: int) -> None:
    j = clone(cp.store.get(JOB, "team", name))
    j.spec.parallelism = parallelism
    cp.store.update(j)


def _pods(cp: Any, job_name: str) -> dict[str, int]:
    """The Job's live pods: how many gated, how many running."""
    out = {"gated": 0, "running": 0}
    for p in cp.store.list(POD, "team").items:
        if p.metadata.labels.get("job-name") != job_name:
            continue
        if p.status is not None and p.status.phase in ("Succeeded", "Failed"):
            continue
        if any(g.name == GATE for g in p.spec.scheduling_gates or ()):
            out["gated"] += 1
        elif p.status is not None and p.status.phase == "Running":
            out["running"] += 1
    return out


def _usage(cp: Any) -> str:
    view = cp.cluster_queue("cq")
    return view.usage.get("a100", {}).get("nvidia.com/gpu", "0")


def test_scale_up_queues_a_slice_that_replaces_the_old_one_when_admitted() -> None:
    cp = control_plane(cluster=True)
    cp.create(_world())
    cp.create([_elastic("train", 2, 40, "1h"), job("team", "other", 2, duration="30m")])
    cp.run(until=T0 + timedelta(minutes=10))
    (first,) = _slices(cp, "train")
    assert (first.metadata.annotations or {}).get(SLICE_NAME) == first.metadata.name
    assert _cond(first, "Admitted").status == "True"
    assert _pods(cp, "train") == {"gated": 0, "running": 2}
    # The pod template carries the elastic gate (the Job webhook's default).
    t = cp.store.get(JOB, "team", "train").spec.template.spec
    assert [g.name for g in t.scheduling_gates] == [GATE]

    _scale(cp, "train", 4)
    cp.run(until=T0 + timedelta(minutes=20))
    old, new = _slices(cp, "train")
    assert old.metadata.name == first.metadata.name
    assert new.metadata.annotations[REPLACES] == f"team/{old.metadata.name}"
    assert new.metadata.annotations[SLICE_NAME] == old.metadata.name
    assert [ps.count for ps in new.spec.pod_sets] == [4]
    # The new slice waits for quota (other holds 2 of the 4 GPUs); the Job
    # runs on at its admitted size, its two extra pods made but gated.
    assert _cond(new, "QuotaReserved").status == "False"
    assert _cond(old, "Admitted").status == "True"
    assert cp.store.get(JOB, "team", "train").spec.suspend is False
    assert _pods(cp, "train") == {"gated": 2, "running": 2}

    cp.run(until=T0 + timedelta(minutes=40))  # other ends at 30m
    old, new = _slices(cp, "train")
    assert _cond(new, "Admitted").status == "True"
    fin = _cond(old, "Finished")
    assert (fin.status, fin.reason) == ("True", "WorkloadSliceReplaced")
    assert _pods(cp, "train") == {"gated": 0, "running": 4}
    assert _usage(cp) == "4"


def test_scale_down_shrinks_the_admitted_slice_and_frees_quota_for_a_pending_job() -> None:
    cp = control_plane(cluster=True)
    cp.create(_world())
    cp.create([_elastic("train", 4, 40, "1h")])
    cp.run(until=T0 + timedelta(minutes=5))
    cp.create([job("team", "waiting", 2, duration="10m")])
    cp.run(until=T0 + timedelta(minutes=10))
    (wl,) = _slices(cp, "train")
    (waiting,) = _slices(cp, "waiting")
    assert _cond(wl, "Admitted").status == "True"
    assert _cond(waiting, "QuotaReserved").status == "False"

    _scale(cp, "train", 2)
    cp.run(until=T0 + timedelta(minutes=12))
    (wl2,) = _slices(cp, "train")  # the same Workload, scaled in place
    assert wl2.metadata.name == wl.metadata.name
    assert [ps.count for ps in wl2.spec.pod_sets] == [2]
    assert _cond(wl2, "Admitted").status == "True"
    (waiting,) = _slices(cp, "waiting")
    assert _cond(waiting, "Admitted").status == "True"
    assert _pods(cp, "train") == {"gated": 0, "running": 2}
    assert _usage(cp) == "4"


def _wpc(name: str, value: int) -> Any:
    return obj(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": name},
            "value": value,
        }
    )


def test_a_priority_change_reaches_both_the_pending_slice_and_the_admitted_one() -> None:
    """syncWorkloadSlicePriority (Kueue's "Should apply a WorkloadPriorityClass
    change to an admitted workload slice", with a scale-up pending): a new
    priority-class label on the Job is written to the waiting slice and to
    the admitted slice it waits behind."""
    cp = control_plane(cluster=True)
    cp.create([*_world(), _wpc("low", 100), _wpc("high", 1000)])
    train = _elastic("train", 2, 40, "1h")
    train.metadata.labels["kueue.x-k8s.io/priority-class"] = "low"
    cp.create([train, job("team", "other", 2, duration="1h")])
    cp.run(until=T0 + timedelta(minutes=5))
    _scale(cp, "train", 4)
    cp.run(until=T0 + timedelta(minutes=10))
    old, new = _slices(cp, "train")
    assert _cond(new, "QuotaReserved").status == "False"
    assert (old.spec.priority, new.spec.priority) == (100, 100)

    j = clone(cp.store.get(JOB, "team", "train"))
    j.metadata.labels["kueue.x-k8s.io/priority-class"] = "high"
    cp.store.update(j)
    cp.run(until=T0 + timedelta(minutes=11))
    old, new = _slices(cp, "train")
    assert [(w.spec.priority_class_ref.name, w.spec.priority) for w in (old, new)] == [
        ("high", 1000),
        ("high", 1000),
    ]


def test_a_drained_cluster_queue_readmits_the_same_slice_chain() -> None:
    """Kueue's "Should resume with the same slice chain after eviction by a
    stopped ClusterQueue": the admitted replacement slice, evicted when its
    ClusterQueue is drained (the Job suspended), is admitted again when it
    resumes, and the Job restarts with the chain's first name on its pods."""
    cp = control_plane(cluster=True)
    cp.create(_world())
    cp.create([_elastic("train", 1, 40, "1h")])
    cp.run(until=T0 + timedelta(minutes=5))
    (first,) = _slices(cp, "train")
    _scale(cp, "train", 2)
    cp.run(until=T0 + timedelta(minutes=10))
    old, new = _slices(cp, "train")
    assert _cond(new, "Admitted").status == "True"
    assert _cond(old, "Finished").reason == "WorkloadSliceReplaced"
    tmpl = cp.store.get(JOB, "team", "train").spec.template.metadata.annotations
    assert tmpl[SLICE_NAME] == first.metadata.name

    def stop_policy(policy: str | None) -> None:
        cq = clone(cp.store.get(CQ, "", "cq"))
        cq.spec.stop_policy = policy
        cp.store.update(cq)

    stop_policy("HoldAndDrain")
    cp.run(until=T0 + timedelta(minutes=15))
    _, new = _slices(cp, "train")
    ev = _cond(new, "Evicted")
    assert (ev.status, ev.reason) == ("True", "ClusterQueueStopped")
    assert cp.store.get(JOB, "team", "train").spec.suspend is True

    stop_policy("None")
    cp.run(until=T0 + timedelta(minutes=20))
    wls = _slices(cp, "train")
    assert [w.metadata.name for w in wls] == [old.metadata.name, new.metadata.name]
    assert _cond(wls[1], "Admitted").status == "True"
    j = cp.store.get(JOB, "team", "train")
    assert j.spec.suspend is False
    assert j.spec.template.metadata.annotations[SLICE_NAME] == first.metadata.name
    assert _pods(cp, "train") == {"gated": 0, "running": 2}
