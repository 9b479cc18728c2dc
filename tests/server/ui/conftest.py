"""One ``kuota serve`` (the quickstart world, an admin and a batch user) per
test module, and where screenshots go."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.server.conftest import EXAMPLES, Served, start_server

# A batch user bound in team-a (Kueue's batch-user role), and two teams'
# namespaces with a LocalQueue each; the tests add their own ClusterQueues.
SETUP = """
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
"""


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    d = tmp_path_factory.mktemp("ui")
    tokens = d / "tokens.csv"
    tokens.write_text('alice-token,alice,1,"team-a-users"\n')
    world = EXAMPLES / "quickstart"
    s = start_server(
        d / "state",
        str(world / "world.yaml"),
        str(world / "nodes.yaml"),
        "--token-auth-file",
        str(tokens),
        home=d / "home",
    )
    try:
        s.ok("apply", "-f", "-", input=SETUP)
        yield s
    finally:
        s.stop()


def admin_login(srv: Served) -> str:
    """The dashboard URL with the admin's token that kuota serve printed."""
    for line in srv.lines:
        if "dashboard at " in line:
            return line.split("dashboard at ")[1].strip()
    raise AssertionError("kuota serve printed no dashboard URL: " + "".join(srv.lines))


@pytest.fixture
def artifacts(tmp_path: Path) -> Path:
    """Where screenshots are kept: $KUOTA_UI_ARTIFACTS, else the test's tmp dir."""
    out = Path(os.environ.get("KUOTA_UI_ARTIFACTS") or tmp_path / "artifacts")
    out.mkdir(parents=True, exist_ok=True)
    return out
