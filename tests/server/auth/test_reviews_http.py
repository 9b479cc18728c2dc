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


def test_delegated_token_and_subject_access_reviews(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """What an extension API server (Kueue's visibility server) or a proxy
    in front of the API server asks: whose is this token (TokenReview), and
    may that user do this (SubjectAccessReview). Both need
    system:auth-delegator; a batch user may ask neither."""
    tokens = tmp_path / "tokens.csv"
    tokens.write_text('bob-token,bob,2,"team-a"\nproxy-token,proxy,3,""\n')
    srv = serve("--token-auth-file", str(tokens))
    tr = "/apis/authentication.k8s.io/v1/tokenreviews"
    sar = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview"}
    code, got = _call(srv, tr, method="POST", body={**review, "spec": {"token": "bob-token"}})
    assert code == 201, got
    assert got["status"]["authenticated"] is True
    assert got["status"]["user"] == {
        "username": "bob",
        "uid": "2",
        "groups": ["team-a", "system:authenticated"],
    }
    assert got["spec"] == {"token": "bob-token"}  # the review as sent, as kube-apiserver
    code, got = _call(srv, tr, method="POST", body={**review, "spec": {"token": "nope"}})
    assert code == 201 and got["status"]["authenticated"] is False
    code, got = _call(srv, tr, method="POST", body={**review, "spec": {"token": 5}})
    assert code == 400 and "TokenReview.spec.token" in got["message"]
    ask = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": "bob",
            "groups": ["team-a", "system:authenticated"],
            "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "x"},
        },
    }
    code, got = _call(srv, sar, method="POST", body=ask)
    assert code == 201 and got["status"]["allowed"] is False, got
    admin = {**ask, "spec": {**ask["spec"], "user": "root", "groups": ["system:masters"]}}
    code, got = _call(srv, sar, method="POST", body=admin)
    assert code == 201 and got["status"]["allowed"] is True, got
    code, got = _call(srv, sar, method="POST", body={**ask, "spec": {"resourceAttributes": {}}})
    assert code == 400 and "SubjectAccessReview.spec.user" in got["message"]
    # Not for everyone: a user without system:auth-delegator is refused both.
    for path, body in ((tr, {**review, "spec": {"token": "bob-token"}}), (sar, ask)):
        code, got = _call(srv, path, method="POST", body=body, token="bob-token", cert=False)
        assert code == 403, got
    # Bound to it, the proxy's user may.
    bind = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "proxy-delegator"},
        "subjects": [{"kind": "User", "name": "proxy", "apiGroup": "rbac.authorization.k8s.io"}],
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "system:auth-delegator",
        },
    }
    crb = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"
    code, got = _call(srv, crb, method="POST", body=bind)
    assert code == 201, got
    code, got = _call(srv, sar, method="POST", body=ask, token="proxy-token", cert=False)
    assert code == 201 and got["status"]["allowed"] is False
