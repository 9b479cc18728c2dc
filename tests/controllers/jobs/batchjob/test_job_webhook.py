"""Kueue's batch/v1 Job webhook through the control plane (job_webhook.go and
jobframework's defaults.go and validation.go; integrations.md §0 "Webhook
defaulting" and §1): the default WorkloadPriorityClass, jobframework's create
and update rules for every Job (managed or not), the Job's partial-admission
rules, and the owner-chain walk that leaves a managed Job's descendants to it."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from embedded.world import (
    cluster_queue,
    config,
    control_plane,
    flavor,
    job,
    local_queue,
    namespace,
    node,
    obj,
)
from kuota.api.meta import OwnerReference
from kuota.store import Invalid, clone
from kuota.store.resources import EVENT, JOB, WORKLOAD

WL = WORKLOAD
QUEUE = "kueue.x-k8s.io/queue-name"
WPC_LABEL = "kueue.x-k8s.io/priority-class"
GATED_BY = "kueue.x-k8s.io/admission-gated-by"
MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"
MAX_EXEC = "kueue.x-k8s.io/max-exec-time-seconds"
PREBUILT = "kueue.x-k8s.io/prebuilt-workload-name"
ELASTIC = "kueue.x-k8s.io/elastic-job"
EQUAL = "kueue.x-k8s.io/job-completions-equal-parallelism"


def _wpc(name: str, value: int) -> Any:
    return obj(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": name},
            "value": value,
        }
    )


def _world(gpus: int = 4) -> list[Any]:
    return [
        namespace("team"),
        flavor("a100", {"gpu": "a100"}),
        cluster_queue("cq", {"a100": gpus}),
        local_queue("team", "main", "cq"),
        local_queue("team", "other", "cq"),
        node("n1", 8, {"gpu": "a100"}),
    ]


def _plane(gpus: int = 4, **cfg: Any) -> Any:
    cp = control_plane(config(**cfg) if cfg else None, cluster=False)
    cp.create(_world(gpus))
    return cp


def _get(cp: Any, name: str) -> Any:
    return clone(cp.store.get(JOB, "team", name))  # stored objects are shared


def _workloads_of(cp: Any, name: str) -> list[Any]:
    return [
        w
        for w in cp.store.list(WL, "team").items
        if any(r.name == name and r.kind == "Job" for r in w.metadata.owner_references)
    ]


def _running(cp: Any, name: str, gpus: int = 4, **kw: Any) -> Any:
    cp.create([job("team", name, gpus, **kw)])
    cp.mgr.run_until_idle()
    j = _get(cp, name)
    assert j.spec.suspend is False, "admitted and started"
    return j


def _waiting(cp: Any, name: str, **kw: Any) -> Any:
    """A Job that cannot fit (more GPUs than the ClusterQueue has): suspended."""
    cp.create([job("team", name, 64, **kw)])
    cp.mgr.run_until_idle()
    j = _get(cp, name)
    assert j.spec.suspend is True
    return j


def _refused(cp: Any, change: Any) -> str:
    with pytest.raises(Invalid) as err:
        cp.store.update(change)
    return str(err.value)


# ------------------------------------------------------------------ defaulting
def test_the_default_priority_class_is_set_and_gives_the_workload_its_priority() -> None:
    cp = _plane()
    cp.create([_wpc("default", 700)])
    (j,) = cp.create([job("team", "a", 1)])
    assert j.metadata.labels[WPC_LABEL] == "default"
    cp.mgr.run_until_idle()
    (wl,) = _workloads_of(cp, "a")
    assert wl.spec.priority == 700
    assert wl.spec.priority_class_ref.kind == "WorkloadPriorityClass"
    assert wl.spec.priority_class_ref.name == "default"


def test_no_default_priority_class_without_the_class_over_a_label_or_with_the_gate_off() -> None:
    cp = _plane()
    (j,) = cp.create([job("team", "none", 1)])  # no WorkloadPriorityClass "default"
    assert WPC_LABEL not in j.metadata.labels
    cp.create([_wpc("default", 700), _wpc("high", 900)])
    (j,) = cp.create([job("team", "own", 1, labels={WPC_LABEL: "high"})])
    assert j.metadata.labels[WPC_LABEL] == "high"
    off = _plane(featureGates={"WorkloadPriorityClassDefaulting": False})
    off.create([_wpc("default", 700)])
    (j,) = off.create([job("team", "off", 1)])
    assert WPC_LABEL not in j.metadata.labels


def test_a_job_whose_controller_is_a_job_gets_no_defaults() -> None:
    """IsOwnerManagedByKueueForObject: a controller of an integrated kind,
    managed or not, keeps the queue and priority-class defaults off."""
    cp = _plane()
    (parent,) = cp.create([job("team", "parent", 1, queue=None)])  # not Kueue's
    cp.create([local_queue("team", "default", "cq"), _wpc("default", 700)])
    (child,) = cp.create([_child("child", parent, queue=None)])
    assert QUEUE not in (child.metadata.labels or {})
    assert WPC_LABEL not in (child.metadata.labels or {})
    (lone,) = cp.create([job("team", "lone", 1, queue=None)])
    assert (lone.metadata.labels[QUEUE], lone.metadata.labels[WPC_LABEL]) == ("default", "default")


# ------------------------------------------------------------------ create rules
def test_a_bad_queue_name_is_refused_naming_the_field() -> None:
    cp = _plane()
    with pytest.raises(Invalid) as err:
        cp.store.create(job("team", "bad", 1, queue="Bad_Name"))
    assert str(err.value).startswith(
        f'Job.batch "bad" is invalid: metadata.labels[{QUEUE}]: Invalid value: "Bad_Name": '
        "a lowercase RFC 1123 subdomain must consist of"
    )


def test_jobs_kueue_does_not_manage_are_validated_too() -> None:
    cp = _plane()
    with pytest.raises(Invalid, match=rf"metadata.labels\[{MAX_EXEC}\]: Invalid value: 0"):
        cp.store.create(job("team", "x", 1, queue=None, labels={MAX_EXEC: "0"}))
    with pytest.raises(Invalid) as err:
        cp.store.create(job("team", "y", 1, queue=None, labels={PREBUILT: "Not_A_Name"}))
    assert f'metadata.labels[{PREBUILT}]: Invalid value: "Not_A_Name"' in str(err.value)


def test_admission_gated_by_is_checked_on_create_and_only_loses_gates_after() -> None:
    cp = _plane()
    bad = job("team", "bad", 1)
    bad.metadata.annotations = {GATED_BY: "example.com/a,,example.com/b"}
    with pytest.raises(Invalid) as err:
        cp.store.create(bad)
    assert f"metadata.annotations[{GATED_BY}]: Invalid value" in str(err.value)
    assert "cannot contain empty gate names" in str(err.value)
    gated = job("team", "gated", 1)
    gated.metadata.annotations = {GATED_BY: "example.com/a,example.com/b"}
    cp.store.create(gated)
    j = _get(cp, "gated")
    j.metadata.annotations[GATED_BY] = "example.com/a,example.com/c"
    assert (
        f"metadata.annotations[{GATED_BY}]: Forbidden: can only remove gates, not add new ones"
        in _refused(cp, j)
    )
    j.metadata.annotations[GATED_BY] = "example.com/b"
    cp.store.update(j)  # a gate removed
    cp.store.create(job("team", "plain", 1))
    j = _get(cp, "plain")
    j.metadata.annotations = {GATED_BY: "example.com/a"}
    assert "cannot add admission gate after creation" in _refused(cp, j)
    # Without the gate the annotation is no webhook's business.
    off = _plane(featureGates={"AdmissionGatedBy": False})
    off.store.create(bad)


# ------------------------------------------------------------------ update rules
def test_the_queue_name_changes_while_the_job_is_suspended_only() -> None:
    cp = _plane()
    running = _running(cp, "run")
    running.metadata.labels[QUEUE] = "other"
    assert _refused(cp, running) == (
        f'Job.batch "run" is invalid: metadata.labels[{QUEUE}]: '
        'Invalid value: "other": field is immutable'
    )
    waiting = _waiting(cp, "wait")
    waiting.metadata.labels[QUEUE] = "other"
    assert cp.store.update(waiting).metadata.labels[QUEUE] == "other"


def test_the_queue_name_is_not_removed_where_a_default_queue_would_put_one_back() -> None:
    cp = _plane()
    waiting = _waiting(cp, "wait")
    del waiting.metadata.labels[QUEUE]
    assert cp.store.update(waiting)  # no default LocalQueue: allowed
    cp.create([local_queue("team", "default", "cq")])
    waiting = _waiting(cp, "wait2")
    del waiting.metadata.labels[QUEUE]
    assert _refused(cp, waiting) == (
        f'Job.batch "wait2" is invalid: metadata.labels[{QUEUE}]: '
        'Invalid value: "": queue-name must not be empty in namespace with default queue'
    )


def test_a_priority_class_is_not_added_to_a_running_job_nor_removed() -> None:
    cp = _plane()
    cp.create([_wpc("high", 900)])
    running = _running(cp, "run")
    running.metadata.labels[WPC_LABEL] = "high"
    assert _refused(cp, running).endswith(
        f'metadata.labels[{WPC_LABEL}]: Invalid value: "high": '
        "WorkloadPriorityClass cannot be added to a non-suspended workload"
    )
    waiting = _waiting(cp, "wait")
    waiting.metadata.labels[WPC_LABEL] = "high"
    waiting = clone(cp.store.update(waiting))  # suspended: it may get one
    del waiting.metadata.labels[WPC_LABEL]
    assert _refused(cp, waiting).endswith(
        f'metadata.labels[{WPC_LABEL}]: Invalid value: "": '
        "WorkloadPriorityClass cannot be removed from a workload"
    )


def test_a_running_partially_admitted_job_keeps_its_parallelism_and_stops_cleanly() -> None:
    cp = _plane(gpus=2)
    p = job("team", "p", 1, pods=4)
    p.metadata.annotations = {MIN_PARALLELISM: "2"}
    cp.create([p])
    cp.mgr.run_until_idle()
    j = _get(cp, "p")
    assert (j.spec.suspend, j.spec.parallelism) == (False, 2)  # admitted 2 of 4
    j.spec.parallelism = 3
    assert _refused(cp, j) == (
        'Job.batch "p" is invalid: spec.parallelism: Forbidden: '
        "cannot change when partial admission is enabled and the job is not suspended"
    )
    # Kueue stops it in two writes (suspend, then restore the parallelism):
    # the rule above refuses the one-write stop.
    (wl,) = _workloads_of(cp, "p")
    cp.store.update(
        msgspec.structs.replace(wl, spec=msgspec.structs.replace(wl.spec, active=False))
    )
    cp.mgr.run_until_idle()
    j = cp.store.get(JOB, "team", "p")
    assert (j.spec.suspend, j.spec.parallelism) == (True, 4)
    assert "kueue.x-k8s.io/stopping" not in (j.metadata.annotations or {})


def test_prebuilt_name_elastic_switch_and_completions_switch_stay_while_running() -> None:
    cp = _plane()
    indexed = job("team", "run", 1)
    indexed.spec.completion_mode = "Indexed"
    cp.create([indexed])
    cp.mgr.run_until_idle()
    running = _get(cp, "run")
    assert running.spec.suspend is False
    running.metadata.annotations = {**(running.metadata.annotations or {}), PREBUILT: "wl"}
    assert _refused(cp, running).endswith(
        f'metadata.annotations[{PREBUILT}]: Invalid value: "wl": field is immutable'
    )
    running = _get(cp, "run")
    running.metadata.annotations = {ELASTIC: "true"}
    assert _refused(cp, running).endswith(
        f"metadata.annotations[{ELASTIC}]: Invalid value: true: field is immutable"
    )
    running = _get(cp, "run")
    running.metadata.annotations = {EQUAL: "true"}
    assert _refused(cp, running).endswith(
        f"metadata.annotations[{EQUAL}]: Forbidden: "
        "field is immutable while the job is not suspended"
    )
    both = job("team", "both", 1, pods=4)
    both.metadata.annotations = {MIN_PARALLELISM: "2", ELASTIC: "true"}
    with pytest.raises(Invalid) as err:
        cp.store.create(both)
    assert str(err.value).endswith(
        f'metadata.annotations[{MIN_PARALLELISM}]: Invalid value: "2": '
        "partial admission and elastic job cannot be used together"
    )


# ------------------------------------------------------------------ ancestors
def _child(name: str, owner: Any, *, queue: str | None = "main") -> Any:
    c = job("team", name, 1, queue=queue)
    c.metadata.owner_references = [
        OwnerReference(
            api_version="batch/v1",
            kind="Job",
            name=owner.metadata.name,
            uid=owner.metadata.uid,
            controller=True,
        )
    ]
    return c


def test_a_job_two_levels_below_a_managed_job_is_not_managed_on_its_own() -> None:
    cp = _plane()
    top = _running(cp, "top", gpus=1)
    (mid,) = cp.create([_child("mid", top, queue=None)])
    (leaf,) = cp.create([_child("leaf", mid)])
    cp.mgr.run_until_idle()
    leaf = cp.store.get(JOB, "team", "leaf")
    assert not leaf.spec.suspend  # its ancestor's Workload is admitted
    assert _workloads_of(cp, "leaf") == []
    # Below a Job Kueue does not manage, a Job with a queue name is managed.
    (free,) = cp.create([job("team", "free", 1, queue=None)])
    assert not free.spec.suspend
    (own,) = cp.create([_child("own", free)])
    assert own.spec.suspend is True
    cp.mgr.run_until_idle()
    assert len(_workloads_of(cp, "own")) == 1


def test_a_child_waits_suspended_while_its_ancestors_workload_is_not_admitted() -> None:
    cp = _plane()
    top = _waiting(cp, "top")
    (child,) = cp.create([_child("child", top)])
    assert not child.spec.suspend  # the webhook leaves it to its ancestor
    cp.mgr.run_until_idle()
    assert cp.store.get(JOB, "team", "child").spec.suspend is True
    assert _workloads_of(cp, "child") == []
    events = [
        (ev.reason, ev.message)
        for ev in cp.store.list(EVENT, "team").items
        if ev.involved_object.name == "child"
    ]
    assert events == [("Suspended", "Kueue managed child job suspended")]
