"""The HTTPS webhook server as kube-apiserver calls it: AdmissionReview v1
POSTed to Kueue's paths, answered by the embedded plane's own admission hooks
(a denial with Kueue's field errors; a JSONPatch for a mutation), behind a
certificate issued by Kueue's internal certificate management."""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from tests.webhooks.conftest import https_app

from kuota.cli.world import load_world
from kuota.embedded.controlplane import ControlPlane
from kuota.webhooks import certs
from kuota.webhooks.server import webhook_app

REPO = Path(__file__).resolve().parents[2]
WORLD = REPO / "examples" / "quickstart" / "world.yaml"


@pytest.fixture(scope="module")
def hook_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, bytes]]:
    world = load_world([str(WORLD)])
    cp = ControlPlane(world.config, datetime(2026, 1, 1, tzinfo=UTC))
    app = webhook_app(cp.kueue_webhooks, world.config.feature_gates)
    with https_app(app, tmp_path_factory.mktemp("certs")) as server:
        yield server


def _post(server: tuple[str, bytes], path: str, body: Any) -> tuple[int, dict[str, Any]]:
    url, ca = server
    ctx = ssl.create_default_context(cadata=ca.decode())  # the injected caBundle
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(
        url + path, data=data, headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _review(op: str, obj: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": "u-1", "operation": op, "object": obj, **extra},
    }


JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {
        "name": "j",
        "namespace": "vision",
        "labels": {"kueue.x-k8s.io/queue-name": "default"},
    },
    "spec": {
        "parallelism": 1,
        "completions": 1,
        "suspend": False,
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {"name": "m", "image": "x", "resources": {"requests": {"cpu": "1"}}}
                ],
            }
        },
    },
}


def test_mutating_job_webhook_answers_a_json_patch(hook_server: tuple[str, bytes]) -> None:
    code, review = _post(hook_server, "/mutate-batch-v1-job", _review("CREATE", JOB))
    assert code == 200
    resp = review["response"]
    assert resp["uid"] == "u-1" and resp["allowed"] is True
    assert resp["patchType"] == "JSONPatch"
    patch = json.loads(base64.b64decode(resp["patch"]))
    # Kueue's job webhook suspends a queued Job at creation.
    assert {"op": "replace", "path": "/spec/suspend", "value": True} in patch


def test_validating_webhook_denies_with_field_errors(hook_server: tuple[str, bytes]) -> None:
    cq = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "bad"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [
                        {"name": "a100", "resources": [{"name": "cpu", "nominalQuota": "-1"}]}
                    ],
                }
            ]
        },
    }
    code, review = _post(
        hook_server, "/validate-kueue-x-k8s-io-v1beta2-clusterqueue", _review("CREATE", cq)
    )
    assert code == 200
    resp = review["response"]
    assert resp["allowed"] is False
    assert resp["status"]["code"] == 403 and resp["status"]["reason"] == "Forbidden"
    assert "nominalQuota" in resp["status"]["message"]


def test_valid_object_is_allowed_without_patch(hook_server: tuple[str, bytes]) -> None:
    code, review = _post(hook_server, "/validate-batch-v1-job", _review("CREATE", JOB))
    assert code == 200 and review["response"] == {"uid": "u-1", "allowed": True}


def test_a_body_that_is_no_admission_review_is_refused_naming_the_path(
    hook_server: tuple[str, bytes],
) -> None:
    code, body = _post(hook_server, "/validate-batch-v1-job", b"{}")
    assert code == 400
    assert body["error"].startswith("/validate-batch-v1-job: kind")


def test_every_kueue_path_is_served(hook_server: tuple[str, bytes]) -> None:
    for path in (
        "/mutate--v1-pod",
        "/validate-kueue-x-k8s-io-v1beta2-cohort",
        "/mutate-ray-io-v1-rayjob",
    ):
        code, _ = _post(hook_server, path, b"{}")
        assert code == 400, path  # routed (a 404 would be an unknown path)


def test_secret_round_trip_keeps_the_ca(hook_server: tuple[str, bytes]) -> None:
    names = certs.serving_names()
    first = certs.generate(names)
    again = certs.from_secret_data(first.secret_data(), names)
    assert again.ca_crt == first.ca_crt  # a filled Secret is reused, not rotated
    other = certs.from_secret_data(first.secret_data(), ("elsewhere.svc",))
    assert other.ca_crt != first.ca_crt  # a certificate for other names is reissued
    conf = {"webhooks": [{"name": "vjob.kb.io", "clientConfig": {"service": {"name": "s"}}}]}
    injected = certs.inject_ca_bundle(conf, first.ca_bundle)
    assert injected["webhooks"][0]["clientConfig"]["caBundle"] == first.ca_bundle
    assert injected["webhooks"][0]["clientConfig"]["service"] == {"name": "s"}
