"""A SparkApplication through the real kubectl against ``kuota serve``:
discovered (short name ``sparkapp``, the CRD's printer columns), Kueue's
sample created, suspended by Kueue's webhook, admitted and run by the
simulated operator; dynamic allocation refused with Kueue's path and
message (sparkapplication_webhook_test.go TestValidateCreate
"dynamicAllocation without elastic job feature"); its queue name immutable
while it runs, other labels not (TestValidateUpdate "queue name should not
change while unsuspended", "queue name unchanged while unsuspended")."""

from __future__ import annotations

import time
from pathlib import Path

import yaml
from tests.controllers.jobs.sparkapplication.test_sparkapplication import (
    SAMPLE,
    _config,
    _nodes,
    _queues,
)
from tests.server.conftest import needs_kubectl, start_server


@needs_kubectl
def test_kubectl_creates_kueues_sample_and_is_refused_dynamic_allocation(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    world.write_text("---\n".join((_config(), _queues(), _nodes())))
    srv = start_server(tmp_path / "state", str(world), home=tmp_path / "home")
    try:
        names = srv.ok("api-resources", "--api-group=sparkoperator.k8s.io", "-o", "name")
        assert names.split() == ["sparkapplications.sparkoperator.k8s.io"], names
        srv.ok("apply", "-n", "default", "-f", str(SAMPLE))
        state = ""
        for _ in range(100):
            app = srv.json("get", "sparkapp", "spark-pi", "-n", "default")
            state = (app.get("status") or {}).get("applicationState", {}).get("state", "")
            if state == "RUNNING":
                break
            time.sleep(0.1)
        assert state == "RUNNING", app
        assert app["spec"]["suspend"] is False
        # TestValidateUpdate "queue name should not change while unsuspended" (kubectl
        # label sends a merge patch: a CRD's kind takes no strategic merge)
        r = srv.kubectl(
            "label",
            "sparkapp",
            "spark-pi",
            "-n",
            "default",
            "--overwrite",
            "kueue.x-k8s.io/queue-name=other",
        )
        assert r.returncode == 1, r.stdout
        assert (
            'metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: "other": field is immutable'
        ) in r.stderr, r.stderr
        srv.ok("label", "sparkapp", "spark-pi", "-n", "default", "team=a")
        header = srv.ok("get", "sparkapp", "-n", "default").splitlines()[0].split()
        assert header == ["NAME", "SUSPEND", "STATUS", "ATTEMPTS", "START", "FINISH", "AGE"]
        dyn = yaml.safe_load(SAMPLE.read_text())
        dyn["metadata"]["name"] = "dyn"
        dyn["spec"]["dynamicAllocation"] = {"enabled": True}
        r = srv.kubectl("apply", "-n", "default", "-f", "-", input=yaml.safe_dump(dyn))
        assert r.returncode == 1, r.stdout
        assert (
            'The SparkApplication "dyn" is invalid: spec.dynamicAllocation.enabled: Invalid '
            "value: true: a kueue managed job can use dynamicAllocation only when the "
            "ElasticJobsViaWorkloadSlices feature gate is on and the job is an elastic job"
        ) in r.stderr, r.stderr
    finally:
        srv.stop()
