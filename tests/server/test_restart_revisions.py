"""After a SIGKILL, ``kuota serve`` never hands out again a resourceVersion
or uid a client may have seen: a watch or list shows a write before its
group commit is on disk, and a killed server loses that write, so the
restarted one must not give its revision to another write (a client
resuming from it would miss events) nor its uid to another object. A watch
from the last durable revision still resumes; one from beyond it gets 410
Gone and lists again, as after a compaction."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from tests.server.conftest import needs_kubectl, start_server


def _configmap(name: str) -> str:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default"},
            "data": {"k": name},
        }
    )


def _watch(served, rv: str) -> list[dict]:  # type: ignore[no-untyped-def]
    out = served.ok(
        "get",
        "--raw",
        f"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv}&timeoutSeconds=1",
    )
    return [json.loads(line) for line in out.splitlines() if line.strip()]


@needs_kubectl
def test_a_restart_reuses_no_revision_and_no_uid(tmp_path: Path) -> None:
    state, home = tmp_path / "state", tmp_path / "home"
    served = start_server(state, home=home)
    try:
        for i in range(3):
            served.ok("create", "-f", "-", input=_configmap(f"before-{i}"))
        listed = json.loads(served.ok("get", "--raw", "/api/v1/namespaces/default/configmaps"))
        durable = int(listed["metadata"]["resourceVersion"])
        before = {c["metadata"]["uid"] for c in listed["items"]}
    finally:
        served.stop(signal.SIGKILL)
    served = start_server(state, home=home)
    try:
        for i in range(3):
            served.ok("create", "-f", "-", input=_configmap(f"after-{i}"))
        after = json.loads(served.ok("get", "--raw", "/api/v1/namespaces/default/configmaps"))[
            "items"
        ]
        new = {c["metadata"]["uid"] for c in after if c["metadata"]["name"].startswith("after")}
        assert len(new) == 3 and not new & before  # no uid given twice
        # From the last durable revision: resumed, the new objects' events.
        resumed = _watch(served, str(durable))
        names = [e["object"]["metadata"]["name"] for e in resumed if e["type"] == "ADDED"]
        assert names == ["after-0", "after-1", "after-2"], resumed
        # From a revision past it (one a lost write may have had): Gone.
        beyond = _watch(served, str(durable + 1))
        assert [e["type"] for e in beyond] == ["ERROR"], beyond
        assert beyond[0]["object"]["code"] == 410
    finally:
        served.stop()
