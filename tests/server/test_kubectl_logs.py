"""``kubectl logs`` against ``kuota serve``: a started container's log says
it is simulated (image, node, start); a pod not started gets the kubelet's
400; a pod of several containers needs a container named (kubectl names
the first one itself)."""

from __future__ import annotations

import time
from pathlib import Path

from tests.server.conftest import needs_kubectl, start_server

WORLD = """
apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers:
  - {name: app, image: nginx:1.27, resources: {requests: {cpu: "1"}}}
  - {name: sidecar, image: envoy:1.30}
---
apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: default}
spec:
  containers:
  - {name: app, image: x, resources: {requests: {cpu: "64"}}}
"""


@needs_kubectl
def test_kubectl_logs(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    world.write_text(WORLD)
    srv = start_server(tmp_path / "state", str(world), home=tmp_path / "home")
    try:
        deadline = time.monotonic() + 30
        while srv.json("get", "pod", "web").get("status", {}).get("phase") != "Running":
            assert time.monotonic() < deadline, "the pod never ran"
            time.sleep(0.2)
        out = srv.ok("logs", "web", "-c", "app")
        assert "simulated container app (image nginx:1.27) on node node-1" in out, out
        r = srv.kubectl("logs", "web")  # (kubectl picks the first container itself)
        assert r.returncode == 0 and 'Defaulted container "app"' in r.stderr, r.stderr
        r = srv.kubectl("get", "--raw", "/api/v1/namespaces/default/pods/web/log")
        assert r.returncode == 1 and "a container name must be specified" in r.stderr, r.stderr
        r = srv.kubectl("logs", "huge")  # (no node has room: never started)
        assert r.returncode == 1 and "is waiting to start" in r.stderr, r.stderr
        r = srv.kubectl("logs", "nope")
        assert r.returncode == 1 and 'pods "nope" not found' in r.stderr, r.stderr
    finally:
        srv.stop()
