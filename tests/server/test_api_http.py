"""The API's wire contract over HTTPS, as clients other than kubectl see it:
aggregated discovery, chunked lists, Tables, Status objects with causes,
watches from a resourceVersion."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

from tests.server.conftest import EXAMPLES
from tests.server.test_serve_process import _call, _ctx

AGG = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def _get(srv, path: str, accept: str) -> tuple[str, dict]:  # type: ignore[no-untyped-def]
    req = urllib.request.Request(srv.url + path, headers={"Accept": accept})
    with urllib.request.urlopen(req, context=_ctx(srv), timeout=10) as resp:
        return resp.headers["Content-Type"], json.loads(resp.read())


def test_discovery_lists_tables_errors_and_watch(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    srv = serve(
        str(EXAMPLES / "quickstart" / "world.yaml"), str(EXAMPLES / "quickstart" / "nodes.yaml")
    )
    ctype, agg = _get(srv, "/apis", AGG)
    assert ctype.startswith("application/json;g=apidiscovery.k8s.io;v=v2")
    kueue = next(g for g in agg["items"] if g["metadata"]["name"] == "kueue.x-k8s.io")
    assert [v["version"] for v in kueue["versions"]] == ["v1beta2", "v1beta1"]
    cq = next(r for r in kueue["versions"][0]["resources"] if r["resource"] == "clusterqueues")
    assert cq["scope"] == "Cluster" and cq["shortNames"] == ["cq"]
    assert cq["subresources"][0]["subresource"] == "status"
    _, core = _get(srv, "/api", AGG)
    pods = next(r for r in core["items"][0]["versions"][0]["resources"] if r["resource"] == "pods")
    assert pods["categories"] == ["all"] and pods["shortNames"] == ["po"]

    # Chunked list: pages of 2, one resourceVersion, every node once.
    code, page = _call(srv, "/api/v1/nodes?limit=2")
    assert code == 200 and len(page["items"]) == 2 and page["metadata"]["continue"]
    names = [n["metadata"]["name"] for n in page["items"]]
    while page["metadata"].get("continue"):
        code, page = _call(srv, f"/api/v1/nodes?limit=2&continue={page['metadata']['continue']}")
        names += [n["metadata"]["name"] for n in page["items"]]
    assert len(names) == 6 and names == sorted(names)

    ctype, tbl = _get(srv, "/apis/kueue.x-k8s.io/v1beta2/localqueues", TABLE)
    assert ctype.startswith("application/json;as=Table;v=v1;g=meta.k8s.io")
    assert [c["name"] for c in tbl["columnDefinitions"]] == [
        "Name",
        "ClusterQueue",
        "Pending Workloads",
        "Admitted Workloads",
    ]
    assert {r["cells"][1] for r in tbl["rows"]} == {"team-vision", "team-nlp"}
    assert tbl["rows"][0]["object"]["kind"] == "PartialObjectMetadata"

    code, st = _call(srv, "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/nope")
    assert (code, st["reason"], st["message"]) == (
        404,
        "NotFound",
        'clusterqueues.kueue.x-k8s.io "nope" not found',
    )
    bad = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "Not_Valid"},
        "spec": {"clusterQueue": "team-vision"},
    }
    code, st = _call(
        srv, "/apis/kueue.x-k8s.io/v1beta2/namespaces/vision/localqueues", method="POST", body=bad
    )
    assert code == 422 and st["reason"] == "Invalid"
    assert st["details"]["kind"] == "LocalQueue" and st["details"]["name"] == "Not_Valid"
    assert st["details"]["causes"][0]["field"] == "metadata.name"
    # An update with a stale resourceVersion is a 409 Conflict.
    code, lq = _call(srv, "/apis/kueue.x-k8s.io/v1beta2/namespaces/vision/localqueues/default")
    lq["metadata"]["labels"] = {"a": "b"}
    assert (
        _call(
            srv,
            "/apis/kueue.x-k8s.io/v1beta2/namespaces/vision/localqueues/default",
            method="PUT",
            body=lq,
        )[0]
        == 200
    )
    code, st = _call(
        srv,
        "/apis/kueue.x-k8s.io/v1beta2/namespaces/vision/localqueues/default",
        method="PUT",
        body=lq,
    )
    assert code == 409 and st["reason"] == "Conflict"
    # A watch from a list's resourceVersion sees only later changes.
    code, listed = _call(srv, "/api/v1/namespaces")
    rv = listed["metadata"]["resourceVersion"]
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "later"}}
    assert _call(srv, "/api/v1/namespaces", method="POST", body=ns)[0] == 201
    req = urllib.request.Request(
        srv.url + f"/api/v1/namespaces?watch=true&resourceVersion={rv}&timeoutSeconds=1"
    )
    with urllib.request.urlopen(req, context=_ctx(srv), timeout=10) as resp:
        events = [json.loads(line) for line in resp.read().splitlines() if line.strip()]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "later")]
