"""The real kubectl against ``kuota serve``: apply, get with the columns users
know, selectors, describe, wait, watch, delete with cascade, scale, the
visibility API, and an invalid object refused with its field path."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.server.conftest import EXAMPLES, KUBECTL, Served, needs_kubectl, start_server

pytestmark = needs_kubectl

WORLD = EXAMPLES / "quickstart" / "world.yaml"
NODES = EXAMPLES / "quickstart" / "nodes.yaml"
# kubectl validates against the served OpenAPI v3 (server-side: fieldValidation=Strict).
VALIDATE = "--validate=strict"

JOB = """
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: vision
  labels: {{kueue.x-k8s.io/queue-name: default, app: {app}}}
  annotations: {{kuota.dev/duration: 1h}}
spec:
  parallelism: {n}
  completions: {n}
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: trainer
        resources: {{requests: {{cpu: "1", nvidia.com/gpu: "1"}}, limits: {{nvidia.com/gpu: "1"}}}}
"""


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    d = tmp_path_factory.mktemp("kubectl")
    (d / "home").mkdir()
    s = start_server(d / "state", home=d / "home")
    try:
        out = s.ok("apply", VALIDATE, "-f", str(WORLD), "-f", str(NODES))
        assert "clusterqueue.kueue.x-k8s.io/team-vision created" in out
        yield s
    finally:
        s.stop()


def _wait(fn, timeout: float = 20.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        got = fn()
        if got or time.monotonic() > deadline:
            return got
        time.sleep(0.2)


def _versions(srv: Served) -> dict[str, str]:
    out = {}
    for kind in (
        "resourceflavors",
        "cohorts",
        "clusterqueues",
        "localqueues",
        "workloadpriorityclasses",
        "namespaces",
        "nodes",
    ):
        for item in srv.json("get", kind, "-A")["items"]:
            m = item["metadata"]
            # (Controllers write statuses meanwhile: compare what apply writes.)
            out[f"{kind}/{m.get('namespace', '')}/{m['name']}"] = json.dumps(
                [m.get("labels"), m.get("annotations"), item.get("spec")], sort_keys=True
            )
    return out


def test_apply_twice_is_a_no_op(srv: Served) -> None:
    before = _versions(srv)
    out = srv.ok("apply", VALIDATE, "-f", str(WORLD), "-f", str(NODES))
    assert _versions(srv) == before  # nothing changed
    lines = [line for line in out.splitlines() if line.strip()]
    # team-nlp is v1beta1 with whenCanBorrow: Borrow, which Kueue's conversion
    # reads back as MayStopSearch: kubectl sends that field again (a patch
    # that changes nothing); every other object is unchanged.
    assert [line for line in lines if not line.endswith(" unchanged")] == [
        "clusterqueue.kueue.x-k8s.io/team-nlp configured"
    ], out


def test_get_columns(srv: Served) -> None:
    srv.ok("apply", VALIDATE, "-f", "-", input=JOB.format(name="cols", app="cols", n=1))
    cq = srv.ok("get", "clusterqueues", "-o", "wide").splitlines()
    assert cq[0].split() == [
        "NAME",
        "COHORT",
        "STRATEGY",
        "PENDING",
        "WORKLOADS",
        "ADMITTED",
        "WORKLOADS",
    ]
    assert any(line.split()[:2] == ["team-vision", "research"] for line in cq[1:])
    lq = srv.ok("get", "localqueues", "-n", "vision").splitlines()
    assert lq[0].split() == [
        "NAME",
        "CLUSTERQUEUE",
        "PENDING",
        "WORKLOADS",
        "ADMITTED",
        "WORKLOADS",
    ]
    assert lq[1].split()[:2] == ["default", "team-vision"]

    def admitted() -> list[str]:
        rows = srv.ok("get", "workloads", "-A").splitlines()
        return [r for r in rows[1:] if "job-cols-" in r and " True " in f" {r} "]

    rows = _wait(admitted)
    assert rows, srv.ok("get", "workloads", "-A")
    header = srv.ok("get", "workloads", "-A").splitlines()[0].split()
    assert header == ["NAMESPACE", "NAME", "QUEUE", "RESERVED", "IN", "ADMITTED", "FINISHED", "AGE"]
    cells = rows[0].split()
    assert cells[0] == "vision" and cells[2] == "default" and cells[3] == "team-vision"
    jobs = srv.ok("get", "jobs", "-n", "vision").splitlines()
    assert jobs[0].split() == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    pods = srv.ok("get", "pods", "-n", "vision", "-l", "job-name=cols").splitlines()
    assert pods[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]


def test_selectors_json_and_describe(srv: Served) -> None:
    srv.ok("apply", VALIDATE, "-f", "-", input=JOB.format(name="sel-a", app="red", n=1))
    srv.ok("apply", VALIDATE, "-f", "-", input=JOB.format(name="sel-b", app="blue", n=1))
    names = srv.ok("get", "jobs", "-n", "vision", "-l", "app=red", "-o", "name").split()
    assert names == ["job.batch/sel-a"]
    by_field = srv.json("get", "jobs", "-n", "vision", "--field-selector", "metadata.name=sel-b")
    assert [i["metadata"]["name"] for i in by_field["items"]] == ["sel-b"]
    bad = srv.kubectl("get", "pods", "-A", "--field-selector", "spec.nope=x")
    assert bad.returncode == 1
    assert '"spec.nope" is not a known field selector' in bad.stderr
    cq = srv.json("get", "clusterqueue", "team-vision")
    assert cq["apiVersion"] == "kueue.x-k8s.io/v1beta2" and cq["spec"]["cohortName"] == "research"
    old = srv.json("get", "clusterqueues.v1beta1.kueue.x-k8s.io", "team-vision")
    assert old["apiVersion"] == "kueue.x-k8s.io/v1beta1" and old["spec"]["cohort"] == "research"
    described = srv.ok("describe", "job", "-n", "vision", "sel-a")
    assert "Name:" in described and "sel-a" in described


def test_wait_for_condition(srv: Served) -> None:
    srv.ok("apply", VALIDATE, "-f", "-", input=JOB.format(name="waited", app="w", n=1))
    wl = _wait(
        lambda: [
            i["metadata"]["name"]
            for i in srv.json("get", "workloads", "-n", "vision")["items"]
            if i["metadata"]["name"].startswith("job-waited-")
        ]
    )
    assert wl
    out = srv.ok(
        "wait",
        "-n",
        "vision",
        f"workload/{wl[0]}",
        "--for=condition=QuotaReserved",
        "--timeout=30s",
    )
    assert "condition met" in out


def test_get_watch_sees_events(srv: Served) -> None:
    assert KUBECTL is not None
    w = subprocess.Popen(
        [KUBECTL, "get", "jobs", "-n", "vision", "-w", "--output-watch-events"],
        env=srv.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(1.5)
        srv.ok("apply", VALIDATE, "-f", "-", input=JOB.format(name="watched", app="x", n=1))
        time.sleep(2.0)
    finally:
        w.terminate()
        out, _ = w.communicate(timeout=10)
    assert any(line.split()[:2] == ["ADDED", "watched"] for line in out.splitlines()), out


def test_delete_cascade(srv: Served) -> None:
    for name in ("gone-bg", "gone-orphan"):
        srv.ok("apply", VALIDATE, "-f", "-", input=JOB.format(name=name, app=name, n=1))

    def pods(job: str) -> list[str]:
        return srv.ok("get", "pods", "-n", "vision", "-l", f"job-name={job}", "-o", "name").split()

    assert _wait(lambda: pods("gone-bg")) and _wait(lambda: pods("gone-orphan"))
    srv.ok("delete", "job", "-n", "vision", "gone-bg", "--cascade=background")
    assert _wait(lambda: not pods("gone-bg"))
    r = srv.kubectl("delete", "job", "-n", "vision", "gone-orphan", "--cascade=orphan")
    assert r.returncode == 0, r.stderr
    time.sleep(1)
    left = pods("gone-orphan")
    assert left
    pod = srv.json("get", "-n", "vision", left[0])
    assert not any(
        o.get("name") == "gone-orphan" for o in pod["metadata"].get("ownerReferences") or []
    )


def test_scale(srv: Served) -> None:
    deploy = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: vision}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]}
"""
    srv.ok("apply", VALIDATE, "-f", "-", input=deploy)
    out = srv.ok("scale", "deployment", "-n", "vision", "web", "--replicas=3")
    assert "scaled" in out
    assert srv.json("get", "deployment", "-n", "vision", "web")["spec"]["replicas"] == 3
    scale = json.loads(
        srv.ok("get", "--raw", "/apis/apps/v1/namespaces/vision/deployments/web/scale")
    )
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 3


def test_visibility_api(srv: Served) -> None:
    # More GPUs than team-nlp can ever get: the job waits there, with a reason.
    job = (
        JOB.format(name="vis", app="vis", n=1)
        .replace("namespace: vision", "namespace: nlp")
        .replace('nvidia.com/gpu: "1"', 'nvidia.com/gpu: "64"')
    )
    srv.ok("apply", VALIDATE, "-f", "-", input=job)

    def items() -> list[dict]:
        raw = srv.ok(
            "get",
            "--raw",
            "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/team-nlp/pendingworkloads",
        )
        return json.loads(raw)["items"]

    got = _wait(items)
    assert got, "no pending workload"
    item = got[0]
    assert item["metadata"]["namespace"] == "nlp" and item["localQueueName"] == "default"
    assert item["positionInClusterQueue"] == 0 and item["positionInLocalQueue"] == 0
    assert "priority" in item and item["reason"]
    lq = json.loads(
        srv.ok(
            "get",
            "--raw",
            "/apis/visibility.kueue.x-k8s.io/v1beta1/namespaces/nlp/localqueues/default/pendingworkloads?limit=1",
        )
    )
    assert lq["apiVersion"] == "visibility.kueue.x-k8s.io/v1beta1" and len(lq["items"]) == 1


def test_invalid_object_refused_with_field_path(srv: Served, tmp_path: Path) -> None:
    bad = tmp_path / "lq.yaml"
    bad.write_text(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
        "metadata: {name: Bad_Name, namespace: vision}\nspec: {clusterQueue: team-vision}\n"
    )
    r = srv.kubectl("apply", VALIDATE, "-f", str(bad))
    assert r.returncode == 1
    assert 'The LocalQueue "Bad_Name" is invalid' in r.stderr and "metadata.name" in r.stderr
    assert srv.kubectl("get", "localqueue", "-n", "vision", "Bad_Name").returncode == 1
    cq = tmp_path / "cq.yaml"
    cq.write_text(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: bad}\n"
        "spec:\n  resourceGroups:\n  - coveredResources: [cpu]\n"
        "    flavors: [{name: default, resources: [{name: cpu, nominalQuota: -1}]}]\n"
    )
    r = srv.kubectl("apply", VALIDATE, "-f", str(cq))
    assert r.returncode == 1
    assert "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota" in r.stderr, r.stderr
    assert srv.kubectl("get", "clusterqueue", "bad").returncode == 1
