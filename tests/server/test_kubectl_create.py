"""kubectl's imperative ``create`` subcommands against ``kuota serve``: they
send protobuf for core/v1 kinds (``create namespace`` is many users' first
command). Namespaces, ConfigMaps, Secrets and ServiceAccounts are read; any
other kind in protobuf is refused with 415 and a way round it."""

from __future__ import annotations

import base64
from pathlib import Path

from tests.server.conftest import needs_kubectl, start_server


@needs_kubectl
def test_kubectl_create_namespace_configmap_secret_serviceaccount(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "state", home=tmp_path / "home")
    try:
        srv.ok("create", "namespace", "team-x")
        assert srv.json("get", "namespace", "team-x")["metadata"]["name"] == "team-x"
        srv.ok(
            "create",
            "configmap",
            "cfg",
            "-n",
            "team-x",
            "--from-literal=mode=fast",
            "--from-literal=gpus=8",
        )
        cm = srv.json("get", "configmap", "cfg", "-n", "team-x")
        assert cm["data"] == {"mode": "fast", "gpus": "8"}
        srv.ok(
            "create",
            "secret",
            "generic",
            "db",
            "-n",
            "team-x",
            "--from-literal=password=s3cret",
            "--type=Opaque",
        )
        sec = srv.json("get", "secret", "db", "-n", "team-x")
        assert base64.b64decode(sec["data"]["password"]) == b"s3cret"
        assert sec["type"] == "Opaque"
        srv.ok("create", "serviceaccount", "builder", "-n", "team-x")
        assert srv.json("get", "serviceaccount", "builder", "-n", "team-x")["metadata"]["name"]
        # A name kube-apiserver refuses is refused with its field path.
        r = srv.kubectl("create", "namespace", "Not_Valid")
        assert r.returncode == 1 and "metadata.name" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
        # Other kinds in protobuf: refused, saying how to send them instead.
        r = srv.kubectl("create", "deployment", "web", "--image=nginx", "-n", "team-x")
        assert r.returncode == 1 and "--dry-run=client -o yaml" in r.stderr, r.stderr
        assert srv.kubectl("get", "deployment", "web", "-n", "team-x").returncode == 1
    finally:
        srv.stop()
