"""SelfSubjectAccessReview over HTTP in JSON, a bad review body (400 naming the
field), RBAC's Forbidden Status details and impersonation refused."""

from __future__ import annotations

from pathlib import Path

from tests.server.test_serve_process import _call

SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"


def test_json_review_bad_body_and_forbidden_details(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    tokens = tmp_path / "tokens.csv"
    tokens.write_text('bob-token,bob,2,"team-a"\n')
    srv = serve("--token-auth-file", str(tokens))
    ask = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "list", "resource": "pods", "namespace": "x"}},
    }
    code, got = _call(srv, SSAR, method="POST", body=ask, token="bob-token", cert=False)
    assert code == 201 and got["status"] == {"allowed": False}
    code, got = _call(srv, SSAR, method="POST", body=ask)  # the admin, system:masters
    assert code == 201 and got["status"]["allowed"] is True
    bad = {**ask, "spec": {}}
    code, got = _call(srv, SSAR, method="POST", body=bad, token="bob-token", cert=False)
    assert code == 400 and got["reason"] == "BadRequest"
    assert got["message"] == (
        "SelfSubjectAccessReview.spec: exactly one of resourceAttributes or "
        "nonResourceAttributes must be specified"
    )
    code, got = _call(
        srv, "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq", token="bob-token", cert=False
    )
    assert code == 403 and got["details"] == {
        "name": "cq",
        "group": "kueue.x-k8s.io",
        "kind": "clusterqueues",
    }
