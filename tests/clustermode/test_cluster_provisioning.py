"""Kueue's ProvisioningRequest admission check in cluster mode: ``kuota
controller`` writes the ProvisioningRequests and their PodTemplates over the
API server, the cluster's autoscaler (``kuota serve --without-kueue``'s
simulated one) answers them, and every workload is admitted, retried after a
stock-out and finished as in ``kuota run`` of the same world."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from tests.clustermode.twoproc import (
    WorkloadLog,
    check_writes,
    outcome,
    run_embedded,
    start_controller,
    start_paced,
    state_items,
    wait_for,
    webhook_admitted,
)
from tests.server.conftest import EXAMPLES, needs_kubectl


def _instants(workloads: list[dict[str, Any]]) -> dict[str, tuple[str | None, ...]]:
    """Per Job: when its Workload last reserved quota, was admitted (the
    check Ready) and finished."""
    out = {}
    for w in workloads:
        owner = w["metadata"]["ownerReferences"][0]["name"]
        conds = {c["type"]: c["lastTransitionTime"] for c in w["status"].get("conditions") or ()}
        out[owner] = tuple(conds.get(t) for t in ("QuotaReserved", "Admitted", "Finished"))
    return out


def _checks(workloads: list[dict[str, Any]]) -> dict[str, list[tuple[str, str, str]]]:
    """Per Job: its admission checks' names, states and messages (the
    autoscaler's answer: provisioned, or the stock-out it retried after)."""
    out = {}
    for w in workloads:
        owner = w["metadata"]["ownerReferences"][0]["name"]
        acs = w["status"].get("admissionChecks") or ()
        out[owner] = sorted((c["name"], c["state"], c.get("message", "")) for c in acs)
    return out


@needs_kubectl
def test_provisioning_example_paced_decides_as_kuota_run(tmp_path: Path) -> None:
    """The example's stock-outs are drawn from each ProvisioningRequest's
    name, which holds its Workload's (a hash of the Job's uid, another in
    each run): here every scale-up succeeds, so both runs decide alike."""
    src = tmp_path / "src"
    shutil.copytree(EXAMPLES / "provisioning", src)
    ng = src / "nodegroup.yaml"
    ng.write_text(ng.read_text().replace("failurePercent: 45", "failurePercent: 0"))
    world = webhook_admitted(src, tmp_path / "world")
    want = run_embedded(world, tmp_path / "run")
    ran_items = state_items(tmp_path / "run", "workloads", "-A")
    want_checks, want_at = _checks(ran_items), _instants(ran_items)
    assert want_checks and all(want_checks.values())
    served = start_paced(world, tmp_path)
    log = WorkloadLog(served)
    ctl = start_controller(served)
    try:

        def done():  # type: ignore[no-untyped-def]
            got = outcome(served.json("get", "workloads", "-A")["items"])
            n = sum(1 for v in got.values() if v["finished"])
            return got if len(got) == len(want) and n == len(want) else f"{n} finished"

        got = wait_for(done, 240, "every workload finished")
        items = served.json("get", "workloads", "-A")["items"]
        cqs = served.json("get", "clusterqueues")["items"]
    finally:
        log.stop()
        assert ctl.stop() == 0
        served.stop()
    assert _checks(items) == want_checks  # the autoscaler's answers, as embedded
    assert got == want
    assert _instants(items) == want_at
    check_writes(log, cqs)
