"""The real kubectl against ``kuota serve``, continued: server-side apply (and a
conflict taken over with --force-conflicts), ``patch`` in kubectl's three
types, ``explain`` of a Kueue kind and a built-in one, ``get -o wide``."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from tests.server.conftest import EXAMPLES, Served, needs_kubectl, start_server

pytestmark = needs_kubectl

WORLD = EXAMPLES / "quickstart" / "world.yaml"
NODES = EXAMPLES / "quickstart" / "nodes.yaml"

CQ = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: ssa}}
spec:
  cohortName: {cohort}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{{name: default-flavor, resources: [{{name: cpu, nominalQuota: "4"}}]}}]
"""

PC = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: ssa-pc}}
value: 100
description: {description}
"""

DEPLOY = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: patched, namespace: vision}
spec:
  replicas: 0
  selector: {matchLabels: {app: patched}}
  template:
    metadata: {labels: {app: patched}}
    spec:
      containers:
      - {name: main, image: trainer, resources: {requests: {cpu: 100m}}}
"""

JOB = """
apiVersion: batch/v1
kind: Job
metadata:
  name: wide
  namespace: vision
  labels: {kueue.x-k8s.io/queue-name: default}
  annotations: {kuota.dev/duration: 1h}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: trainer, resources: {requests: {cpu: "1"}}}
"""


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    d = tmp_path_factory.mktemp("kubectl-patch")
    (d / "home").mkdir()
    s = start_server(d / "state", home=d / "home")
    try:
        s.ok("apply", "-f", str(WORLD), "-f", str(NODES))
        yield s
    finally:
        s.stop()


def _managers(obj: dict) -> dict[str, str]:
    return {m["manager"]: m["operation"] for m in obj["metadata"].get("managedFields") or []}


def test_server_side_apply_and_a_conflict_forced(srv: Served) -> None:
    out = srv.ok("apply", "--server-side", "-f", "-", input=CQ.format(cohort="research"))
    assert out.strip() == "clusterqueue.kueue.x-k8s.io/ssa serverside-applied"
    cq = srv.json("get", "clusterqueue", "ssa", "--show-managed-fields")
    assert cq["spec"]["cohortName"] == "research"
    assert _managers(cq)["kubectl"] == "Apply"
    # The same intent again changes nothing (the controllers' status writes
    # may move resourceVersion meanwhile: compare the spec's generation).
    again = srv.ok("apply", "--server-side", "-f", "-", input=CQ.format(cohort="research"))
    assert "serverside-applied" in again
    after = srv.json("get", "clusterqueue", "ssa", "--show-managed-fields")
    assert after["metadata"]["generation"] == cq["metadata"]["generation"] == 1
    assert after["spec"] == cq["spec"]
    # Another manager setting a field kubectl owns: a conflict, nothing written.
    other = ("apply", "--server-side", "--field-manager=platform", "-f", "-")
    r = srv.kubectl(*other, input=CQ.format(cohort="elsewhere"))
    assert r.returncode == 1
    assert r.stderr.startswith(
        'error: Apply failed with 1 conflict: conflict with "kubectl": .spec.cohortName\n'
    ), r.stderr
    assert srv.json("get", "clusterqueue", "ssa")["spec"]["cohortName"] == "research"
    # --force-conflicts takes the field over.
    srv.ok(*other[:-2], "--force-conflicts", "-f", "-", input=CQ.format(cohort="elsewhere"))
    cq = srv.json("get", "clusterqueue", "ssa", "--show-managed-fields")
    assert cq["spec"]["cohortName"] == "elsewhere"
    assert _managers(cq)["platform"] == "Apply"


def test_server_side_apply_of_a_builtin_kind(srv: Served) -> None:
    srv.ok("apply", "--server-side", "-f", "-", input=PC.format(description="first"))
    r = srv.kubectl(
        "apply",
        "--server-side",
        "--field-manager=ops",
        "-f",
        "-",
        input=PC.format(description="second"),
    )
    assert r.returncode == 1
    assert 'conflict with "kubectl": .description\n' in r.stderr, r.stderr
    srv.ok(
        "apply",
        "--server-side",
        "--field-manager=ops",
        "--force-conflicts",
        "-f",
        "-",
        input=PC.format(description="second"),
    )
    assert srv.json("get", "priorityclass", "ssa-pc")["description"] == "second"


def test_patch_merge_and_json_on_a_kueue_kind(srv: Served) -> None:
    out = srv.ok(
        "patch",
        "clusterqueue",
        "team-vision",
        "--type",
        "merge",
        "-p",
        '{"spec":{"stopPolicy":"Hold"}}',
    )
    assert out.strip() == "clusterqueue.kueue.x-k8s.io/team-vision patched"
    assert srv.json("get", "clusterqueue", "team-vision")["spec"]["stopPolicy"] == "Hold"
    ops = [{"op": "replace", "path": "/spec/stopPolicy", "value": "None"}]
    srv.ok("patch", "clusterqueue", "team-vision", "--type", "json", "-p", json.dumps(ops))
    assert srv.json("get", "clusterqueue", "team-vision")["spec"]["stopPolicy"] == "None"
    # A failing test op refuses the whole patch.
    bad = [{"op": "test", "path": "/spec/stopPolicy", "value": "Hold"}]
    r = srv.kubectl("patch", "clusterqueue", "team-vision", "--type", "json", "-p", json.dumps(bad))
    assert r.returncode == 1
    # Strategic merge is for built-in kinds only: kubectl reads the patch types
    # the served OpenAPI lists for the kind and refuses before sending.
    r = srv.kubectl("patch", "clusterqueue", "team-vision", "-p", '{"spec":{"stopPolicy":"Hold"}}')
    assert r.returncode == 1
    assert (
        "application/strategic-merge-patch+json is not supported by "
        "kueue.x-k8s.io/v1beta2, Kind=ClusterQueue" in r.stderr
    ), r.stderr


def test_patch_strategic_merges_containers_by_name(srv: Served) -> None:
    srv.ok("apply", "-f", "-", input=DEPLOY)
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "v2"}]}}}}
    out = srv.ok("patch", "deployment", "-n", "vision", "patched", "-p", json.dumps(patch))
    assert out.strip() == "deployment.apps/patched patched"
    (c,) = srv.json("get", "deployment", "-n", "vision", "patched")["spec"]["template"]["spec"][
        "containers"
    ]
    # Merged by name: the image changed, the requests kept.
    assert c["image"] == "v2" and c["resources"]["requests"]["cpu"] == "100m"
    side = {"spec": {"template": {"spec": {"containers": [{"name": "side", "image": "s"}]}}}}
    srv.ok(
        "patch",
        "deployment",
        "-n",
        "vision",
        "patched",
        "--type",
        "strategic",
        "-p",
        json.dumps(side),
    )
    containers = srv.json("get", "deployment", "-n", "vision", "patched")["spec"]["template"][
        "spec"
    ]["containers"]
    assert sorted(c["name"] for c in containers) == ["main", "side"]
    # The same list through a merge patch replaces it whole.
    srv.ok(
        "patch", "deployment", "-n", "vision", "patched", "--type", "merge", "-p", json.dumps(side)
    )
    containers = srv.json("get", "deployment", "-n", "vision", "patched")["spec"]["template"][
        "spec"
    ]["containers"]
    assert [c["name"] for c in containers] == ["side"]


def test_explain_a_kueue_kind_and_a_builtin(srv: Served) -> None:
    out = srv.ok("explain", "clusterqueue.spec")
    assert "GROUP:      kueue.x-k8s.io" in out and "KIND:       ClusterQueue" in out
    assert "VERSION:    v1beta2" in out and "FIELD: spec <Object>" in out
    assert "resourceGroups\t<[]Object>" in out and "cohortName\t<string>" in out, out
    out = srv.ok("explain", "job.spec.template.spec.containers.resources")
    assert "GROUP:      batch" in out and "KIND:       Job" in out and "VERSION:    v1" in out
    assert "limits\t<map[string]" in out and "requests\t<map[string]" in out, out
    out = srv.ok("explain", "deployment.spec.replicas")
    assert "FIELD: replicas <integer>" in out, out


def test_get_wide(srv: Served) -> None:
    srv.ok("apply", "-f", "-", input=JOB)
    deadline = time.monotonic() + 20
    while True:
        pods = srv.ok("get", "pods", "-n", "vision", "-l", "job-name=wide", "-o", "wide")
        rows = [r.split() for r in pods.splitlines()[1:]]
        if (rows and rows[0][2] == "Running") or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    header = pods.splitlines()[0].split()
    assert header == [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED",
        "NODE",
        "READINESS",
        "GATES",
    ]
    assert rows and rows[0][2] == "Running", pods
    nodes = {n["metadata"]["name"] for n in srv.json("get", "nodes")["items"]}
    assert rows[0][6] in nodes
    jobs = srv.ok("get", "jobs", "-n", "vision", "wide", "-o", "wide").splitlines()
    assert jobs[0].split() == [
        "NAME",
        "STATUS",
        "COMPLETIONS",
        "DURATION",
        "AGE",
        "CONTAINERS",
        "IMAGES",
        "SELECTOR",
    ]
    cells = jobs[1].split()
    # (kuota does not generate a Job's selector as kube-apiserver's job
    # strategy does, so the column shows the stored spec.selector: none.)
    assert cells[0] == "wide" and cells[5:] == ["main", "trainer", "<none>"]
    nodes_wide = srv.ok("get", "nodes", "-o", "wide").splitlines()[0].split()
    assert nodes_wide[:5] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert nodes_wide[5:7] == ["INTERNAL-IP", "EXTERNAL-IP"]
    srv.ok("apply", "-f", "-", input=DEPLOY.replace("patched", "shown"))
    deploys = srv.ok("get", "deployments", "-n", "vision", "shown", "-o", "wide").splitlines()
    assert deploys[0].split() == [
        "NAME",
        "READY",
        "UP-TO-DATE",
        "AVAILABLE",
        "AGE",
        "CONTAINERS",
        "IMAGES",
        "SELECTOR",
    ]
    assert deploys[1].split()[-3:] == ["main", "trainer", "app=shown"]
