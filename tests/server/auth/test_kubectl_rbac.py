"""RBAC through the real kubectl against ``kuota serve``: ``auth can-i``
(protobuf SelfSubjectAccessReview) for the admin and for a Kueue batch user
from the token file, the API server's Forbidden text, impersonation, and
ClusterRole aggregation extending ``edit``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.server.conftest import Served, needs_kubectl, start_server

pytestmark = needs_kubectl

_SETUP = """
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-b}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: alice-batch-user, namespace: team-a}
subjects: [{kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}]
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: kueue-batch-user-role}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: carol-edit, namespace: team-b}
subjects: [{kind: Group, name: editors, apiGroup: rbac.authorization.k8s.io}]
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: edit}
"""

_JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: j1, namespace: NS, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
"""


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    d = tmp_path_factory.mktemp("rbac")
    tokens = d / "tokens.csv"
    tokens.write_text('alice-token,alice,1,"team-a-users"\ncarol-token,carol,2,"editors"\n')
    s = start_server(d / "state", "--token-auth-file", str(tokens), home=d / "home")
    try:
        s.ok("apply", "-f", "-", input=_SETUP)
        yield s
    finally:
        s.stop()


def _can(srv: Served, *args: str) -> str:
    r = srv.kubectl("auth", "can-i", *args)
    assert r.returncode in (0, 1), r.stderr
    return r.stdout.strip()


def test_can_i_admin_and_batch_user(srv: Served) -> None:
    # The admin (client certificate, O=system:masters) may do anything.
    assert _can(srv, "delete", "clusterqueues") == "yes"
    # A batch user bound in team-a, by bearer token.
    tok = ("--token", "alice-token")
    assert _can(srv, "create", "jobs", "-n", "team-a", *tok) == "yes"
    assert _can(srv, "list", "localqueues", "-n", "team-a", *tok) == "yes"
    assert _can(srv, "get", "workloads", "-n", "team-a", *tok) == "yes"
    assert _can(srv, "create", "localqueues", "-n", "team-a", *tok) == "no"
    assert _can(srv, "create", "jobs", "-n", "team-b", *tok) == "no"
    assert _can(srv, "get", "clusterqueues", *tok) == "no"
    # The admin asking as alice (impersonation), as the brief's example does.
    assert _can(srv, "create", "jobs", "-n", "team-a", "--as", "alice") == "yes"
    assert _can(srv, "create", "jobs", "-n", "team-b", "--as", "alice") == "no"
    # Everyone authenticated may do discovery.
    assert _can(srv, "get", "/apis", *tok) == "yes"


def test_forbidden_create_has_the_api_servers_words(srv: Served) -> None:
    r = srv.kubectl(
        "create", "-f", "-", "--token", "alice-token", input=_JOB.replace("NS", "team-b")
    )
    assert r.returncode == 1
    assert r.stderr.strip() == (
        'Error from server (Forbidden): error when creating "STDIN": jobs.batch is forbidden: '
        'User "alice" cannot create resource "jobs" in API group "batch" in the namespace "team-b"'
    )
    out = srv.ok("create", "-f", "-", "--token", "alice-token", input=_JOB.replace("NS", "team-a"))
    assert "job.batch/j1 created" in out
    r = srv.kubectl("delete", "clusterqueue", "x", "--token", "alice-token")
    assert r.returncode == 1
    assert (
        'clusterqueues.kueue.x-k8s.io "x" is forbidden: User "alice" cannot delete resource '
        in (r.stderr)
    )


def test_aggregation_extends_edit(srv: Served, tmp_path: Path) -> None:
    tok = ("--token", "carol-token")
    assert _can(srv, "create", "jobs", "-n", "team-b", *tok) == "yes"  # edit has batch jobs
    assert _can(srv, "create", "resourceflavors", *tok) == "no"
    assert _can(srv, "create", "cronjobs.batch", "-n", "team-b", *tok) == "yes"
    assert _can(srv, "delete", "workloads", "-n", "team-b", *tok) == "no"
    srv.ok(
        "apply",
        "-f",
        "-",
        input="""
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: workloads-editor-for-edit
  labels: {rbac.authorization.k8s.io/aggregate-to-edit: "true"}
rules:
- apiGroups: [kueue.x-k8s.io]
  resources: [workloads]
  verbs: [delete]
""",
    )
    assert _can(srv, "delete", "workloads", "-n", "team-b", *tok) == "yes"
    # As the aggregation controller keeps it: the rule is in edit's (and admin's) rules.
    new_rule = {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"], "verbs": ["delete"]}
    assert new_rule in srv.json("get", "clusterrole", "edit")["rules"]
    assert new_rule in srv.json("get", "clusterrole", "admin")["rules"]  # edit aggregates to admin
    assert new_rule not in srv.json("get", "clusterrole", "view")["rules"]
    # The new role reaches edit only, not another namespace.
    assert _can(srv, "delete", "workloads", "-n", "team-a", *tok) == "no"


def test_auth_whoami(srv: Served) -> None:
    """``kubectl auth whoami`` (a SelfSubjectReview) names the token's user
    and groups, and the admin of the client certificate."""
    r = srv.kubectl("auth", "whoami", "-o", "json", "--token", "alice-token")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)["status"]["userInfo"]
    assert info["username"] == "alice" and info["uid"] == "1"
    assert info["groups"] == ["team-a-users", "system:authenticated"]
    r = srv.kubectl("auth", "whoami")
    assert r.returncode == 0 and "system:masters" in r.stdout, r.stdout + r.stderr
