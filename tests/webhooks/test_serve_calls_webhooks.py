"""``kuota serve`` calls the admission webhooks registered in
Mutating/ValidatingWebhookConfigurations as kube-apiserver does: kuota's own
webhook server (Kueue's paths, over HTTPS, trusted through caBundle) refuses
an invalid ClusterQueue and mutates a Job; a webhook that outlives
timeoutSeconds fails the request under failurePolicy Fail and is skipped
under Ignore; selectors choose which writes a webhook sees."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import yaml
from aiohttp import web
from tests.server.conftest import EXAMPLES, Served, needs_kubectl, start_server
from tests.webhooks.conftest import https_app

from kuota.cli.world import load_world
from kuota.embedded.controlplane import ControlPlane
from kuota.webhooks.server import webhook_app

pytestmark = needs_kubectl

# The webhook server's Kueue manages Jobs without a queue name (suspends them
# at creation); serve's own does not: a suspended Job shows the webhook's patch.
CONFIG = """
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
manageJobsWithoutQueueName: true
"""

JOB = """
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}, namespace: vision, labels: {labels}}}
spec:
  suspend: false
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: m, image: x, resources: {{requests: {{cpu: "1"}}}}}}]
"""

BAD_CQ = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: bad}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: a100, resources: [{name: cpu, nominalQuota: "-1"}]}]
"""


def _slow_app() -> web.Application:
    """A webhook that answers after 3 s (registered with timeoutSeconds 1)."""

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(3)
        review = await request.json()
        return web.json_response({"response": {"uid": review["request"]["uid"], "allowed": True}})

    app = web.Application()
    app.router.add_post("/slow", slow)
    return app


def _configuration(kind: str, hooks: list[dict]) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": hooks[0]["name"]},
            "webhooks": hooks,
        }
    )


def _hook(name: str, url: str, ca: bytes, group: str, resource: str, **extra: object) -> dict:
    return {
        "name": name,
        "clientConfig": {"url": url, "caBundle": base64.b64encode(ca).decode()},
        "rules": [
            {
                "operations": ["CREATE", "UPDATE"],
                "apiGroups": [group],
                "apiVersions": ["*"],
                "resources": [resource],
            }
        ],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        **extra,
    }


@pytest.fixture(scope="module")
def setup(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Served, str, bytes, str, bytes]]:
    d = tmp_path_factory.mktemp("calls")
    (d / "home").mkdir()
    (d / "config.yaml").write_text(CONFIG)
    world = load_world([str(d / "config.yaml"), str(EXAMPLES / "quickstart" / "world.yaml")])
    cp = ControlPlane(world.config, datetime(2026, 1, 1, tzinfo=UTC))
    kueue = webhook_app(cp.kueue_webhooks, world.config.feature_gates)
    s = start_server(d / "state", home=d / "home")
    try:
        with (
            https_app(kueue, d / "kueue-certs") as (url, ca),
            https_app(_slow_app(), d / "slow-certs") as (slow_url, slow_ca),
        ):
            s.ok("apply", "-f", str(EXAMPLES / "quickstart" / "world.yaml"))
            yield s, url, ca, slow_url, slow_ca
    finally:
        s.stop()


def test_kueue_webhook_denies_through_serve(setup: tuple) -> None:
    s, url, ca, _, _ = setup
    conf = _configuration(
        "ValidatingWebhookConfiguration",
        [
            _hook(
                "vclusterqueue.kb.io",
                url + "/validate-kueue-x-k8s-io-v1beta2-clusterqueue",
                ca,
                "kueue.x-k8s.io",
                "clusterqueues",
            )
        ],
    )
    s.ok("apply", "-f", "-", input=conf)
    r = s.kubectl("create", "-f", "-", input=BAD_CQ)
    assert r.returncode != 0
    assert 'admission webhook "vclusterqueue.kb.io" denied the request' in r.stderr, r.stderr
    assert "nominalQuota" in r.stderr
    # The webhook allows a valid one (serve's world has team-vision).
    out = s.ok("label", "clusterqueue", "team-vision", "checked=yes")
    assert "labeled" in out
    s.ok("delete", "validatingwebhookconfiguration", "vclusterqueue.kb.io")


def test_kueue_webhook_mutates_through_serve(setup: tuple) -> None:
    s, url, ca, _, _ = setup
    conf = _configuration(
        "MutatingWebhookConfiguration",
        [
            _hook(
                "mjob.kb.io",
                url + "/mutate-batch-v1-job",
                ca,
                "batch",
                "jobs",
                # only Jobs labelled for it: the others show serve's own admission
                objectSelector={"matchLabels": {"hooked": "yes"}},
            )
        ],
    )
    s.ok("apply", "-f", "-", input=conf)

    # --dry-run=server answers the object as admitted, before serve's
    # controllers act on it (they start an unmanaged Job).
    def created(name: str, labels: str) -> dict:
        out = s.ok(
            "create",
            "--dry-run=server",
            "-o",
            "json",
            "-f",
            "-",
            input=JOB.format(name=name, labels=labels),
        )
        return json.loads(out)

    assert created("hooked", "{hooked: 'yes'}")["spec"]["suspend"] is True
    assert created("plain", "{hooked: 'no'}")["spec"]["suspend"] is False
    s.ok("delete", "mutatingwebhookconfiguration", "mjob.kb.io")


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
def test_a_webhook_timing_out_honours_failure_policy(setup: tuple, policy: str) -> None:
    s, _, _, slow_url, slow_ca = setup
    name = f"slow-{policy.lower()}.kb.io"
    conf = _configuration(
        "ValidatingWebhookConfiguration",
        [
            _hook(
                name,
                slow_url + "/slow",
                slow_ca,
                "",
                "configmaps",
                failurePolicy=policy,
                timeoutSeconds=1,
            )
        ],
    )
    conf = conf.replace("configmaps", "namespaces")
    s.ok("apply", "-f", "-", input=conf)
    try:
        r = s.kubectl(
            "create",
            "-f",
            "-",
            input=f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: ns-{policy.lower()}}}\n",
        )
        if policy == "Fail":
            assert r.returncode != 0
            assert f'failed calling webhook "{name}"' in r.stderr, r.stderr
            assert "context deadline exceeded" in r.stderr
        else:
            assert r.returncode == 0, r.stderr
    finally:
        s.ok("delete", "validatingwebhookconfiguration", name)
