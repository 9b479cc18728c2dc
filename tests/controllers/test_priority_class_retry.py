"""A job that names a WorkloadPriorityClass not created yet: Kueue's
reconcile fails and is retried (with backoff) until the class exists, so the
job gets its Workload, or its Workload the new priority, once it does. kuota
requeues the jobs naming a class when the class is created: a Job, a pod
group, a StatefulSet and a LeaderWorkerSet."""

from __future__ import annotations

from datetime import timedelta

from controllers.jobs.leaderworkerset.test_lws_integration import FW as LWS_FW
from controllers.jobs.leaderworkerset.test_lws_integration import lws, wl_name
from controllers.jobs.pod.test_pod_integration import pod
from controllers.jobs.statefulset.test_statefulset_integration import STS, statefulset
from controllers.test_priority_updates import (
    JOB,
    PRIO,
    WL,
    job_wl,
    owned_workload,
    plane,
    priority,
    relabel,
    wpc,
)
from embedded.world import T0, job


def workloads(cp: object) -> list[str]:
    return sorted(w.metadata.name for w in cp.store.list(WL, "team").items)  # type: ignore[attr-defined]


def test_a_job_made_before_its_class_gets_its_workload_when_the_class_comes() -> None:
    cp = plane()
    cp.create([job("team", "j", 1, labels={PRIO: "urgent"})])
    cp.mgr.run_until_idle()
    assert workloads(cp) == []  # no Workload without its class
    cp.create([wpc("urgent", 5000)])
    cp.mgr.run_until_idle()
    assert priority(job_wl(cp, "j")) == (5000, "WorkloadPriorityClass", "urgent")


def test_a_label_changed_to_a_missing_class_takes_effect_when_the_class_comes() -> None:
    cp = plane()
    cp.create([job("team", "j", 1, duration="1h", labels={PRIO: "low"})])
    cp.mgr.run_until_idle()
    relabel(cp, JOB, "j", "urgent")
    cp.mgr.run_until_idle()
    assert priority(job_wl(cp, "j")) == (10, "WorkloadPriorityClass", "low")
    cp.create([wpc("urgent", 5000)])
    cp.mgr.run_until_idle()
    assert priority(job_wl(cp, "j")) == (5000, "WorkloadPriorityClass", "urgent")


def test_a_pod_group_waits_for_its_class_then_gets_its_workload() -> None:
    cp = plane("pod")
    cp.create([pod(f"p{i}", group="g", total=2, labels={PRIO: "urgent"}) for i in range(2)])
    cp.mgr.run_until_idle()
    assert workloads(cp) == []
    cp.create([wpc("urgent", 5000)])
    cp.mgr.run_until_idle()
    assert workloads(cp) == ["g"]
    assert priority(cp.store.get(WL, "team", "g")) == (5000, "WorkloadPriorityClass", "urgent")


def test_parents_made_before_their_class_get_their_workloads_when_it_comes() -> None:
    cp = plane("statefulset", LWS_FW)
    cp.create(
        [
            statefulset("db", 1, 1, labels={PRIO: "urgent"}),
            lws("srv", replicas=1, size=1, leader=False, labels={PRIO: "urgent"}),
        ]
    )
    cp.run(until=T0 + timedelta(minutes=1))
    assert workloads(cp) == []
    cp.create([wpc("urgent", 5000)])
    cp.run(until=T0 + timedelta(minutes=2))
    assert priority(owned_workload(cp, STS, "db"))[0] == 5000
    assert priority(cp.store.get(WL, "team", wl_name(cp, 0, "srv")))[0] == 5000
