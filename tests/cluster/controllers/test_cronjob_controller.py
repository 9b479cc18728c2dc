"""CronJobs in virtual time: the schedule parser (robfig/cron's, as the
CronJob controller uses it), each concurrencyPolicy, startingDeadlineSeconds,
suspend, history limits, and the API server's refusal of a bad schedule."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kuota.api.core import CronJob, Job
from kuota.api.cron import CronError, parse_schedule
from kuota.api.decode import decode_object
from kuota.cluster.controllers.cronjob_controller import SCHEDULED_TIMESTAMP
from kuota.store import clone

from ..conftest import NS, T0, World, node_manifest

CRONJOB = ("batch", "CronJob")
JOB = ("batch", "Job")


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)


def cronjob(
    name: str,
    *,
    schedule: str = "*/5 * * * *",
    policy: str | None = None,
    duration: str = "7m",
    fail: bool = False,
    **spec: Any,
) -> dict[str, Any]:
    annotations = {"kuota.dev/duration": duration}
    if fail:
        annotations["kuota.dev/fail"] = "true"
    body: dict[str, Any] = {"schedule": schedule, **spec}
    if policy is not None:
        body["concurrencyPolicy"] = policy
    body["jobTemplate"] = {
        "metadata": {"labels": {"team": "a"}},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "metadata": {"annotations": annotations},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}
                    ],
                },
            },
        },
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": NS},
        "spec": body,
    }


def jobs(world: World) -> list[Job]:
    items: list[Job] = world.store.list(JOB, NS).items
    return sorted(items, key=lambda j: j.metadata.creation_timestamp or T0)


def created(world: World) -> list[str]:
    """Each Job's creation time, as minutes after T0."""
    return [f"{(j.metadata.creation_timestamp - T0) / minutes(1):g}" for j in jobs(world)]


def finished(job: Job) -> str | None:
    for c in (job.status.conditions if job.status else None) or ():
        if c.type in ("Complete", "Failed") and c.status == "True":
            return c.type
    return None


def cron_status(world: World, name: str = "c") -> Any:
    cj: CronJob = world.store.get(CRONJOB, NS, name)
    return cj.status


# --------------------------------------------------------------------- parser
@pytest.mark.parametrize(
    ("spec", "after", "expected"),
    [
        ("*/5 * * * *", "00:00:30", ["00:05", "00:10", "00:15"]),
        ("@hourly", "00:00:00", ["01:00", "02:00", "03:00"]),
        ("0 9 * * mon-fri", "2026-01-02T10:00", ["2026-01-05T09:00", "2026-01-06T09:00"]),
        ("30 6-16/4 * * *", "00:00", ["06:30", "10:30", "14:30", "2026-01-02T06:30"]),
        # Both day fields restricted: either matches (cron's OR); Jan 4 is a Sunday.
        ("0 0 1,15 * 0", "00:00:30", ["2026-01-04T00:00", "2026-01-11T00:00", "2026-01-15T00:00"]),
        ("@weekly", "00:00", ["2026-01-04T00:00"]),
        ("@monthly", "00:00", ["2026-02-01T00:00"]),
        ("@yearly", "00:00", ["2027-01-01T00:00"]),
        ("@every 90s", "00:00:30", ["00:02:00", "00:03:30"]),
    ],
)
def test_schedule_next(spec: str, after: str, expected: list[str]) -> None:
    def at(text: str) -> datetime:
        if "T" not in text:
            text = f"2026-01-01T{text}"
        return datetime.fromisoformat(text).replace(tzinfo=UTC)

    sched = parse_schedule(spec)
    t = at(after)
    got = []
    for want in expected:
        nxt = sched.next(t)
        assert nxt is not None
        got.append(nxt)
        t = nxt
        assert nxt == at(want), (spec, want, nxt)
    assert len(got) == len(expected)


def test_schedule_in_a_time_zone() -> None:
    from zoneinfo import ZoneInfo

    sched = parse_schedule("0 9 * * *")
    nxt = sched.next(datetime(2026, 7, 1, tzinfo=UTC), ZoneInfo("Europe/Paris"))
    assert nxt == datetime(2026, 7, 1, 7, tzinfo=UTC)  # 09:00 CEST


def test_impossible_date_never_fires() -> None:
    assert parse_schedule("0 0 31 2 *").next(datetime(2026, 1, 1, tzinfo=UTC)) is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "empty spec string"),
        ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
        ("60 * * * *", "end of range (60) above maximum (59): 60"),
        ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
        ("* * * * 7", "end of range (7) above maximum (6): 7"),
        ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
        ("*/0 * * * *", "step of range should be a positive number: */0"),
        ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
        ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
        ("@fortnightly", "unrecognized descriptor: @fortnightly"),
    ],
)
def test_bad_schedules_are_refused_with_robfigs_message(spec: str, message: str) -> None:
    with pytest.raises(CronError) as err:
        parse_schedule(spec)
    assert str(err.value) == message


def test_bad_cronjob_is_refused_naming_the_field() -> None:
    manifest = cronjob("c", schedule="61 * * * *", policy="Sometimes")
    manifest["spec"]["timeZone"] = "Local"
    manifest["spec"]["startingDeadlineSeconds"] = -1
    doc = decode_object(manifest, source="test", index=0)
    assert not doc.ok
    assert [str(e) for e in doc.errors] == [
        'spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61',
        'spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as '
        "defined in https://www.iana.org/time-zones",
        "spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0",
        'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: '
        '"Allow", "Forbid", "Replace"',
    ]
    long_name = cronjob("a" * 53)
    doc = decode_object(long_name, source="test", index=0)
    assert [str(e) for e in doc.errors] == [
        f'metadata.name: Invalid value: "{"a" * 53}": must be no more than 52 characters'
    ]


# ------------------------------------------------------------ concurrency policy
def test_allow_runs_jobs_side_by_side(world: World) -> None:
    world.apply(node_manifest("n1", cpu="8"), cronjob("c", policy="Allow"))
    world.run(until=minutes(21))
    assert created(world) == ["5", "10", "15", "20"]
    names = [j.metadata.name for j in jobs(world)]
    # <name>-<scheduled time in minutes since the epoch>
    assert names[0] == f"c-{int((T0 + minutes(5)).timestamp()) // 60}"
    assert [finished(j) for j in jobs(world)] == ["Complete", "Complete", None, None]
    st = cron_status(world)
    assert st.last_schedule_time == T0 + minutes(20)
    assert st.last_successful_time == T0 + minutes(17)
    assert [a.name for a in st.active] == names[2:]
    job = jobs(world)[0]
    assert job.metadata.labels == {"team": "a"}
    assert job.metadata.annotations[SCHEDULED_TIMESTAMP] == "2025-01-01T00:05:00Z"
    ref = job.metadata.owner_references[0]
    assert (ref.kind, ref.name, ref.controller) == ("CronJob", "c", True)


def test_forbid_skips_while_a_job_runs_and_starts_the_missed_one_when_it_ends(
    world: World,
) -> None:
    world.apply(node_manifest("n1", cpu="8"), cronjob("c", policy="Forbid"))
    world.run(until=minutes(21))
    # 00:05 runs until 00:12; the 00:10 run waits for it, then the 00:15 run
    # waits for that one (00:12 + 7 = 00:19); at 00:20 one is running again.
    assert created(world) == ["5", "12", "19"]
    assert [j.metadata.name for j in jobs(world)] == [
        f"c-{int((T0 + minutes(m)).timestamp()) // 60}" for m in (5, 10, 15)
    ]
    st = cron_status(world)
    assert st.last_schedule_time == T0 + minutes(15)
    assert len(st.active) == 1


def test_replace_deletes_the_running_job(world: World) -> None:
    world.apply(node_manifest("n1", cpu="8"), cronjob("c", policy="Replace"))
    world.run(until=minutes(9))
    (first,) = jobs(world)
    world.run(until=minutes(11))
    (second,) = jobs(world)
    assert second.metadata.name != first.metadata.name
    assert created(world) == ["10"]
    assert [a.name for a in cron_status(world).active] == [second.metadata.name]
    assert not world.store.list(
        ("", "Pod"), NS, label_selector=f"job-name={first.metadata.name}"
    ).items


def test_starting_deadline_skips_runs_missed_while_suspended(world: World) -> None:
    world.apply(
        node_manifest("n1", cpu="8"),
        cronjob("late", duration="1m", suspend=True, startingDeadlineSeconds=60),
        cronjob("any", duration="1m", suspend=True),
    )
    world.run(until=minutes(7))  # the 00:05 run is missed while suspended
    assert jobs(world) == []
    for name in ("late", "any"):
        cj = clone(world.store.get(CRONJOB, NS, name))
        cj.spec.suspend = False
        world.store.update(cj)
    world.run(until=minutes(8))
    # Without a deadline the missed 00:05 run starts at once (00:07); with a
    # 60 s deadline it is too late, and the next run is 00:10.
    assert [
        (j.metadata.name.rpartition("-")[0], t)
        for j, t in zip(jobs(world), created(world), strict=True)
    ] == [("any", "7")]
    world.run(until=minutes(11))
    assert sorted(
        (j.metadata.name.rpartition("-")[0], t)
        for j, t in zip(jobs(world), created(world), strict=True)
    ) == [
        ("any", "10"),
        ("any", "7"),
        ("late", "10"),
    ]


def test_starting_deadline_with_forbid_drops_a_run_blocked_too_long(world: World) -> None:
    world.apply(
        node_manifest("n1", cpu="8"),
        cronjob("c", policy="Forbid", duration="7m", startingDeadlineSeconds=60),
    )
    world.run(until=minutes(16))
    # The 00:10 run is blocked until 00:12, more than 60 s late: it never runs.
    assert created(world) == ["5", "15"]


def test_history_limits_keep_the_newest_finished_jobs(world: World) -> None:
    world.apply(
        node_manifest("n1", cpu="8"),
        cronjob("ok", schedule="* * * * *", duration="10s"),
        cronjob("bad", schedule="* * * * *", duration="10s", fail=True),
    )
    world.run(until=minutes(10) + timedelta(seconds=30))
    done = {"ok": [], "bad": []}  # type: dict[str, list[str]]
    for j in jobs(world):
        done[j.metadata.name.rpartition("-")[0]].append(finished(j) or "")
    assert done == {"ok": ["Complete"] * 3, "bad": ["Failed"]}  # the API defaults 3 and 1
    survivors = [j.metadata.name for j in jobs(world) if j.metadata.name.startswith("ok-")]
    assert survivors == [f"ok-{int((T0 + minutes(m)).timestamp()) // 60}" for m in (8, 9, 10)]


def test_suspended_cronjob_creates_nothing(world: World) -> None:
    world.apply(node_manifest("n1"), cronjob("c", suspend=True))
    world.run(until=minutes(30))
    assert jobs(world) == []
    assert cron_status(world) is None


def test_time_zone_moves_the_schedule(world: World) -> None:
    world.apply(
        node_manifest("n1"),
        cronjob("paris", schedule="0 9 * * *", duration="1m", timeZone="Europe/Paris"),
    )
    world.run(until=timedelta(hours=9))
    (job,) = jobs(world)
    assert job.metadata.creation_timestamp == T0 + timedelta(hours=8)  # 09:00 CET
    assert job.metadata.annotations[SCHEDULED_TIMESTAMP] == "2025-01-01T09:00:00+01:00"
