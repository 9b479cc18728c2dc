"""The real kubectl against ``kuota serve`` with a CustomResourceDefinition
applied: the kind it defines is served at once (discovery, kubectl get with
its printer columns, the scale subresource), its objects are read against the
CRD's schema (defaults; invalid ones refused with kube-apiserver's field
paths and messages), they outlive a restart, and a Job owned by one of them,
its kind named in integrations.externalFrameworks, is its owner's (no
Workload of its own, held suspended until its owner's Workload is
admitted), as Kueue treats it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.server.conftest import needs_kubectl

pytestmark = needs_kubectl

DATA = Path(__file__).resolve().parents[1] / "data" / "crd"
WORLD = """
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
integrations:
  frameworks: [batch/job]
  externalFrameworks: [CronTab.v1.stable.example.com]
---
{apiVersion: v1, kind: Namespace, metadata: {name: team}}
---
{apiVersion: kueue.x-k8s.io/v1beta2, kind: ResourceFlavor, metadata: {name: default}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default, resources: [{name: cpu, nominalQuota: "10"}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: team}
spec: {clusterQueue: cq}
"""
CRONTAB = """
apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: {name}
  namespace: team
  labels: {{kueue.x-k8s.io/queue-name: lq}}
spec: {spec}
"""
JOB = """
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: team
  labels: {{kueue.x-k8s.io/queue-name: lq}}
  {owner}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: c, image: x, resources: {{requests: {{cpu: "1"}}}}}}]
"""


def test_crd_applied_with_kubectl_serves_its_kind(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    world = tmp_path / "world.yaml"
    world.write_text(WORLD)
    s = serve(str(world))
    out = s.ok("apply", "-f", str(DATA / "crontab-crd.yaml"))
    assert (
        "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created" in out
    )
    crd = s.json("get", "crd", "crontabs.stable.example.com")
    assert {c["type"]: c["status"] for c in crd["status"]["conditions"]} == {
        "NamesAccepted": "True",
        "Established": "True",
    }
    res = s.ok("api-resources", "--api-group=stable.example.com", "--no-headers").split()
    assert res == ["crontabs", "ct", "stable.example.com/v1", "true", "CronTab"]

    good = CRONTAB.format(name="nightly", spec='{cronSpec: "0 3 * * *", image: backup}')
    assert "crontab.stable.example.com/nightly created" in s.ok(
        "apply", "--validate=strict", "-f", "-", input=good
    )
    table = s.ok("get", "ct", "-n", "team").splitlines()
    assert table[0].split() == ["NAME", "SPEC", "REPLICAS", "AGE"]
    assert table[1].split()[:7] == ["nightly", "0", "3", "*", "*", "*", "1"]  # replicas defaulted

    bad = CRONTAB.format(name="broken", spec="{cronSpec: hello, replicas: 20, mode: Medium}")
    r = s.kubectl("apply", "-f", "-", input=bad)
    assert r.returncode == 1
    err = " ".join(r.stderr.split())
    assert 'The CronTab "broken" is invalid:' in err
    assert 'spec.mode: Unsupported value: "Medium": supported values: "Fast", "Slow"' in err
    assert (
        "spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10"
    ) in err
    assert 'spec.cronSpec: Invalid value: "hello": spec.cronSpec in body should match' in err

    assert "scaled" in s.ok("scale", "ct", "nightly", "-n", "team", "--replicas=3")
    assert s.json("get", "ct", "nightly", "-n", "team")["spec"]["replicas"] == 3

    # integrations.externalFrameworks: a Job its CronTab controls is the
    # CronTab's (whose own controller would submit the Workload): Kueue gives
    # it no Workload of its own and keeps it suspended while its owner has no
    # admitted one; a Job of its own gets its Workload.
    uid = s.json("get", "ct", "nightly", "-n", "team")["metadata"]["uid"]
    owner = (
        "ownerReferences: [{apiVersion: stable.example.com/v1, kind: CronTab, name: nightly, "
        f"uid: {uid}, controller: true}}]"
    )
    s.ok("apply", "-f", "-", input=JOB.format(name="owned", owner=owner))
    s.ok("apply", "-f", "-", input=JOB.format(name="alone", owner=""))
    jobs = {j["metadata"]["name"]: j for j in s.json("get", "jobs", "-n", "team")["items"]}
    owners = [
        w["metadata"]["ownerReferences"][0]["uid"]
        for w in s.json("get", "workloads", "-n", "team")["items"]
    ]
    assert owners == [jobs["alone"]["metadata"]["uid"]]
    assert jobs["owned"]["spec"]["suspend"] is True
    events = s.ok("get", "events", "-n", "team", "--field-selector=involvedObject.name=owned")
    assert "Kueue managed child job suspended" in events

    # A restart reads the stored CRD first: its kind and objects are back.
    s.stop()
    s2 = serve(state=s.state)
    got = json.loads(s2.ok("get", "ct", "-n", "team", "-o", "json"))["items"]
    assert [o["metadata"]["name"] for o in got] == ["nightly"]
