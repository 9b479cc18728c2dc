"""The MultiKueue workload reconciler against workers stood in by memory
stores, translated from Kueue's ``pkg/controller/admissionchecks/multikueue/
workload_test.go`` (TestWlReconcile; each test names its case). The manager
side runs over the store protocol; a worker is a store the reconciler writes
to through the same calls it makes to a real worker's API server."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from kuota.api.decode import decode_object
from kuota.api.meta import Condition
from kuota.controllers.multikueue import ClusterController, MultiKueueSettings, MultiKueueWorkloads
from kuota.runtime.clock import VirtualClock
from kuota.runtime.manager import Manager
from kuota.store import NotFound
from kuota.store.memory import MemoryStore
from kuota.store.resources import JOB, WORKLOAD

T0 = datetime(2026, 1, 1, tzinfo=UTC)
G = "kueue.x-k8s.io/v1beta2"
ORIGIN = "origin1"
LOST_TIMEOUT = timedelta(minutes=5)


class Worker:
    """What the reconciler reads and writes of a worker (remote_cluster.RemoteCluster)."""

    def __init__(self, name: str, connected: bool = True) -> None:
        self.name, self.origin, self.connected = name, ORIGIN, connected
        self.lost_since: datetime | None = None
        self.store = MemoryStore(lambda: T0)
        self.caches: dict[Any, dict[str, Any]] = defaultdict(dict)

    def get(self, rt: Any, key: str) -> Any | None:
        ns, name = key.split("/", 1)
        try:
            return self.store.get(rt, ns, name)
        except NotFound:
            return None

    def owned(self, rt: Any) -> list[Any]:
        return [
            o
            for o in self.store.list(rt).items
            if (o.metadata.labels or {}).get("kueue.x-k8s.io/multikueue-origin") == ORIGIN
        ]

    def names(self, rt: Any) -> list[str]:
        return [o.metadata.name for o in self.store.list(rt).items]


def obj(raw: dict[str, Any]) -> Any:
    doc = decode_object(raw)
    assert not doc.errors, doc.errors
    return doc.obj


def job(managed: bool = True) -> Any:
    spec: dict[str, Any] = {
        "suspend": True,
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}
                ],
            }
        },
    }
    if managed:
        spec["managedBy"] = "kueue.x-k8s.io/multikueue"
    return obj(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "job1", "namespace": "ns", "uid": "uid1"},
            "spec": spec,
        }
    )


def workload(*conds: tuple[str, str], check: str = "Pending", reserved: bool = True) -> Any:
    wl = obj(
        {
            "apiVersion": G,
            "kind": "Workload",
            "metadata": {
                "name": "wl1",
                "namespace": "ns",
                "ownerReferences": [
                    {
                        "apiVersion": "batch/v1",
                        "kind": "Job",
                        "name": "job1",
                        "uid": "uid1",
                        "controller": True,
                    }
                ],
            },
            "spec": {
                "queueName": "lq",
                "podSets": [
                    {
                        "name": "main",
                        "count": 1,
                        "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}},
                    }
                ],
            },
        }
    )
    from kuota.api.kueue import types as kt

    st = kt.WorkloadStatus(
        admission_checks=[kt.AdmissionCheckState(name="ac1", state=check, last_transition_time=T0)],  # type: ignore[arg-type]
        conditions=[
            Condition(type=t, status="True", reason=r, message="", last_transition_time=T0)
            for t, r in conds
        ],
    )
    if reserved:
        st.admission = kt.Admission(
            cluster_queue="q1", pod_set_assignments=[kt.PodSetAssignment(name="main", count=1)]
        )
        st.conditions = [
            *(st.conditions or ()),
            Condition(
                type="QuotaReserved",
                status="True",
                reason="QuotaReserved",
                message="",
                last_transition_time=T0,
            ),
        ]
    wl.status = st
    return wl


def remote_copy(*conds: tuple[str, str]) -> Any:
    wl = workload(*conds, reserved=bool(conds))
    wl.metadata.owner_references = None
    wl.metadata.labels = {"kueue.x-k8s.io/multikueue-origin": ORIGIN}
    wl.status.admission_checks = None
    return wl


class Setup:
    def __init__(self, *workers: Worker, now: datetime = T0) -> None:
        self.store = MemoryStore(lambda: now)
        self.clock = VirtualClock(now)
        self.workers = {w.name: w for w in workers}
        self.adapters: Any = None  # the adapters dispatched with (those of every kind)
        for raw in (
            {
                "apiVersion": G,
                "kind": "AdmissionCheck",
                "metadata": {"name": "ac1"},
                "spec": {
                    "controllerName": "kueue.x-k8s.io/multikueue",
                    "parameters": {
                        "apiGroup": "kueue.x-k8s.io",
                        "kind": "MultiKueueConfig",
                        "name": "config1",
                    },
                },
            },
            {
                "apiVersion": G,
                "kind": "MultiKueueConfig",
                "metadata": {"name": "config1"},
                "spec": {"clusters": ["worker1", "worker2"]},
            },
        ):
            self.store.create(obj(raw))

    def add(self, *objs: Any) -> None:
        for o in objs:
            status = getattr(o, "status", None)
            made = self.store.create(o)
            if status is not None and o.kind == "Workload":
                made.status = status
                self.store.update_status(made)

    def run(self, gc: timedelta = timedelta(0)) -> Any:
        settings = MultiKueueSettings(
            gc_interval=gc,
            origin=ORIGIN,
            worker_lost_timeout=LOST_TIMEOUT,
            dispatcher="kueue.x-k8s.io/multikueue-dispatcher-all-at-once",
            namespace="kueue-system",
        )
        if self.adapters is not None:
            settings = replace(settings, adapters=self.adapters)
        clusters = ClusterController(settings)
        clusters.remotes = self.workers  # type: ignore[assignment]
        mgr = Manager(self.store, self.clock, raise_errors=True)
        mgr.add(MultiKueueWorkloads(settings, clusters))  # type: ignore[arg-type]
        mgr.start()
        if gc:
            for news in clusters.on_news:  # a worker's watch had news: GC armed
                news(set(), None)
            mgr.run(until=T0 + gc * 1.5)
        mgr.run_until_idle()
        try:
            return self.store.get(WORKLOAD, "ns", "wl1")
        except NotFound:
            return None


def state(wl: Any) -> tuple[str, str]:
    [s] = wl.status.admission_checks
    return s.state, s.message


def test_unmanaged_wl_job_not_managed_by_multikueue_is_rejected() -> None:
    s = Setup(Worker("worker1"))
    s.add(job(managed=False), workload())
    assert state(s.run()) == (
        "Rejected",
        "The owner is not managed by Kueue: Expecting spec.managedBy to be "
        '"kueue.x-k8s.io/multikueue" not "", Previously: "Pending"',
    )


def test_wl_with_reservation_creates_missing_workloads() -> None:
    w1, w2 = Worker("worker1"), Worker("worker2")
    s = Setup(w1, w2)
    s.add(job(), workload())
    wl = s.run()
    assert wl.status.nominated_cluster_names == ["worker1", "worker2"]
    for w in (w1, w2):
        [remote] = w.owned(WORKLOAD)
        assert remote.metadata.name == "wl1" and remote.spec == wl.spec
        assert remote.metadata.labels == {"kueue.x-k8s.io/multikueue-origin": ORIGIN}
    assert state(wl)[0] == "Pending"


def test_reconnecting_clients_are_skipped() -> None:
    w1, w2 = Worker("worker1"), Worker("worker2", connected=False)
    s = Setup(w1, w2)
    s.add(job(), workload())
    assert s.run().status.nominated_cluster_names == ["worker1"]
    assert w2.names(WORKLOAD) == []


def test_wl_without_reservation_clears_the_workload_objects() -> None:
    w1 = Worker("worker1")
    w1.store.create(remote_copy())
    s = Setup(w1)
    s.add(job(), workload(reserved=False))
    s.run()
    assert w1.names(WORKLOAD) == []


def test_remote_wl_with_reservation_but_not_admitted_other_workers_not_deleted() -> None:
    w1, w2 = Worker("worker1"), Worker("worker2")
    for w, c in ((w1, (("QuotaReserved", "QuotaReserved"),)), (w2, ())):
        made = w.store.create(remote_copy())
        made.status = remote_copy(*c).status
        w.store.update_status(made)
    s = Setup(w1, w2)
    s.add(job(), workload())
    wl = s.run()
    assert state(wl)[0] == "Pending"
    assert w1.names(WORKLOAD) == ["wl1"] and w2.names(WORKLOAD) == ["wl1"]
    assert w1.names(JOB) == []


def test_remote_wl_admitted_other_workers_deleted() -> None:
    w1, w2 = Worker("worker1"), Worker("worker2")
    made = w1.store.create(remote_copy())
    made.status = remote_copy(("QuotaReserved", "QuotaReserved"), ("Admitted", "Admitted")).status
    w1.store.update_status(made)
    w2.store.create(remote_copy())
    s = Setup(w1, w2)
    s.add(job(), workload())
    wl = s.run()
    assert state(wl) == ("Ready", 'The workload was admitted on "worker1"')
    assert wl.status.cluster_name == "worker1"
    assert w2.names(WORKLOAD) == []
    [remote_job] = w1.store.list(JOB).items
    labels = remote_job.metadata.labels
    # (WorkloadIdentifierAnnotations, on by default: the prebuilt name an annotation)
    assert remote_job.metadata.annotations["kueue.x-k8s.io/prebuilt-workload-name"] == "wl1"
    assert "kueue.x-k8s.io/prebuilt-workload-name" not in labels
    assert labels["kueue.x-k8s.io/multikueue-origin"] == ORIGIN
    assert remote_job.spec.managed_by is None
    events = [e for e in s.store.list(("", "v1", "events")).items if e.reason == "MultiKueue"]
    assert [e.message for e in events] == ['The workload was admitted on "worker1"']


def test_remote_wl_is_finished_the_local_workload_and_job_are_marked_completed() -> None:
    w1 = Worker("worker1")
    made = w1.store.create(remote_copy())
    made.status = remote_copy(
        ("QuotaReserved", "QuotaReserved"), ("Admitted", "Admitted"), ("Finished", "ByTest")
    ).status
    w1.store.update_status(made)
    rj = job()
    rj.spec.managed_by = None
    rj.metadata.labels = {
        "kueue.x-k8s.io/prebuilt-workload-name": "wl1",
        "kueue.x-k8s.io/multikueue-origin": ORIGIN,
    }
    from kuota.api.k8s.batch import JobCondition, JobStatus

    made_job = w1.store.create(rj)
    made_job.status = JobStatus(
        conditions=[JobCondition(type="Complete", status="True")], succeeded=1
    )
    w1.store.update_status(made_job)
    s = Setup(w1)
    s.add(job(), workload(("Admitted", "Admitted"), check="Ready"))
    wl = s.run()
    fin = next(c for c in wl.status.conditions if c.type == "Finished")
    assert (fin.status, fin.reason) == ("True", "ByTest")
    local = s.store.get(JOB, "ns", "job1")
    assert local.status.succeeded == 1


def test_check_stays_ready_if_the_reservation_was_lost_less_than_worker_lost_timeout_ago() -> None:
    w1 = Worker("worker1", connected=False)
    w1.lost_since = T0 - LOST_TIMEOUT / 2
    s = Setup(w1)
    wl = workload(("Admitted", "Admitted"), check="Ready")
    wl.status.cluster_name = "worker1"
    s.add(job(), wl)
    assert state(s.run())[0] == "Ready"


def test_check_is_set_to_retry_if_the_reservation_was_lost_more_than_worker_lost_timeout_ago() -> (
    None
):
    w1 = Worker("worker1", connected=False)
    w1.lost_since = T0 - LOST_TIMEOUT - timedelta(seconds=1)
    s = Setup(w1)
    wl = workload(("Admitted", "Admitted"), check="Ready")
    wl.status.cluster_name = "worker1"
    s.add(job(), wl)
    assert state(s.run()) == ("Retry", 'Admitting remote lost, Previously: "Ready"')


def test_retried_immediately_when_the_admitting_cluster_is_reachable_but_its_remote_is_gone() -> (
    None
):
    s = Setup(Worker("worker1"))
    wl = workload(("Admitted", "Admitted"), check="Ready")
    wl.status.cluster_name = "worker1"
    s.add(job(), wl)
    assert state(s.run()) == ("Retry", 'Admitting remote no longer exists, Previously: "Ready"')


def test_retried_when_the_check_is_ready_but_no_admitting_cluster_is_recorded() -> None:
    s = Setup(Worker("worker1"))
    s.add(job(), workload(("Admitted", "Admitted"), check="Ready"))
    assert state(s.run()) == (
        "Retry",
        "Admission check is Ready but no admitting cluster is recorded; this is unexpected, "
        'please report it, Previously: "Ready"',
    )


def test_handle_workload_evicted_on_worker_cluster() -> None:
    w1 = Worker("worker1")
    made = w1.store.create(remote_copy())
    made.status = remote_copy(("QuotaReserved", "QuotaReserved"), ("Evicted", "Preempted")).status
    w1.store.update_status(made)
    s = Setup(w1)
    wl = workload(("Admitted", "Admitted"), check="Ready")
    wl.status.cluster_name = "worker1"
    s.add(job(), wl)
    assert state(s.run()) == (
        "Retry",
        'Workload evicted on worker cluster: "worker1", resetting for re-admission. '
        'Previously: "Ready"',
    )


def test_gc_deletes_the_remote_objects_whose_manager_workload_is_gone() -> None:
    """Kueue's TestGC (multikueuecluster_test.go): a remote Workload of this
    origin without its manager Workload, and its job, go; another origin's
    and a live workload's copies stay."""
    w1 = Worker("worker1")
    orphan = remote_copy()
    orphan.metadata.name = "wl-orphan"
    w1.store.create(orphan)
    other = remote_copy()
    other.metadata.name = "wl-other-origin"
    other.metadata.labels = {"kueue.x-k8s.io/multikueue-origin": "someone-else"}
    w1.store.create(other)
    w1.store.create(remote_copy())  # wl1's copy: its manager Workload lives
    rj = job()
    rj.metadata.name = "job-orphan"
    rj.spec.managed_by = None
    rj.metadata.labels = {
        "kueue.x-k8s.io/prebuilt-workload-name": "wl-orphan",
        "kueue.x-k8s.io/multikueue-origin": ORIGIN,
    }
    w1.store.create(rj)
    s = Setup(w1)
    s.add(job(), workload())
    s.run(gc=timedelta(minutes=1))
    assert sorted(w1.names(WORKLOAD)) == ["wl-other-origin", "wl1"]
    assert w1.names(JOB) == []  # the orphan's job went with it
