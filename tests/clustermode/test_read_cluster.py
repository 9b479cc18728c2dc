"""``kuota predict`` and ``kuota must-gather`` with ``--kubeconfig``: the
state read from an API server (``kuota serve`` of the predict test's world,
its simulated time read from ``--sim-clock``) gives the answers a kept state
gives; Secrets read from the server stay out of the bundle."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.cli.test_predict import WORLD, job
from tests.server.conftest import needs_kubectl, start_server

SECRET_VALUE = "c2VydmVkLXMzY3IzdC12YWx1ZQ=="  # base64 of a value that must not leak
MANAGER_POD = """
apiVersion: v1
kind: Namespace
metadata: {name: kueue-system}
---
apiVersion: v1
kind: Pod
metadata:
  name: kueue-controller-manager-0
  namespace: kueue-system
  labels: {control-plane: controller-manager}
spec:
  containers: [{name: manager, image: "kuota:dev", resources: {requests: {cpu: "1"}}}]
"""


def kuota(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kuota", *args], capture_output=True, text=True, timeout=120
    )


@needs_kubectl
def test_predict_and_must_gather_read_an_api_server(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    jobs = [
        job("running", "busy", 4, "1h", "2026-01-01T00:00:00Z"),
        job("second", "busy", 4, "30m", "2026-01-01T00:01:00Z"),
        job("third", "busy", 4, "20m", "2026-01-01T00:02:00Z"),
    ]
    world.write_text(WORLD + "---" + "---".join(jobs))
    # A simulated minute a second: the three jobs are there within ~3 s and
    # the running one ends only after a minute of the test.
    served = start_server(tmp_path / "state", str(world), "--speed", "60", home=tmp_path / "home")
    try:
        served.ok(
            "apply",
            "-f",
            "-",
            input=(
                "apiVersion: v1\nkind: Secret\nmetadata: {name: hf, namespace: team}\n"
                f"data: {{token: {SECRET_VALUE}}}\n"
            ),
        )
        served.ok("apply", "-f", "-", input=MANAGER_POD)  # whose logs must-gather reads
        deadline = time.monotonic() + 120
        while len(served.json("get", "workloads", "-n", "team")["items"]) < 3:
            assert time.monotonic() < deadline, "the world's three jobs did not arrive"
            time.sleep(0.2)
        src = (
            "--kubeconfig",
            str(served.kubeconfig),
            "--sim-clock",
            str(tmp_path / "state" / "sim-clock.json"),
        )
        new = tmp_path / "new.yaml"
        new.write_text(job("mine", "busy", 4, "1h"))
        out = kuota("predict", str(new), *src, "--json")
        assert out.returncode == 0, out.stdout + out.stderr
        later = json.loads(out.stdout)
        quick = tmp_path / "quick.yaml"
        quick.write_text(job("quick", "idle", 2, "5m"))
        out = kuota("predict", str(quick), *src, "--json")
        assert out.returncode == 0, out.stdout + out.stderr
        now = json.loads(out.stdout)
        bundle = tmp_path / "mg.tar.gz"
        gathered = kuota("must-gather", *src, "-o", str(bundle))
    finally:
        served.stop()
    # The predict test's known answers, from the API server's objects.
    assert later["admitted_now"] is False
    assert later["position_in_cluster_queue"] == 2
    assert later["position_in_local_queue"] == 2
    # Behind "running" (1h), "second" (30m) and "third" (20m): 01:50 after
    # "running" started, which in real time is a little after 00:00 (the
    # server's start-up, at 60 simulated seconds a second).
    start = datetime.fromisoformat(later["estimated_start"].replace("Z", "+00:00"))
    at = datetime(2026, 1, 1, 1, 50, tzinfo=UTC)
    assert at <= start <= at + timedelta(minutes=3), later
    assert now["admitted_now"] is True and now["flavor"] == "gpu"
    assert gathered.returncode == 0, gathered.stdout + gathered.stderr
    assert "Pending workloads: 2" in gathered.stdout
    with tarfile.open(bundle) as tar:
        files = {
            m.name.removeprefix("must-gather/"): tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }
    summary = files["summary.txt"].decode()
    assert sum(1 for line in summary.splitlines() if line.startswith("  team/")) == 2
    assert "objects/core/secrets.yaml" in files  # listed, its data redacted
    assert SECRET_VALUE.encode() not in b"".join(files.values())
    assert SECRET_VALUE.encode() not in bundle.read_bytes()
    # The manager's recent logs (its pods by Kueue's label, each container).
    log = files["logs/kueue-system/kueue-controller-manager-0/manager.log"].decode()
    assert "simulated container manager (image kuota:dev)" in log, log
    assert "logs: the last 2000 lines of 1 manager container(s) in logs/" in summary


def test_kubeconfig_errors_name_the_file(tmp_path: Path) -> None:
    new = tmp_path / "new.yaml"
    new.write_text(job("mine", "busy", 4, "1h"))
    missing = tmp_path / "nope"
    out = kuota("predict", str(new), "--kubeconfig", str(missing))
    assert out.returncode == 2 and f"--kubeconfig {missing}" in out.stderr
    assert "Traceback" not in out.stderr
    out = kuota("must-gather", "--kubeconfig", str(missing), "-o", str(tmp_path / "x.tar.gz"))
    assert out.returncode == 2 and f"--kubeconfig {missing}" in out.stderr
    out = kuota("predict", str(new), "--kubeconfig", str(missing), "--state", str(tmp_path))
    assert out.returncode == 2 and "not both" in out.stderr
