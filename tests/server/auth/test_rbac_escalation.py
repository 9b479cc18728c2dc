"""RBAC's escalation prevention through the real kubectl: a namespace admin
may write roles and bindings that grant what they hold, not more (the API
server's Forbidden text), unless a role gives them ``escalate`` or ``bind``;
RBAC kinds take kubectl's strategic merge patches, as built-in kinds."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.server.conftest import Served, needs_kubectl, start_server

pytestmark = needs_kubectl

DANA = ("--token", "dana-token")
GROUPS = '(groups=["admins" "system:authenticated"])'

SETUP = """
apiVersion: v1
kind: Namespace
metadata: {name: team-c}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: dana-admin, namespace: team-c}
subjects: [{kind: Group, name: admins, apiGroup: rbac.authorization.k8s.io}]
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: admin}
"""

ROLE = """
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {{name: {name}, namespace: team-c}}
rules:
- apiGroups: [{group}]
  resources: [{resource}]
  verbs: [{verbs}]
"""

BINDING = """
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {{name: {name}, namespace: team-c}}
subjects: [{{kind: User, name: erin, apiGroup: rbac.authorization.k8s.io}}]
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: {role}}}
"""


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    d = tmp_path_factory.mktemp("escalation")
    tokens = d / "tokens.csv"
    tokens.write_text('dana-token,dana,1,"admins"\n')
    s = start_server(d / "state", "--token-auth-file", str(tokens), home=d / "home")
    try:
        s.ok("apply", "-f", "-", input=SETUP)
        yield s
    finally:
        s.stop()


def test_a_role_may_grant_only_what_its_writer_holds(srv: Served) -> None:
    held = ROLE.format(name="job-runner", group="batch", resource="jobs", verbs="get, create")
    assert "role.rbac.authorization.k8s.io/job-runner created" in srv.ok(
        "apply", *DANA, "-f", "-", input=held
    )
    more = ROLE.format(
        name="cq-deleter", group="kueue.x-k8s.io", resource="clusterqueues", verbs="get, delete"
    )
    r = srv.kubectl("apply", *DANA, "-f", "-", input=more)
    assert r.returncode == 1
    assert r.stderr.strip() == (
        'Error from server (Forbidden): error when creating "STDIN": '
        'roles.rbac.authorization.k8s.io "cq-deleter" is forbidden: user "dana" '
        f"{GROUPS} is attempting to grant RBAC permissions not currently held:\n"
        # (Kueue's viewer roles aggregated into admin give her "get" already.)
        '{APIGroups:["kueue.x-k8s.io"], Resources:["clusterqueues"], Verbs:["delete"]}'
    )
    assert srv.kubectl("get", "role", "-n", "team-c", "cq-deleter").returncode == 1
    # Widening a role she wrote is the same refusal (an update).
    wider = ROLE.format(name="job-runner", group="batch", resource="jobs", verbs="get, create")
    wider = wider.replace(
        "verbs: [get, create]",
        "verbs: [get, create]\n- {apiGroups: ['*'], resources: ['*'], verbs: ['*']}",
    )
    r = srv.kubectl("apply", *DANA, "-f", "-", input=wider)
    assert r.returncode == 1 and "is attempting to grant RBAC permissions" in r.stderr, r.stderr
    assert '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}' in r.stderr
    # The cluster's admin (system:masters) may.
    srv.ok("apply", "-f", "-", input=more)


def test_a_binding_may_grant_only_what_its_writer_holds(srv: Served) -> None:
    out = srv.ok("apply", *DANA, "-f", "-", input=BINDING.format(name="erin-view", role="view"))
    assert "rolebinding.rbac.authorization.k8s.io/erin-view created" in out
    r = srv.kubectl(
        "apply", *DANA, "-f", "-", input=BINDING.format(name="erin-root", role="cluster-admin")
    )
    assert r.returncode == 1
    assert r.stderr.strip() == (
        'Error from server (Forbidden): error when creating "STDIN": '
        'rolebindings.rbac.authorization.k8s.io "erin-root" is forbidden: user "dana" '
        f"{GROUPS} is attempting to grant RBAC permissions not currently held:\n"
        '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}\n'
        '{NonResourceURLs:["*"], Verbs:["*"]}'
    )
    r = srv.kubectl("apply", *DANA, "-f", "-", input=BINDING.format(name="erin-x", role="nope"))
    assert r.returncode == 1
    assert 'Error from server (BadRequest): error when creating "STDIN": ' in r.stderr
    assert 'clusterroles.rbac.authorization.k8s.io "nope" not found' in r.stderr


def test_bind_and_escalate_verbs(srv: Served) -> None:
    srv.ok(
        "apply",
        "-f",
        "-",
        input="""
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: binder-escalator}
rules:
- apiGroups: [rbac.authorization.k8s.io]
  resources: [clusterroles]
  resourceNames: [cluster-admin]
  verbs: [bind]
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles]
  verbs: [escalate]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: dana-binder, namespace: team-c}
subjects: [{kind: User, name: dana, apiGroup: rbac.authorization.k8s.io}]
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: binder-escalator}
""",
    )
    out = srv.ok(
        "apply", *DANA, "-f", "-", input=BINDING.format(name="erin-admin", role="cluster-admin")
    )
    assert "rolebinding.rbac.authorization.k8s.io/erin-admin created" in out
    more = ROLE.format(name="lq-all", group="kueue.x-k8s.io", resource="clusterqueues", verbs="'*'")
    assert "role.rbac.authorization.k8s.io/lq-all created" in srv.ok(
        "apply", *DANA, "-f", "-", input=more
    )


def test_rbac_kinds_take_strategic_merge_patches(srv: Served) -> None:
    role = ROLE.format(name="patched", group="batch", resource="jobs", verbs="get")
    srv.ok("apply", "-f", "-", input=role)
    # Client-side apply of a changed built-in kind sends a strategic merge patch.
    out = srv.ok("apply", "-f", "-", input=role.replace("verbs: [get]", "verbs: [get, list]"))
    assert "role.rbac.authorization.k8s.io/patched configured" in out
    out = srv.ok(
        "patch", "role", "-n", "team-c", "patched", "-p", '{"metadata":{"labels":{"a":"b"}}}'
    )
    assert "role.rbac.authorization.k8s.io/patched patched" in out
    got = srv.json("get", "role", "-n", "team-c", "patched")
    assert got["rules"][0]["verbs"] == ["get", "list"] and got["metadata"]["labels"] == {"a": "b"}
