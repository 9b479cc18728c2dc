"""Jobs as Kubernetes and OpenShift document them, asserted in virtual time:
the failed-pod re-creation delay (10 s, 20 s, 40 s … capped at 6 minutes),
activeDeadlineSeconds, ttlSecondsAfterFinished and Indexed completion."""

from __future__ import annotations

from datetime import timedelta

from kuota.cluster.controllers.jobutil import COMPLETION_INDEX
from kuota.cluster.podutil import JOB, POD

from ..conftest import NS, T0, World, job_manifest, node_manifest


def seconds(n: float) -> timedelta:
    return timedelta(seconds=n)


def starts(world: World, job: str) -> list[float]:
    """When each of the Job's pods started, in seconds after T0."""
    pods = world.pods_of(job)
    return sorted((p.status.start_time - T0).total_seconds() for p in pods)


def test_failed_pods_are_recreated_after_10_20_40_seconds_and_so_on_capped_at_6_minutes(
    world: World,
) -> None:
    world.apply(node_manifest("n1"), job_manifest("j", duration="1s", fail=True, backoff_limit=8))
    assert world.run() == "idle"
    # Each pod fails 1 s after it starts; the next one waits 10 s, 20 s, 40 s,
    # 80 s, 160 s, 320 s, then 6 min (640 s would exceed the cap) twice.
    delays = [10, 20, 40, 80, 160, 320, 360, 360]
    expected = [0.0]
    for d in delays:
        expected.append(expected[-1] + 1 + d)
    assert starts(world, "j") == expected
    st = world.job("j").status
    assert (st.failed, st.succeeded, st.active) == (9, 0, 0)
    failed = world.job_conditions("j")["Failed"]
    assert (failed.reason, failed.last_transition_time) == (
        "BackoffLimitExceeded",
        T0 + seconds(expected[-1] + 1),
    )


def test_backoff_limit_default_is_six(world: World) -> None:
    world.apply(node_manifest("n1"), job_manifest("j", duration="1s", fail=True))
    world.run()
    assert len(starts(world, "j")) == 7  # the first try and six retries
    assert world.job_conditions("j")["Failed"].reason == "BackoffLimitExceeded"


def test_active_deadline_fails_the_job_and_stops_its_pods(world: World) -> None:
    world.apply(
        node_manifest("n1"),
        job_manifest("j", parallelism=2, completions=4, duration="10m", active_deadline=90),
    )
    world.run()
    failed = world.job_conditions("j")["Failed"]
    assert (failed.reason, failed.message, failed.last_transition_time) == (
        "DeadlineExceeded",
        "Job was active longer than specified deadline",
        T0 + seconds(90),
    )
    st = world.job("j").status
    assert (st.active, st.failed, st.succeeded) == (0, 2, 0)
    assert all(p.status.phase == "Failed" for p in world.pods_of("j"))


def test_ttl_after_finished_deletes_the_job_and_its_pods(world: World) -> None:
    manifest = job_manifest("j", duration="60s")
    manifest["spec"]["ttlSecondsAfterFinished"] = 100
    world.apply(node_manifest("n1"), manifest)
    world.run(until=seconds(159))
    assert world.exists(JOB, "j")
    assert world.job_conditions("j")["Complete"].last_transition_time == T0 + seconds(60)
    world.run(until=seconds(160))
    assert not world.exists(JOB, "j")
    assert world.store.list(POD, NS).items == []


def test_ttl_zero_deletes_at_once_and_failed_jobs_too(world: World) -> None:
    manifest = job_manifest("j", duration="5s", fail=True, backoff_limit=0)
    manifest["spec"]["ttlSecondsAfterFinished"] = 0
    world.apply(node_manifest("n1"), manifest)
    world.run(until=seconds(5))
    assert not world.exists(JOB, "j")


def test_indexed_job_gives_each_pod_its_index_and_hostname(world: World) -> None:
    world.apply(
        node_manifest("n1", cpu="8"),
        job_manifest("train", parallelism=2, completions=5, indexed=True, duration="60s"),
    )
    world.run(until=seconds(1))
    pods = sorted(world.pods_of("train"), key=lambda p: p.metadata.name)
    seen = []
    for p in pods:
        ix = p.metadata.annotations[COMPLETION_INDEX]
        assert p.metadata.labels[COMPLETION_INDEX] == ix
        assert p.spec.hostname == f"train-{ix}"
        assert p.metadata.name.startswith(f"train-{ix}-")
        env = p.spec.containers[0].env
        assert env[-1]["name"] == "JOB_COMPLETION_INDEX"
        seen.append(int(ix))
    assert sorted(seen) == [0, 1]  # the lowest pending indexes first
    world.run()
    st = world.job("train").status
    assert (st.succeeded, st.completed_indexes) == (5, "0-4")
    assert st.completion_time == T0 + seconds(180)  # 2 + 2 + 1 pods of 60 s
