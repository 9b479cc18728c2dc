"""maximumExecutionTimeSeconds through the control plane: the Job's
max-exec-time label becomes the Workload's limit, admitted time accumulates
across evictions, and the workload is deactivated (its Job stopped) when the
limit is used up, at the virtual instant Kueue would."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from kuota.store import Invalid, clone
from kuota.store.resources import JOB
from kuota.store.resources import WORKLOAD as WL

from .world import T0, cluster_queue, control_plane, flavor, job, local_queue, namespace, node

LABEL = "kueue.x-k8s.io/max-exec-time-seconds"


def _world() -> list[Any]:
    return [
        namespace("team"),
        flavor("a100", {"gpu": "a100"}),
        cluster_queue("cq", {"a100": 4}),
        local_queue("team", "main", "cq"),
        node("n1", 4, {"gpu": "a100"}),
    ]


def _cond(obj: Any, ctype: str) -> Any:
    return next((c for c in (obj.status.conditions or ()) if c.type == ctype), None)


def _workload(cp: Any, job_name: str) -> Any:
    return next(
        w
        for w in cp.store.list(WL, "team").items
        if w.metadata.owner_references[0].name == job_name
    )


def test_a_job_over_its_limit_is_deactivated_exactly_at_the_limit() -> None:
    cp = control_plane(cluster=True)
    cp.create(_world())
    cp.create([job("team", "long", 4, duration="1h", labels={LABEL: "600"})])
    cp.run(until=T0 + timedelta(minutes=9))
    wl = _workload(cp, "long")
    assert wl.spec.maximum_execution_time_seconds == 600
    assert _cond(wl, "Admitted").status == "True"
    assert cp.store.get(JOB, "team", "long").spec.suspend is False
    cp.run(until=T0 + timedelta(minutes=30))
    wl = _workload(cp, "long")
    assert wl.spec.active is False
    ev = _cond(wl, "Evicted")
    assert ev.status == "True"
    assert ev.reason == "DeactivatedDueToMaximumExecutionTimeExceeded"
    assert ev.message == "The workload is deactivated due to exceeding the maximum execution time"
    assert ev.last_transition_time == T0 + timedelta(seconds=600)
    assert _cond(wl, "QuotaReserved").status == "False"
    # Kueue clears the accumulated time when it deactivates, then adds the
    # last admission's 600 s when Admitted turns False on the eviction.
    assert wl.status.accumulated_past_execution_time_seconds == 600
    # The Job is stopped and never completes; the quota is free again.
    j = cp.store.get(JOB, "team", "long")
    assert j.spec.suspend is True
    assert not any(c.type == "Complete" and c.status == "True" for c in j.status.conditions or ())


def test_a_job_within_its_limit_completes() -> None:
    cp = control_plane(cluster=True)
    cp.create(_world())
    cp.create([job("team", "short", 4, duration="5m", labels={LABEL: "600"})])
    cp.run()
    wl = _workload(cp, "short")
    assert wl.spec.active is True
    assert _cond(wl, "Finished").status == "True"
    assert _cond(wl, "Evicted") is None


def test_admitted_time_accumulates_across_an_eviction() -> None:
    """Admitted 200 s, evicted (deactivated by hand, then reactivated), the
    remaining 400 s run out 400 s after the second admission."""
    cp = control_plane(cluster=True)
    cp.create(_world())
    cp.create([job("team", "j", 4, duration="2h", labels={LABEL: "600"})])
    cp.run(until=T0 + timedelta(seconds=200))
    wl = _workload(cp, "j")
    cp.store.update(_with_active(wl, False))
    cp.run(until=T0 + timedelta(seconds=300))
    wl = _workload(cp, "j")
    assert wl.status.accumulated_past_execution_time_seconds == 200
    assert _cond(wl, "Evicted").reason == "Deactivated"
    cp.store.update(_with_active(wl, True))
    cp.run(until=T0 + timedelta(hours=1))
    wl = _workload(cp, "j")
    ev = _cond(wl, "Evicted")
    assert ev.reason == "DeactivatedDueToMaximumExecutionTimeExceeded"
    assert ev.last_transition_time == T0 + timedelta(seconds=300 + 400)


def _with_active(wl: Any, active: bool) -> Any:
    import msgspec

    return msgspec.structs.replace(wl, spec=msgspec.structs.replace(wl.spec, active=active))


@pytest.mark.parametrize(
    ("value", "detail"),
    [
        ("0", "should be greater than 0"),
        ("00", "should be greater than 0"),
        ("ten", "invalid syntax"),
    ],
)
def test_a_bad_label_is_refused_with_the_field_path(value: str, detail: str) -> None:
    cp = control_plane(cluster=True)
    cp.create(_world())
    with pytest.raises(Invalid) as err:
        cp.store.create(job("team", "bad", 1, labels={LABEL: value}))
    msg = str(err.value)
    assert f"metadata.labels[{LABEL}]" in msg and detail in msg, msg
    assert 'Job.batch "bad"' in msg


def test_the_label_is_immutable_while_the_job_runs() -> None:
    cp = control_plane(cluster=True)
    cp.create(_world())
    cp.create([job("team", "j", 4, duration="1h", labels={LABEL: "600"})])
    cp.mgr.run_until_idle()
    running = clone(cp.store.get(JOB, "team", "j"))  # stored objects are shared
    assert running.spec.suspend is False
    running.metadata.labels[LABEL] = "60"
    with pytest.raises(Invalid, match="field is immutable"):
        cp.store.update(running)


def test_a_deactivation_never_writes_to_a_stored_workload_in_place() -> None:
    """The core shares the stored spec object and replaces it when it
    deactivates a workload: a version the store already returned (and
    watchers saw) keeps spec.active, only the write makes it False."""
    cp = control_plane(cluster=True)
    cp.create(_world())
    cp.create([job("team", "long", 4, duration="1h", labels={LABEL: "600"})])
    cp.run(until=T0 + timedelta(minutes=9))
    before = _workload(cp, "long")
    assert before.spec.active is True
    cp.run(until=T0 + timedelta(minutes=30))
    after = _workload(cp, "long")
    assert after.spec.active is False
    assert after.metadata.resource_version != before.metadata.resource_version
    assert before.spec.active is True  # the returned version is as it was
