"""``kuota predict`` served by ``kuota serve`` over HTTPS
(``POST /apis/kuota.dev/v1alpha1/namespaces/NS/predictions``): the answers of
the CLI's known-answer world on the live state (admitted now; third in line
with its start after the two ahead of it; never fits), nothing written,
RBAC's ``create`` on the job required, and bad bodies answered 400/422 with
a message naming what is wrong."""

from __future__ import annotations

import json
import ssl
import time
import urllib.error
import urllib.request
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.cli.test_predict import WORLD, job
from tests.server.conftest import Served, needs_kubectl

pytestmark = needs_kubectl

PREDICT = "/apis/kuota.dev/v1alpha1/namespaces/team/predictions"
# bob may create Jobs in "team" (Kueue's batch-user role); eve may only read them.
RBAC = """
apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: bob-batch-user, namespace: team}
subjects: [{kind: User, name: bob, apiGroup: rbac.authorization.k8s.io}]
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: kueue-batch-user-role}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: eve-view, namespace: team}
subjects: [{kind: User, name: eve, apiGroup: rbac.authorization.k8s.io}]
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
"""


def _post(
    srv: Served, body: str, token: str, content_type: str = "application/yaml"
) -> tuple[int, Any]:
    ctx = ssl.create_default_context(cafile=str(srv.state / "pki" / "ca.crt"))
    req = urllib.request.Request(
        srv.url + PREDICT,
        data=body.encode(),
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": content_type},
    )
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _stamp(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from tests.server.conftest import start_server

    d = tmp_path_factory.mktemp("predict")
    (d / "world.yaml").write_text(WORLD)
    tokens = d / "tokens.csv"
    tokens.write_text("admin-token,admin,0,system:masters\nbob-token,bob,1\neve-token,eve,2\n")
    s = start_server(d / "state", str(d / "world.yaml"), "--token-auth-file", str(tokens))
    try:
        s.ok("apply", "-f", "-", input=RBAC)
        for name, dur in (("running", "1h"), ("second", "30m"), ("third", "20m")):
            s.ok("apply", "-f", "-", input=job(name, "busy", 4, dur))
            time.sleep(0.02)  # distinct creation times: the queue's order is theirs
        yield s
    finally:
        s.stop()


def _admitted_at(srv: Served, job_name: str) -> datetime:
    """When the live server admitted a job's Workload (waits until it has)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for wl in srv.json("get", "workloads", "-n", "team")["items"]:
            if wl["metadata"]["ownerReferences"][0]["name"] != job_name:
                continue
            for c in wl.get("status", {}).get("conditions", []):
                if c["type"] == "Admitted" and c["status"] == "True":
                    return _stamp(c["lastTransitionTime"])
        time.sleep(0.2)
    raise AssertionError(f"{job_name} was not admitted")


def test_served_prediction_known_answers(srv: Served) -> None:
    running = _admitted_at(srv, "running")

    code, now = _post(srv, job("quick", "idle", 2, "5m"), "bob-token")
    assert code == 200, now
    assert now["admitted_now"] is True and now["flavor"] == "gpu" and now["reason"] is None

    # Third in line: "running" ends 1h after its admission, "second" runs 30m
    # after it, "third" 20m after that. (Admission times are kept to the
    # second on the wire: the estimate is within a second of that sum.)
    code, later = _post(srv, job("mine", "busy", 4, "1h"), "bob-token")
    assert code == 200, later
    assert later["admitted_now"] is False
    assert later["position_in_cluster_queue"] == 2 and later["position_in_local_queue"] == 2
    assert "insufficient" in later["reason"] and "nvidia.com/gpu" in later["reason"]
    want = running + timedelta(hours=1, minutes=50)
    assert abs((_stamp(later["estimated_start"]) - want).total_seconds()) < 1.5, later
    assert later["basis"] == {"declared duration": 3}  # running, second and third
    sources = {
        e["workload"].split("/")[1].rsplit("-", 1)[0]: e["source"] for e in later["expected_ends"]
    }
    assert sources["job-running"] == "declared duration"

    code, never = _post(srv, job("huge", "busy", 8, "1h"), "bob-token")
    assert code == 200 and never["estimated_start"] is None
    assert "nvidia.com/gpu" in never["reason"]

    # Only a fork was written to: the live state has none of the jobs asked about.
    names = {j["metadata"]["name"] for j in srv.json("get", "jobs", "-n", "team")["items"]}
    assert names == {"running", "second", "third"}


def test_served_prediction_as_json_through_kubectl(srv: Served, tmp_path: Path) -> None:
    """kubectl's raw POST (JSON) with the admin's client certificate."""
    f = tmp_path / "job.yaml"
    f.write_text(job("viakubectl", "idle", 1, "5m"))
    out = json.loads(srv.ok("create", "--raw", PREDICT, "-f", str(f)))
    assert out["admitted_now"] is True and out["workload"].startswith("team/job-viakubectl-")


def test_served_prediction_needs_create_on_the_job(srv: Served) -> None:
    code, body = _post(srv, job("peek", "busy", 4, "1h"), "eve-token")
    assert code == 403, body
    assert 'cannot create resource "jobs" in API group "batch"' in body["message"]
    assert "team" in body["message"]


@pytest.mark.parametrize(
    ("body", "code", "words"),
    [
        ("", 400, ["empty"]),
        ("a: [", 400, ["could not be decoded"]),
        ("kind: Job\n", 400, ["apiVersion and kind"]),
        ("apiVersion: batch/v1\nkind: Jobz\n", 400, ['"Jobz"', "batch/v1"]),
        ("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n", 400, ["cluster-scoped"]),
        (
            job("bad", "busy", 4, "1h").replace("restartPolicy: Never", "restartPolicy: Bogus"),
            422,
            ["restartPolicy", "Bogus"],
        ),
        (
            job("elsewhere", "busy", 4, "1h").replace("namespace: team", "namespace: other"),
            400,
            ["namespace"],
        ),
        (job("running", "busy", 4, "1h"), 422, ["Job team/running", "already exists"]),
    ],
)
def test_served_prediction_bad_input(srv: Served, body: str, code: int, words: list[str]) -> None:
    got, status = _post(srv, body, "admin-token")
    assert got == code, status
    assert status["kind"] == "Status" and status["code"] == code
    for w in words:
        assert w in status["message"], status["message"]
