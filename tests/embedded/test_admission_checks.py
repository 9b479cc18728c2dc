"""Admission checks through the control plane: a check's state is set on the
stored Workload (as a check controller or a user would, with a status merge
patch), and the Job follows Kueue's workload controller: Ready admits and
starts it with the check's podSetUpdates, Retry evicts and requeues it,
Rejected deactivates it."""

from __future__ import annotations

from typing import Any

from kuota.api.kueue import types as kt
from kuota.store.resources import EVENT, JOB
from kuota.store.resources import WORKLOAD as WL

from .world import cluster_queue, control_plane, flavor, job, local_queue, namespace, node, obj

ACTIVE = {
    "type": "Active",
    "status": "True",
    "reason": "Active",
    "message": "The admission check is active",
    "lastTransitionTime": "2026-01-01T00:00:00Z",
}


def _world() -> list[Any]:
    cq = cluster_queue("cq", {"a100": 4})
    cq.spec.admission_checks_strategy = kt.AdmissionChecksStrategy(
        admission_checks=[kt.AdmissionCheckStrategyRule(name="prov")]
    )
    return [
        namespace("team"),
        flavor("a100", {"gpu": "a100"}),
        obj(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "AdmissionCheck",
                "metadata": {"name": "prov"},
                "spec": {"controllerName": "example.com/provisioner"},
                # What its controller sets: an inactive check keeps the queue inactive.
                "status": {"conditions": [ACTIVE]},
            }
        ),
        cq,
        local_queue("team", "main", "cq"),
        node("n1", 4, {"gpu": "a100", "pool": "gpu-a"}),
    ]


def _cond(o: Any, ctype: str) -> Any:
    return next((c for c in (o.status.conditions or ()) if c.type == ctype), None)


def _wl(cp: Any) -> Any:
    (wl,) = cp.store.list(WL, "team").items
    return wl


def _set_check(cp: Any, state: str, message: str = "", updates: Any = None) -> None:
    wl = _wl(cp)
    check: dict[str, Any] = {
        "name": "prov",
        "state": state,
        "message": message,
        "lastTransitionTime": cp.clock.now().isoformat(),
    }
    if updates:
        check["podSetUpdates"] = updates
    cp.store.patch(
        WL,
        wl.metadata.namespace,
        wl.metadata.name,
        {"status": {"admissionChecks": [check]}},
        status=True,
    )
    cp.mgr.run_until_idle()


def _started(cp: Any) -> bool:
    return cp.store.get(JOB, "team", "j").spec.suspend is False


def test_a_pending_check_holds_the_job_with_its_quota_reserved() -> None:
    cp = control_plane(cluster=True)
    cp.create(_world())
    cp.create([job("team", "j", 4)])
    cp.mgr.run_until_idle()
    wl = _wl(cp)
    assert _cond(wl, "QuotaReserved").status == "True"
    assert _cond(wl, "Admitted").status == "False" if _cond(wl, "Admitted") else True
    assert [(c.name, c.state) for c in wl.status.admission_checks] == [("prov", "Pending")]
    assert not _started(cp)


def test_ready_admits_and_starts_the_job_with_the_checks_pod_set_updates() -> None:
    cp = control_plane(cluster=True)
    cp.create(_world())
    cp.create([job("team", "j", 4)])
    cp.mgr.run_until_idle()
    _set_check(cp, "Ready", updates=[{"name": "main", "nodeSelector": {"pool": "gpu-a"}}])
    wl = _wl(cp)
    assert _cond(wl, "Admitted").status == "True"
    assert _started(cp)
    sel = cp.store.get(JOB, "team", "j").spec.template.spec.node_selector
    assert sel == {"gpu": "a100", "pool": "gpu-a"}


def test_retry_evicts_and_requeues_then_ready_admits_again() -> None:
    cp = control_plane(cluster=True)
    cp.create(_world())
    cp.create([job("team", "j", 4)])
    cp.mgr.run_until_idle()
    _set_check(cp, "Retry", message="capacity busy")
    wl = _wl(cp)
    msg = 'Evicted due to AdmissionCheck in Retry state: "prov" (capacity busy)'
    evicted = [
        e for e in cp.store.list(EVENT, "team").items if e.reason == "EvictedDueToAdmissionCheck"
    ]
    assert [e.message for e in evicted] == [msg]
    # Re-reserved in the same instant: Kueue turns Evicted False, keeping why.
    ev = _cond(wl, "Evicted")
    assert (ev.status, ev.reason, ev.message) == ("False", "QuotaReserved", "Previously: " + msg)
    assert wl.spec.active is True
    # Requeued at once (no backoff): the quota is reserved again, the check is
    # Pending again, the job still waits for it.
    assert _cond(wl, "Requeued").reason == "BackoffFinished"
    assert _cond(wl, "QuotaReserved").status == "True"
    assert [(c.name, c.state) for c in wl.status.admission_checks] == [("prov", "Pending")]
    assert not _started(cp)
    _set_check(cp, "Ready")
    assert _started(cp)


def test_rejected_deactivates_the_workload_and_the_job_stays_suspended() -> None:
    cp = control_plane(cluster=True)
    cp.create(_world())
    cp.create([job("team", "j", 4)])
    cp.mgr.run_until_idle()
    _set_check(cp, "Rejected", message="no capacity in region")
    wl = _wl(cp)
    assert wl.spec.active is False
    ev = _cond(wl, "Evicted")
    assert ev.reason == "DeactivatedDueToAdmissionCheck"
    assert ev.message == (
        'The workload is deactivated due to AdmissionCheck in Rejected state: "prov" '
        "(no capacity in region)"
    )
    assert _cond(wl, "QuotaReserved").status == "False"
    assert not _started(cp)
    events = {e.reason for e in cp.store.list(EVENT, "team").items}
    assert "EvictedDueToDeactivatedDueToAdmissionCheck" in events
