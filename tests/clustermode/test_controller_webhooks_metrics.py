"""``kuota controller --webhook-url`` against ``kuota serve --without-kueue``:
the controller serves Kueue's webhooks over HTTPS and registers Kueue's two
webhook configurations with its CA; serve calls them (a refused
ClusterQueue, a Job suspended at creation). Its /metrics carries Kueue's
series with values matching the objects."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families
from tests.clustermode.twoproc import free_port, start_controller, wait_for
from tests.server.conftest import EXAMPLES, needs_kubectl, start_server

BAD_CQ = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: bad}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: a100, resources: [{name: cpu, nominalQuota: "-1"}]}]
"""

JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: j1, namespace: vision, labels: {kueue.x-k8s.io/queue-name: default}}
spec:
  suspend: false
  template:
    spec:
      restartPolicy: Never
      containers: [{name: m, image: x, resources: {requests: {cpu: "1"}}}]
"""


@needs_kubectl
def test_controller_webhooks_and_metrics(tmp_path: Path) -> None:
    served = start_server(
        tmp_path / "state",
        str(EXAMPLES / "quickstart" / "world.yaml"),
        str(EXAMPLES / "quickstart" / "nodes.yaml"),
        "--without-kueue",
        home=tmp_path / "home",
    )
    url = f"https://127.0.0.1:{free_port()}"
    ctl = start_controller(served, "--webhook-url", url)
    try:
        ctl.wait_line("leading", 120)
        confs = served.json("get", "validatingwebhookconfigurations")["items"]
        names = {w["name"] for c in confs for w in c["webhooks"]}
        assert {"vclusterqueue.kb.io", "vjob.kb.io", "vworkload.kb.io"} <= names
        assert all(w["clientConfig"]["caBundle"] for c in confs for w in c["webhooks"])
        r = served.kubectl("create", "-f", "-", input=BAD_CQ)
        assert r.returncode != 0
        assert 'admission webhook "vclusterqueue.kb.io" denied the request' in r.stderr, r.stderr
        # As admitted (before the controller starts it): suspended by mjob.kb.io,
        # which serve --without-kueue does not do itself.
        dry = served.ok("create", "--dry-run=server", "-o", "json", "-f", "-", input=JOB)
        assert json.loads(dry)["spec"]["suspend"] is True
        served.ok("create", "-f", "-", input=JOB)
        wait_for(
            lambda: any(
                c["type"] == "Admitted" and c["status"] == "True"
                for w in served.json("get", "workloads", "-n", "vision")["items"]
                for c in (w.get("status") or {}).get("conditions") or []
            ),
            60,
            "the Job's workload admitted",
        )
        port = ctl.port("metrics")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=20) as resp:
            text = resp.read().decode()
        samples = {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(text)
            for s in fam.samples
        }
        admitted = [
            v
            for (name, labels), v in samples.items()
            if name == "kueue_admitted_workloads_total"
            and dict(labels)["cluster_queue"] == "team-vision"
        ]
        assert admitted == [1.0]
        assert all(
            dict(labels)["replica_role"] == "leader"
            for (name, labels), _ in samples.items()
            if name == "kueue_admitted_workloads_total"
        )
        gpu = [
            v
            for (name, labels), v in samples.items()
            if name == "kueue_cluster_queue_nominal_quota"
            and dict(labels)
            == {
                "cohort": "research",
                "cluster_queue": "team-vision",
                "flavor": "a100",
                "resource": "nvidia.com/gpu",
                "replica_role": "leader",
            }
        ]
        assert gpu == [8.0]
    finally:
        assert ctl.stop() == 0
        served.stop()
