"""The batch/v1 Job controller driven through the store, in virtual time."""

from __future__ import annotations

import re
from datetime import timedelta

from kuota.api.core import Pod
from kuota.cluster import PodRun
from kuota.cluster.controllers.jobutil import format_indexes, parse_indexes
from kuota.cluster.podutil import JOB, POD

from ..conftest import NS, T0, World, job_manifest, node_manifest

TRACKING = "batch.kubernetes.io/job-tracking"


def seconds(n: float) -> timedelta:
    return timedelta(seconds=n)


def test_parallelism_and_completions_finish_at_the_right_time(world: World) -> None:
    world.apply(node_manifest("n1", cpu="8"), job_manifest("j", parallelism=3, completions=6))
    world.run(until=seconds(30))
    job = world.job("j")
    assert (job.status.active, job.status.ready, job.status.succeeded) == (3, 3, 0)
    assert job.status.start_time == T0
    pods = world.pods_of("j")
    assert len(pods) == 3
    pod = pods[0]
    assert re.fullmatch(r"j-[bcdfghjklmnpqrstvwxz2456789]{5}", pod.metadata.name)
    assert pod.metadata.finalizers == [TRACKING]
    ref = pod.metadata.owner_references[0]
    assert (ref.kind, ref.name, ref.uid, ref.controller, ref.block_owner_deletion) == (
        "Job",
        "j",
        job.metadata.uid,
        True,
        True,
    )
    assert pod.metadata.labels == {
        "app": "j",
        "batch.kubernetes.io/controller-uid": job.metadata.uid,
        "batch.kubernetes.io/job-name": "j",
        "controller-uid": job.metadata.uid,
        "job-name": "j",
    }

    assert world.run() == "idle"
    assert world.elapsed == seconds(120)
    job = world.job("j")
    st = job.status
    assert (st.active, st.ready, st.succeeded, st.failed, st.terminating) == (0, 0, 6, 0, 0)
    assert st.completion_time == T0 + seconds(120)
    assert st.uncounted_terminated_pods == {}
    conds = world.job_conditions("j")
    assert list(conds) == ["SuccessCriteriaMet", "Complete"]
    for c in conds.values():
        assert (c.status, c.reason, c.message, c.last_transition_time) == (
            "True",
            "CompletionsReached",
            "Reached expected number of succeeded pods",
            T0 + seconds(120),
        )
    pods = world.pods_of("j")
    assert [p.status.phase for p in pods] == ["Succeeded"] * 6
    assert all(not p.metadata.finalizers for p in pods)


def test_pods_wait_for_capacity(world: World) -> None:
    world.apply(node_manifest("n1", cpu="2"), job_manifest("j", parallelism=3, completions=6))
    world.run()
    assert world.elapsed == seconds(180)  # two pods at a time: 60 s x 3 rounds
    assert world.job("j").status.succeeded == 6
    assert "Complete" in world.job_conditions("j")


def test_work_queue_job_is_done_when_one_pod_succeeded_and_none_runs(world: World) -> None:
    world.apply(node_manifest("n1", cpu="8"), job_manifest("j", parallelism=2))
    world.run()
    st = world.job("j").status
    assert (st.succeeded, st.active, st.completion_time) == (2, 0, T0 + seconds(60))
    assert "Complete" in world.job_conditions("j")


def test_backoff_limit_exhausted(world: World) -> None:
    world.apply(node_manifest("n1"), job_manifest("j", fail=True, backoff_limit=2))
    world.run()
    # Failures at 60 s, 130 s (after a 10 s backoff) and 210 s (after 20 s).
    starts = sorted(p.status.start_time - T0 for p in world.pods_of("j"))
    assert starts == [seconds(0), seconds(70), seconds(150)]
    assert world.elapsed == seconds(210)
    st = world.job("j").status
    assert (st.failed, st.succeeded, st.active, st.completion_time) == (3, 0, 0, None)
    conds = world.job_conditions("j")
    assert list(conds) == ["FailureTarget", "Failed"]
    for c in conds.values():
        assert (c.status, c.reason, c.message) == (
            "True",
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
        )


def test_failed_job_deletes_its_active_pods() -> None:
    def run(pod: Pod) -> PodRun:
        index = (pod.metadata.annotations or {}).get("batch.kubernetes.io/job-completion-index")
        return PodRun(seconds(10), fail=True) if index == "0" else PodRun(None)

    world = World(runs=run)
    world.apply(
        node_manifest("n1", cpu="8"),
        job_manifest("j", parallelism=2, completions=2, indexed=True, backoff_limit=0),
    )
    world.run()
    assert world.elapsed == seconds(10)
    pods = world.pods_of("j")
    # Index 1 was running: deleted (and counted as failed, as Kubernetes does).
    assert [p.metadata.labels["batch.kubernetes.io/job-completion-index"] for p in pods] == ["0"]
    st = world.job("j").status
    assert (st.failed, st.active, st.terminating) == (2, 0, 0)
    assert world.job_conditions("j")["Failed"].reason == "BackoffLimitExceeded"


def test_active_deadline_seconds(world: World) -> None:
    world.apply(
        node_manifest("n1", cpu="8"),
        job_manifest("j", parallelism=2, completions=4, duration=None, active_deadline=100),
    )
    world.run()
    assert world.elapsed == seconds(100)
    assert world.pods_of("j") == []
    conds = world.job_conditions("j")
    assert list(conds) == ["FailureTarget", "Failed"]
    assert (conds["Failed"].reason, conds["Failed"].message) == (
        "DeadlineExceeded",
        "Job was active longer than specified deadline",
    )
    assert world.job("j").status.failed == 2


def test_suspend_deletes_pods_and_resume_recreates_them(world: World) -> None:
    world.apply(node_manifest("n1", cpu="8"), job_manifest("j", parallelism=2, completions=4))
    world.run(until=seconds(30))
    assert len(world.pods_of("j")) == 2

    world.store.patch(JOB, NS, "j", {"spec": {"suspend": True}})
    world.advance(seconds(20))
    assert world.pods_of("j") == []
    st = world.job("j").status
    # Deleted to suspend: not failures; startTime kept (Kueue clears it itself).
    assert (st.active, st.failed, st.succeeded, st.start_time) == (0, 0, 0, T0)
    c = world.job_conditions("j")["Suspended"]
    assert (c.status, c.reason, c.message, c.last_transition_time) == (
        "True",
        "JobSuspended",
        "Job suspended",
        T0 + seconds(30),
    )

    world.store.patch(JOB, NS, "j", {"spec": {"suspend": False}})
    world.run()
    c = world.job_conditions("j")["Suspended"]
    assert (c.status, c.reason, c.message) == ("False", "JobResumed", "Job resumed")
    st = world.job("j").status
    assert st.start_time == T0 + seconds(50)  # a resume restarts the deadline clock
    assert (st.succeeded, st.completion_time) == (4, T0 + seconds(170))


def test_job_created_suspended_starts_on_resume(world: World) -> None:
    world.apply(node_manifest("n1"), job_manifest("j", suspend=True))
    world.run()
    st = world.job("j").status
    assert (st.start_time, st.active) == (None, 0)
    assert world.job_conditions("j")["Suspended"].status == "True"
    assert world.pods_of("j") == []
    world.advance(seconds(5))
    world.store.patch(JOB, NS, "j", {"spec": {"suspend": False}})
    world.run()
    st = world.job("j").status
    assert (st.start_time, st.succeeded) == (T0 + seconds(5), 1)


def test_indexed_job(world: World) -> None:
    world.apply(
        node_manifest("n1", cpu="8"),
        job_manifest("j", parallelism=2, completions=3, indexed=True),
    )
    world.run(until=seconds(1))
    pods = world.pods_of("j")
    assert [p.metadata.annotations["batch.kubernetes.io/job-completion-index"] for p in pods] == [
        "0",
        "1",
    ]
    first = next(p for p in pods if p.metadata.labels[_IX] == "0")
    assert re.fullmatch(r"j-0-[a-z0-9]{5}", first.metadata.name)
    assert first.spec.hostname == "j-0"
    assert first.spec.containers[0].env == [
        {
            "name": "JOB_COMPLETION_INDEX",
            "valueFrom": {
                "fieldRef": {
                    "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"
                }
            },
        }
    ]
    world.run()
    st = world.job("j").status
    assert (st.succeeded, st.completed_indexes, st.completion_time) == (3, "0-2", T0 + seconds(120))
    assert sorted(p.metadata.labels[_IX] for p in world.pods_of("j")) == ["0", "1", "2"]


_IX = "batch.kubernetes.io/job-completion-index"


def test_indexed_failure_is_replaced_with_the_same_index() -> None:
    first_of_index: dict[str, str] = {}

    def run(pod: Pod) -> PodRun:
        # Asked again at every wake-up: the answer must not change for a pod.
        ix = pod.metadata.labels[_IX]
        first = first_of_index.setdefault(ix, pod.metadata.name)
        if ix == "1" and first == pod.metadata.name:
            return PodRun(seconds(5), fail=True)
        return PodRun(seconds(60))

    world = World(runs=run)
    world.apply(
        node_manifest("n1", cpu="8"),
        job_manifest("j", parallelism=3, completions=3, indexed=True),
    )
    world.run()
    st = world.job("j").status
    assert (st.succeeded, st.failed, st.completed_indexes) == (3, 1, "0-2")
    indexes = sorted(p.metadata.labels[_IX] for p in world.pods_of("j"))
    assert indexes == ["0", "1", "1", "2"]
    assert world.elapsed == seconds(5 + 10 + 60)  # failure, backoff, rerun


def test_status_written_only_when_it_changes(world: World) -> None:
    world.apply(node_manifest("n1"), job_manifest("j", duration=None))
    world.run()
    rv = world.job("j").metadata.resource_version
    writes = world.store.resource_version
    world.mgr.enqueue("job-controller", f"{NS}/j")
    world.run()
    assert world.job("j").metadata.resource_version == rv
    assert world.store.resource_version == writes


def test_finished_jobs_are_left_alone(world: World) -> None:
    world.apply(node_manifest("n1"), job_manifest("j", duration="1s"))
    world.run()
    assert "Complete" in world.job_conditions("j")
    writes = world.store.resource_version
    world.store.patch(JOB, NS, "j", {"spec": {"parallelism": 5}})
    world.run()
    assert world.store.resource_version == writes + 1  # only the patch
    assert len(world.pods_of("j")) == 1


def test_deleting_a_job_releases_its_pods(world: World) -> None:
    world.apply(node_manifest("n1", cpu="8"), job_manifest("j", parallelism=2, duration=None))
    world.run()
    assert len(world.pods_of("j")) == 2
    world.store.delete(JOB, NS, "j")
    world.run()
    # The garbage collector marked them deleted; the tracking finalizer is released.
    assert world.store.list(POD).items == []


def test_index_intervals() -> None:
    assert format_indexes([0, 1, 2, 4, 6, 7, 9]) == "0-2,4,6,7,9"
    assert format_indexes([]) == ""
    assert parse_indexes("0-2,4,6,7,9", 7) == {0, 1, 2, 4, 6}
    assert parse_indexes("x,3-", 10) == set()


def test_pod_deleted_by_a_user_counts_as_failed_and_is_replaced(world: World) -> None:
    world.apply(node_manifest("n1"), job_manifest("j"))
    world.run(until=seconds(10))
    (pod,) = world.pods_of("j")
    world.store.delete(POD, NS, pod.metadata.name)
    world.run()
    assert not world.exists(POD, pod.metadata.name)  # counted, finalizer released
    (replacement,) = world.pods_of("j")
    assert replacement.status.start_time == T0 + seconds(20)  # after a 10 s backoff
    st = world.job("j").status
    assert (st.failed, st.succeeded, st.completion_time) == (1, 1, T0 + seconds(80))


def test_scaling_down_deletes_the_newest_pods_without_counting_them(world: World) -> None:
    world.apply(node_manifest("n1", cpu="8"), job_manifest("j", parallelism=3, duration=None))
    world.run(until=seconds(10))
    world.store.patch(JOB, NS, "j", {"spec": {"parallelism": 1}})
    world.run()
    assert len(world.pods_of("j")) == 1
    st = world.job("j").status
    assert (st.active, st.failed, st.ready) == (1, 0, 1)


def test_deadline_does_not_run_while_suspended(world: World) -> None:
    world.apply(node_manifest("n1"), job_manifest("j", duration="50s", active_deadline=100))
    world.run(until=seconds(30))
    world.store.patch(JOB, NS, "j", {"spec": {"suspend": True}})
    world.run(until=seconds(500))
    world.store.patch(JOB, NS, "j", {"spec": {"suspend": False}})
    world.run()
    st = world.job("j").status
    assert (st.start_time, st.succeeded, st.failed) == (T0 + seconds(500), 1, 0)
    assert "Failed" not in world.job_conditions("j")
