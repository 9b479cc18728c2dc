"""MultiKueue in cluster mode: the manager is ``kuota serve --without-kueue``
(a cluster with no Kueue) with ``kuota controller`` against it, its webhooks
served by the controller; the workers are two ``kuota serve``. The manager's
controller reads the workers' kubeconfigs from Secrets in Kueue's namespace
only (its role has no other Secret), dispatches a Job and a JobSet to the
worker with room, and mirrors their status back."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from tests.clustermode.twoproc import free_port, start_controller
from tests.controllers.multikueue.test_multikueue_e2e import (
    CONFIG,
    EXAMPLE,
    cond,
    get,
    owned_by,
    secret,
    wait_for,
)
from tests.server.conftest import KUBECTL, Served, start_server

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")


@pytest.fixture
def clusters(tmp_path: Path) -> Iterator[dict[str, Served]]:
    manager_world = tmp_path / "manager-world"
    manager_world.mkdir()
    shutil.copy(EXAMPLE / "manager" / "setup.yaml", manager_world)
    starts = {
        "worker1": (EXAMPLE / "worker1", ()),
        "worker2": (EXAMPLE / "worker2", ()),
        "manager": (manager_world, ("--without-kueue",)),
    }
    (tmp_path / "home").mkdir()
    started: dict[str, Served] = {}
    try:
        with ThreadPoolExecutor(3) as pool:
            futs = {
                n: pool.submit(
                    start_server, tmp_path / n / "state", str(w), *args, home=tmp_path / "home"
                )
                for n, (w, args) in starts.items()
            }
            for n, f in futs.items():
                started[n] = f.result()
        yield started
    finally:
        for s in started.values():
            s.stop()


def test_a_manager_controller_dispatches_to_workers(
    clusters: dict[str, Served], tmp_path: Path
) -> None:
    manager, w1, w2 = clusters["manager"], clusters["worker1"], clusters["worker2"]
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    url = f"https://127.0.0.1:{free_port()}"
    ctl = start_controller(manager, "--config", str(config), "--webhook-url", url)
    try:
        ctl.wait_line("leading", 120)
        for name, worker in (("worker1", w1), ("worker2", w2)):
            manager.ok("apply", "-f", "-", input=secret(f"{name}-secret", worker.kubeconfig))
        for name in ("worker1", "worker2"):
            wait_for(
                f"{name} Active",
                lambda n=name: cond(get(manager, "multikueuecluster", n), "Active"),
                60,
            )
        wait_for(
            "the check Active",
            lambda: cond(get(manager, "admissioncheck", "sample-multikueue"), "Active"),
        )
        # The controller's job webhook defaults managedBy over HTTPS.
        wait_for("the webhooks registered", lambda: get(manager, "mutatingwebhookconfigurations"))
        manager.ok("apply", "-f", str(EXAMPLE / "job.yaml"))
        local = get(manager, "job", "sample-job", "-n", "default")
        assert local["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"
        wl = wait_for(
            "the Job's workload admitted",
            lambda: (
                cond(owned_by(manager, "Job", "sample-job"), "Admitted")
                and owned_by(manager, "Job", "sample-job")
            ),
            60,
        )
        assert wl["status"]["clusterName"] == "worker2"  # worker1 is full
        remote = wait_for(
            "the Job in worker2", lambda: get(w2, "job", "sample-job", "-n", "default")
        )
        assert remote["metadata"]["labels"]["kueue.x-k8s.io/multikueue-origin"] == "multikueue"
        assert get(w1, "job", "sample-job", "-n", "default") is None
        job = wait_for(
            "the Job Complete in the manager",
            lambda: (
                cond(get(manager, "job", "sample-job", "-n", "default"), "Complete")
                and get(manager, "job", "sample-job", "-n", "default")
            ),
            60,
        )
        assert job["status"]["succeeded"] == 1
        wait_for(
            "the manager's workload Finished",
            lambda: cond(owned_by(manager, "Job", "sample-job"), "Finished"),
        )
        manager.ok("apply", "-f", str(EXAMPLE / "jobset.yaml"))
        wl = wait_for(
            "the JobSet's workload admitted",
            lambda: (
                cond(owned_by(manager, "JobSet", "sleep-jobset"), "Admitted")
                and owned_by(manager, "JobSet", "sleep-jobset")
            ),
            60,
        )
        assert wl["status"]["clusterName"] == "worker2"
        mirrored = wait_for(
            "the JobSet's status mirrored",
            lambda: (
                get(manager, "jobset", "sleep-jobset", "-n", "default").get("status") or {}
            ).get("replicatedJobsStatus"),
            60,
        )
        assert mirrored[0]["name"] == "workers"
        # The manager's cluster runs no pod of either.
        assert get(manager, "pods", "-n", "default")["items"] == []
    finally:
        assert ctl.stop() == 0
