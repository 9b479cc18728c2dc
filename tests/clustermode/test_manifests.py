"""``kuota manifests``: what it prints is accepted by an API server
(``kubectl apply --dry-run=server`` against ``kuota serve``), and the
manager's RBAC in it is all ``kuota controller`` needs: a controller holding
only that ServiceAccount's rights runs a world to its end against serve,
which enforces RBAC (a missing rule is a 403 and a run that never ends)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from tests.clustermode.twoproc import (
    free_port,
    outcome,
    start_controller,
    wait_for,
    webhook_admitted,
)
from tests.server.conftest import EXAMPLES, needs_kubectl, start_server

from kuota.cli.main import main

SA_USER = "system:serviceaccount:kueue-system:kueue-controller-manager"
SA_GROUPS = "system:serviceaccounts,system:serviceaccounts:kueue-system"


def _manifests(*args: str) -> list[dict[str, Any]]:
    r = CliRunner().invoke(main, ["manifests", *args])
    assert r.exit_code == 0, r.output
    return [d for d in yaml.safe_load_all(r.output) if d]


def _named(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name)


def test_manifests_install_kuota_as_kueue_is_installed() -> None:
    docs = _manifests()
    dep = _named(docs, "Deployment", "kueue-controller-manager")
    assert dep["spec"]["replicas"] == 2
    pod = dep["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["serviceAccountName"] == "kueue-controller-manager"
    cfg = yaml.safe_load(
        _named(docs, "ConfigMap", "kueue-manager-config")["data"]["controller_manager_config.yaml"]
    )
    assert cfg["leaderElection"]["leaderElect"] is True
    hooks = _named(docs, "ValidatingWebhookConfiguration", "kueue-validating-webhook-configuration")
    paths = {h["clientConfig"]["service"]["path"] for h in hooks["webhooks"]}
    assert {"/validate-batch-v1-job", "/validate-kueue-x-k8s-io-v1beta2-workload"} <= paths
    assert {h["clientConfig"]["service"]["name"] for h in hooks["webhooks"]} == {
        "kueue-webhook-service"
    }
    kinds = {d["kind"] for d in docs}
    assert "ServiceMonitor" not in kinds
    # Kueue's visibility API behind the aggregator: two APIServices, a Service
    # to the manager's port 8082, its delegated-auth RBAC.
    for v in ("v1beta1", "v1beta2"):
        spec = _named(docs, "APIService", f"{v}.visibility.kueue.x-k8s.io")["spec"]
        assert spec["service"] == {"name": "kueue-visibility-server", "namespace": "kueue-system"}
    vis = _named(docs, "Service", "kueue-visibility-server")["spec"]["ports"]
    assert vis == [{"name": "https", "port": 443, "targetPort": 8082, "protocol": "TCP"}]
    ports = dep["spec"]["template"]["spec"]["containers"][0]["ports"]
    assert {"containerPort": 8082, "name": "visibility", "protocol": "TCP"} in ports
    reader = _named(docs, "RoleBinding", "kueue-visibility-server-auth-reader")
    assert reader["metadata"]["namespace"] == "kube-system"
    assert {"kueue-batch-admin-role", "kueue-batch-user-role"} <= {
        d["metadata"]["name"] for d in docs if d["kind"] == "ClusterRole"
    }
    # OpenShift: managed namespaces only, the SCC picks the user id.
    osd = _manifests("--openshift", "--service-monitor")
    job_hook = next(
        h
        for h in _named(
            osd, "MutatingWebhookConfiguration", "kueue-mutating-webhook-configuration"
        )["webhooks"]
        if h["name"] == "mjob.kb.io"
    )
    assert job_hook["namespaceSelector"] == {"matchLabels": {"kueue.openshift.io/managed": "true"}}
    osdep = _named(osd, "Deployment", "kueue-controller-manager")
    assert "runAsUser" not in osdep["spec"]["template"]["spec"]["securityContext"]
    assert "ServiceMonitor" in {d["kind"] for d in osd}


@needs_kubectl
@pytest.mark.parametrize("flags", [(), ("--openshift",)])
def test_kubectl_apply_dry_run_server_accepts_the_manifests(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    docs = _manifests(*flags)
    served = start_server(tmp_path / "state", "--without-kueue", home=tmp_path / "home")
    try:
        crds = [d for d in docs if d["kind"] == "CustomResourceDefinition"]
        rest = [d for d in docs if d["kind"] != "CustomResourceDefinition"]
        # serve publishes no OpenAPI document of apiextensions.k8s.io, which
        # kubectl's client-side check of a CRD needs: the CRDs go without it
        # (the server still decodes them), everything else strictly.
        out = served.ok(
            "apply",
            "--dry-run=server",
            "--validate=false",
            "-f",
            "-",
            input=yaml.safe_dump_all(crds),
        )
        assert out.count("(server dry run)") == len(crds)
        out = served.ok(
            "apply",
            "--dry-run=server",
            "--validate=strict",
            "-f",
            "-",
            input=yaml.safe_dump_all(rest),
        )
        assert out.count("(server dry run)") == len(rest)
        # A dry run stores nothing.
        r = served.kubectl("get", "deployment", "-n", "kueue-system", "kueue-controller-manager")
        assert r.returncode != 0 and "NotFound" in r.stderr
    finally:
        served.stop()


def _token_kubeconfig(admin: Path, token: str, dst: Path) -> Path:
    kc = yaml.safe_load(admin.read_text())
    for u in kc["users"]:
        u["user"] = {"token": token}
    dst.write_text(yaml.safe_dump(kc))
    return dst


@needs_kubectl
def test_the_manager_rbac_is_all_the_controller_needs(tmp_path: Path) -> None:
    token = "kuota-manager-token-for-the-test"
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(f'{token},{SA_USER},uid-sa,"{SA_GROUPS}"\n')
    world = webhook_admitted(EXAMPLES / "quickstart", tmp_path / "world", compress=30)
    served = start_server(
        tmp_path / "state",
        str(world),
        "--without-kueue",
        "--speed",
        "100",
        "--token-auth-file",
        str(tokens),
        home=tmp_path / "home",
    )
    docs = _manifests()
    rbac = [
        d
        for d in docs
        if d["kind"] in ("ServiceAccount", "Role", "RoleBinding", "ClusterRoleBinding")
        or (d["kind"] == "ClusterRole" and d["metadata"]["name"] == "kueue-manager-role")
    ]
    ctl = None
    try:
        # Before the RBAC: the token is known, its user may do nothing.
        kc = _token_kubeconfig(served.kubeconfig, token, tmp_path / "sa-kubeconfig")
        denied = served.kubectl("--kubeconfig", str(kc), "get", "workloads", "-A")
        assert denied.returncode != 0 and "forbidden" in denied.stderr.lower(), denied
        served.ok("apply", "-f", "-", input=yaml.safe_dump_all(rbac))
        ctl = start_controller(
            served, "--kubeconfig", str(kc), "--webhook-url", f"https://127.0.0.1:{free_port()}"
        )
        ctl.wait_line("leading", 120)
        n = sum(
            1
            for f in world.glob("*.yaml")
            for d in yaml.safe_load_all(f.read_text())
            if d and d.get("kind") == "Job"
        )

        def finished() -> Any:
            got = outcome(served.json("get", "workloads", "-A")["items"])
            done = sum(1 for v in got.values() if v["finished"])
            return got if len(got) == n and done == n else f"{done} of {n} finished"

        wait_for(finished, 240, "every workload finished")
    finally:
        if ctl is not None:
            ctl.stop()
        served.stop()
    logs = "".join(ctl.logs if ctl else [])
    assert "forbidden" not in logs.lower() and " 403" not in logs, logs[-3000:]


@needs_kubectl
def test_in_cluster_webhooks_take_their_certificates_from_the_secret(tmp_path: Path) -> None:
    """As Kueue's internal certificate management: the manager fills the
    installed Secret, serves with it behind the Service's port and injects
    its CA into the installed webhook configurations; a second replica
    takes the same certificates."""
    import base64
    import ssl
    import urllib.request

    token = "kuota-manager-token-for-the-test"
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(f'{token},{SA_USER},uid-sa,"{SA_GROUPS}"\n')
    served = start_server(
        tmp_path / "state",
        "--without-kueue",
        "--token-auth-file",
        str(tokens),
        home=tmp_path / "home",
    )
    docs = _manifests()
    keep = ("Namespace", "ServiceAccount", "Role", "RoleBinding", "ClusterRoleBinding", "Secret")
    installed = [
        d
        for d in docs
        if d["kind"] in keep
        or d["kind"].endswith("WebhookConfiguration")
        or (d["kind"] == "ClusterRole" and d["metadata"]["name"] == "kueue-manager-role")
    ]
    port = free_port()
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "config.kueue.x-k8s.io/v1beta2",
                "kind": "Configuration",
                "webhook": {"host": "127.0.0.1", "port": port},
            }
        )
    )
    ctls = []
    try:
        served.ok("apply", "-f", "-", input=yaml.safe_dump_all(installed))
        kc = _token_kubeconfig(served.kubeconfig, token, tmp_path / "sa-kubeconfig")
        ctls.append(start_controller(served, "--kubeconfig", str(kc), "--config", str(config)))
        ctls[0].wait_line("leading", 120)
        secret = served.json("get", "secret", "-n", "kueue-system", "kueue-webhook-server-cert")
        assert {"ca.crt", "ca.key", "tls.crt", "tls.key"} <= set(secret["data"])
        conf = served.json(
            "get", "validatingwebhookconfiguration", "kueue-validating-webhook-configuration"
        )
        assert {h["clientConfig"].get("caBundle") for h in conf["webhooks"]} == {
            secret["data"]["ca.crt"]
        }
        ca = base64.b64decode(secret["data"]["ca.crt"]).decode()
        ctx = ssl.create_default_context(cadata=ca)
        ctx.check_hostname = False  # the certificate names the Service, the test dials 127.0.0.1
        with urllib.request.urlopen(f"https://127.0.0.1:{port}/healthz", context=ctx) as r:
            assert r.read() == b"ok"
        ctls[0].stop()
        ctls.append(start_controller(served, "--kubeconfig", str(kc), "--config", str(config)))
        ctls[1].wait_line("leading", 120)
        again = served.json("get", "secret", "-n", "kueue-system", "kueue-webhook-server-cert")
        assert again["data"] == secret["data"]
    finally:
        for c in ctls:
            c.stop()
        served.stop()
    logs = "".join(line for c in ctls for line in c.logs)
    assert "forbidden" not in logs.lower(), logs[-3000:]
