"""apiregistration.k8s.io/v1 APIService through the real kubectl: stored
as kube-apiserver stores it (Kueue's manifests register its visibility
server so), and refused with kube-aggregator's field errors."""

from __future__ import annotations

from pathlib import Path

from tests.server.conftest import needs_kubectl, start_server

GOOD = """
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta2.visibility.kueue.x-k8s.io}
spec:
  group: visibility.kueue.x-k8s.io
  version: v1beta2
  groupPriorityMinimum: 100
  versionPriority: 100
  insecureSkipTLSVerify: true
  service: {name: kueue-visibility-server, namespace: kueue-system}
"""


@needs_kubectl
def test_apiservices_stored_and_validated(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "state", home=tmp_path / "home")
    try:
        srv.ok("apply", "-f", "-", input=GOOD)
        got = srv.json("get", "apiservices", "v1beta2.visibility.kueue.x-k8s.io")
        assert got["spec"]["insecureSkipTLSVerify"] is True
        assert got["spec"]["service"]["name"] == "kueue-visibility-server"
        bad = (
            GOOD.replace("name: v1beta2.visibility", "name: v1.visibility")
            .replace("versionPriority: 100", "versionPriority: 0")
            .replace("insecureSkipTLSVerify: true", "insecureSkipTLSVerify: true\n  caBundle: Zm9v")
        )
        r = srv.kubectl("apply", "-f", "-", input=bad)
        assert r.returncode == 1, r.stdout + r.stderr
        for text in (
            'metadata.name: Invalid value: "v1.visibility.kueue.x-k8s.io": must be '
            '"v1beta2.visibility.kueue.x-k8s.io"',
            "spec.versionPriority: Invalid value: 0: must be positive and less than 1000",
            "spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present",
        ):
            assert text in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
    finally:
        srv.stop()
