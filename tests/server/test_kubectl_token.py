"""``kubectl create token SA``: a TokenRequest (in protobuf) to the
``serviceaccounts/NAME/token`` subresource, answered as kube-apiserver
answers it; the token is the account's identity as a bearer token (RBAC
applies to ``system:serviceaccount:NS:NAME``), until it expires, the
account is deleted, or its audience is not the server's; it outlives a
restart of the server on the same state."""

from __future__ import annotations

from pathlib import Path

from tests.server.conftest import needs_kubectl, start_server


@needs_kubectl
def test_kubectl_create_token_is_the_service_accounts_identity(tmp_path: Path) -> None:
    state, home = tmp_path / "state", tmp_path / "home"
    srv = start_server(state, home=home)
    try:
        srv.ok("create", "serviceaccount", "bot")
        uid = srv.json("get", "serviceaccount", "bot")["metadata"]["uid"]
        token = srv.ok("create", "token", "bot").strip()
        who = srv.ok("--token", token, "auth", "whoami", "-o", "json")
        assert '"username": "system:serviceaccount:default:bot"' in who, who
        assert f'"uid": "{uid}"' in who
        assert '"system:serviceaccounts:default"' in who
        # RBAC applies to the account: nothing is bound to it yet.
        r = srv.kubectl("--token", token, "get", "pods")
        assert r.returncode == 1
        assert 'User "system:serviceaccount:default:bot" cannot list resource "pods"' in r.stderr
        srv.ok(
            "create",
            "rolebinding",
            "bot-view",
            "--clusterrole=view",
            "--serviceaccount=default:bot",
        )
        srv.ok("--token", token, "get", "pods")
        # kube-apiserver's refusals, word for word.
        r = srv.kubectl("create", "token", "bot", "--duration=1m")
        assert r.returncode == 1
        assert (
            'TokenRequest.authentication.k8s.io "bot" is invalid: spec.expirationSeconds: '
            "Invalid value: 60: may not specify a duration less than 10 minutes"
        ) in r.stderr, r.stderr
        r = srv.kubectl("create", "token", "nobody")
        assert r.returncode == 1 and 'serviceaccounts "nobody" not found' in r.stderr, r.stderr
        # A token for another audience is not one for this server.
        other = srv.ok("create", "token", "bot", "--audience=vault").strip()
        r = srv.kubectl("--token", other, "get", "pods")
        assert r.returncode == 1 and "Unauthorized" in r.stderr, r.stderr
    finally:
        srv.stop()
    srv = start_server(state, home=home)  # the same state: the token still works
    try:
        srv.ok("--token", token, "get", "pods")
        srv.ok("delete", "serviceaccount", "bot")
        r = srv.kubectl("--token", token, "get", "pods")
        assert r.returncode == 1 and "Unauthorized" in r.stderr, r.stderr
    finally:
        srv.stop()
