"""Writes a fuzzer found to break ``kuota serve`` (real kubectl): patches
that turn an object or its metadata into a scalar answered 400 (they were
500s with a traceback), Go int32 counts past 2^31 refused as kube-apiserver
refuses them (they were stored, and a ReplicaSet of 2^63 replicas froze the
server), and a set scaled far beyond its nodes grown in the controllers'
bursts (500 pods a sync) while the API keeps answering."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from tests.server.conftest import Served, needs_kubectl, start_server
from tests.server.test_serve_process import _ctx

pytestmark = needs_kubectl

RS = """
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
"""


@pytest.fixture
def served(tmp_path) -> Iterator[Served]:  # type: ignore[no-untyped-def]
    s = start_server(tmp_path / "state", home=tmp_path / "home")
    try:
        s.ok("apply", "-f", "-", input=RS)
        yield s
    finally:
        s.stop()


def test_a_patch_that_makes_metadata_a_scalar_is_a_bad_request(served: Served) -> None:
    for kind, patch in (
        ("merge", '{"metadata": "x"}'),
        ("merge", '{"metadata": [1]}'),
        ("json", '[{"op": "replace", "path": "/metadata", "value": 5}]'),
        ("strategic", '{"metadata": "x"}'),
    ):
        r = served.kubectl("patch", "rs", "web", "--type", kind, "-p", patch)
        assert r.returncode == 1, (kind, patch, r.stdout)
        assert "metadata must be an object" in r.stderr, (kind, patch, r.stderr)
        assert "InternalError" not in r.stderr and "Internal Server Error" not in r.stderr
    # The object is untouched and the server still answers.
    rs = served.json("get", "rs", "web")
    assert rs["metadata"]["name"] == "web" and rs["spec"]["replicas"] == 1


def test_a_server_side_apply_with_a_scalar_or_null_metadata(served: Served) -> None:
    """(kubectl builds its apply patches from parsed objects: sent raw here.)"""
    path = "/apis/apps/v1/namespaces/default/replicasets/web?fieldManager=fz"
    for meta, want in (("x", 400), (None, 200)):
        body = json.dumps({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta})
        req = urllib.request.Request(
            served.url + path,
            data=body.encode(),
            method="PATCH",
            headers={"Content-Type": "application/apply-patch+yaml", "Accept": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, context=_ctx(served), timeout=30) as resp:
                code, reply = resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as err:
            code, reply = err.code, json.loads(err.read())
        assert code == want, (meta, code, reply)
        if want == 400:
            assert reply["reason"] == "BadRequest"
            assert reply["message"] == "metadata must be an object"
        else:  # (null: no metadata given; the live object's stays)
            assert reply["metadata"]["name"] == "web"


@pytest.mark.parametrize("value", [2**31, 2**63])
def test_replicas_past_int32_are_refused(served: Served, value: int) -> None:
    r = served.kubectl(
        "patch",
        "rs",
        "web",
        "--type",
        "json",
        "-p",
        json.dumps([{"op": "replace", "path": "/spec/replicas", "value": value}]),
    )
    assert r.returncode == 1
    assert (
        f'The ReplicaSet "web" is invalid: spec.replicas: Invalid value: {value}: '
        "must be a 32-bit integer"
    ) in r.stderr, r.stderr
    assert served.json("get", "rs", "web")["spec"]["replicas"] == 1


def test_a_set_scaled_past_a_burst_is_grown_and_shrunk_in_bursts(served: Served) -> None:
    """3,000 replicas: the ReplicaSet controller creates and deletes 500 pods
    a sync (kube's BurstReplicas) and syncs again until the count is met;
    the server answers between its reconcile rounds."""
    served.ok("scale", "rs", "web", "--replicas=3000")
    served.ok("wait", "rs/web", "--for=jsonpath={.status.replicas}=3000", "--timeout=300s")
    pods = served.ok("get", "pods", "-l", "app=web", "--no-headers", "-o", "name")
    assert len(pods.split()) == 3000
    served.ok("scale", "rs", "web", "--replicas=2")
    served.ok("wait", "rs/web", "--for=jsonpath={.status.replicas}=2", "--timeout=300s")


JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: wide, namespace: default}
spec:
  parallelism: 1200
  completions: 1200
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x}]
"""


def test_a_wide_job_is_created_in_bursts_to_its_parallelism(served: Served) -> None:
    """A Job no queue manages, 1,200 wide: the Job controller creates 500
    pods a sync (kube's MaxPodCreateDeletePerSync) until all are there."""
    served.ok("apply", "-f", "-", input=JOB)
    served.ok("wait", "job/wide", "--for=jsonpath={.status.active}=1200", "--timeout=300s")
    pods = served.ok("get", "pods", "-l", "job-name=wide", "--no-headers", "-o", "name")
    assert len(pods.split()) == 1200
