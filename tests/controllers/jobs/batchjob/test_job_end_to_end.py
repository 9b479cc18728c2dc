"""A batch/v1 Job through the whole embedded control plane: suspended at
creation, one Workload, admitted, unsuspended with the flavor's node labels,
pods placed on matching nodes, finished, quota released, the next admitted."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from embedded.world import (
    GPU,
    T0,
    cluster_queue,
    control_plane,
    flavor,
    job,
    local_queue,
    namespace,
    node,
)
from kuota.api.kueue import types as kt
from kuota.controllers.jobframework import workload_name
from kuota.controllers.jobs.batchjob.job_adapter import BatchJobAdapter
from kuota.store.resources import CLUSTER_QUEUE, JOB, LOCAL_QUEUE, POD, WORKLOAD

WL = WORKLOAD


def _world() -> list[Any]:
    return [
        namespace("team"),
        flavor("a100", {"gpu": "a100"}),
        flavor("h100", {"gpu": "h100"}),
        cluster_queue("cq", {"a100": 4, "h100": 0}),
        local_queue("team", "main", "cq"),
        node("n-h100", 8, {"gpu": "h100"}),
        node("n-a100", 4, {"gpu": "a100"}),
    ]


def _cond(obj: Any, ctype: str) -> Any:
    for c in (obj.status.conditions if obj.status else None) or ():
        if c.type == ctype:
            return c
    return None


def test_job_is_suspended_and_gets_one_workload_named_as_kueue_names_it() -> None:
    cp = control_plane(cluster=True)
    cp.create(_world())
    cp.create([job("team", "first", 4, duration=None), job("team", "second", 4, duration=None)])
    cp.mgr.run_until_idle()
    first = cp.store.get(JOB, "team", "first")
    wls = cp.store.list(WL, "team").items
    assert len(wls) == 2
    names = {w.metadata.name for w in wls}
    assert workload_name(BatchJobAdapter(), "first", first.metadata.uid) in names
    wl = next(w for w in wls if w.metadata.owner_references[0].name == "first")
    assert (
        wl.metadata.name.startswith("job-first-") and len(wl.metadata.name) == len("job-first-") + 5
    )
    assert wl.spec.pod_sets[0].name == "main" and wl.spec.pod_sets[0].count == 1
    assert wl.spec.queue_name == "main"
    # The first fits the 4 A100s and runs; the second waits for quota, suspended.
    assert first.spec.suspend is False
    assert first.spec.template.spec.node_selector == {"gpu": "a100"}
    second = cp.store.get(JOB, "team", "second")
    assert second.spec.suspend is True
    wl2 = next(w for w in wls if w.metadata.owner_references[0].name == "second")
    qr = _cond(wl2, "QuotaReserved")
    assert qr is not None and qr.status == "False"


def test_job_runs_on_the_flavor_nodes_finishes_and_releases_quota_for_the_next() -> None:
    cp = control_plane(cluster=True)
    cp.create(_world())
    cp.create([job("team", "first", 4, duration="10m"), job("team", "second", 4, duration="5m")])
    cp.mgr.run_until_idle()
    pods = cp.store.list(POD, "team").items
    assert [p.spec.node_name for p in pods] == ["n-a100"]
    assert pods[0].status.phase == "Running"
    cp.run()
    first = cp.store.get(JOB, "team", "first")
    second = cp.store.get(JOB, "team", "second")
    assert _cond(first, "Complete").status == "True"
    assert _cond(second, "Complete").status == "True"
    # The second started only when the first finished and released its quota.
    assert first.status.completion_time == T0 + timedelta(minutes=10)
    assert second.status.start_time == T0 + timedelta(minutes=10)
    assert second.status.completion_time == T0 + timedelta(minutes=15)
    for w in cp.store.list(WL, "team").items:
        fin = _cond(w, "Finished")
        assert fin is not None and fin.status == "True" and fin.reason == "Succeeded"
    cq = cp.store.get(CLUSTER_QUEUE, "", "cq")
    assert cq.status.admitted_workloads == 0 and cq.status.pending_workloads == 0
    lq = cp.store.get(LOCAL_QUEUE, "team", "main")
    assert lq.status.admitted_workloads == 0


def test_cluster_queue_status_counts_what_waits_and_what_runs() -> None:
    cp = control_plane(cluster=True)
    cp.create(_world())
    cp.create([job("team", f"j{i}", 2, duration=None) for i in range(3)])
    cp.mgr.run_until_idle()
    cq = cp.store.get(CLUSTER_QUEUE, "", "cq")
    assert (cq.status.admitted_workloads, cq.status.pending_workloads) == (2, 1)
    usage = {f.name: {r.name: str(r.total) for r in f.resources} for f in cq.status.flavors_usage}
    assert usage["a100"][GPU] == "4"
    active = _cond(cq, "Active")
    assert active.status == "True" and active.reason == "Ready"
    lq = cp.store.get(LOCAL_QUEUE, "team", "main")
    assert (lq.status.admitted_workloads, lq.status.pending_workloads) == (2, 1)


def test_eviction_suspends_the_job_and_restores_its_template() -> None:
    cp = control_plane(cluster=True)
    cp.create(_world())
    cp.create([job("team", "j", 4, duration=None)])
    cp.mgr.run_until_idle()
    running = cp.store.get(JOB, "team", "j")
    assert running.spec.suspend is False and running.spec.template.spec.node_selector
    # Stopping the ClusterQueue evicts its workloads (Kueue's HoldAndDrain).
    cq = cp.store.get(CLUSTER_QUEUE, "", "cq")
    stopped = cluster_queue("cq", {"a100": 4, "h100": 0})
    stopped.spec.stop_policy = "HoldAndDrain"
    stopped.metadata.resource_version = cq.metadata.resource_version
    cp.store.update(stopped)
    cp.mgr.run_until_idle()
    j = cp.store.get(JOB, "team", "j")
    assert j.spec.suspend is True
    assert not j.spec.template.spec.node_selector
    assert [p for p in cp.store.list(POD, "team").items if p.status.phase == "Running"] == []
    wl = cp.store.list(WL, "team").items[0]
    ev = _cond(wl, "Evicted")
    assert ev.status == "True" and ev.reason == "ClusterQueueStopped"


def test_deleting_the_job_deletes_its_workload_and_frees_quota() -> None:
    cp = control_plane(cluster=True)
    cp.create(_world())
    cp.create([job("team", "a", 4, duration=None), job("team", "b", 4, duration=None)])
    cp.mgr.run_until_idle()
    assert cp.store.get(JOB, "team", "b").spec.suspend is True
    cp.store.delete(JOB, "team", "a")
    cp.mgr.run_until_idle()
    assert [w.metadata.owner_references[0].name for w in cp.store.list(WL, "team").items] == ["b"]
    assert cp.store.get(JOB, "team", "b").spec.suspend is False


def test_local_queue_status_carries_admission_fair_sharing_usage() -> None:
    from embedded.world import config

    cfg = config(admissionFairSharing={"usageHalfLifeTime": "10m", "usageSamplingInterval": "1m"})
    cp = control_plane(cfg, cluster=True)
    cq = cluster_queue("cq", {"a100": 4, "h100": 0})
    cq.spec.admission_scope = kt.AdmissionScope(admission_mode="UsageBasedAdmissionFairSharing")
    cp.create([namespace("team"), flavor("a100", {"gpu": "a100"}), flavor("h100", {"gpu": "h100"})])
    cp.create([cq, local_queue("team", "main", "cq"), node("n-a100", 4, {"gpu": "a100"})])
    cp.create([job("team", "j", 4, duration="30m")])
    cp.run(until=T0 + timedelta(minutes=10))
    lq = cp.store.get(LOCAL_QUEUE, "team", "main")
    afs = lq.status.fair_sharing.admission_fair_sharing_status
    consumed = afs.consumed_resources[GPU]
    # Ten minutes (one half-life) of 4 GPUs in use: consumed usage is well
    # above zero and below the 4 GPUs held.
    assert 0 < consumed.milli_value() < 4000
    assert afs.last_update is not None and afs.last_update <= T0 + timedelta(minutes=10)
