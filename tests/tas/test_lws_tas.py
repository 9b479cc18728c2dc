"""LeaderWorkerSets on a topology with Kueue's TAS sample
(site/static/examples/tas/sample-leaderworkerset-tas.yaml, copied in
tests/data/tas/kueue-examples): its workers request nvidia.com/gpu without a
limit, which kube-apiserver refuses in the worker StatefulSets the LWS
operator makes (LWS itself does not validate templates), so the groups ran
their leaders only. `kuota validate` and `kuota run` now say so when the file
is read; with the limit set, each group's leader and workers are placed
together in one rack on the hosts the topology assignment names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kuota.cli.main import main

DATA = Path(__file__).parent.parent / "data" / "tas"
SAMPLE = DATA / "kueue-examples" / "sample-leaderworkerset-tas.yaml"
CONFIG = """apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
integrations:
  frameworks: [batch/job, leaderworkerset.x-k8s.io/leaderworkerset]
---
apiVersion: v1
kind: Namespace
metadata: {name: default}
"""
RACK = "cloud.provider.com/topology-rack"


def test_validate_warns_of_the_worker_template_kube_apiserver_refuses() -> None:
    r = CliRunner().invoke(main, ["validate", str(SAMPLE)])
    assert r.exit_code == 0, r.output
    out = " ".join(r.output.split())
    assert (
        "warning: spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].resources.limits:"
        " Required value: Limit must be set for non overcommitable resources: the worker"
        " StatefulSets the LeaderWorkerSet operator makes of this template will be refused"
    ) in out


def _get(state: Path, kind: str) -> list[dict[str, Any]]:
    r = CliRunner().invoke(main, ["get", kind, "-A", "--state", str(state), "-o", "json"])
    assert r.exit_code == 0, r.output
    items: list[dict[str, Any]] = json.loads(r.output)["items"]
    return items


def test_lws_groups_run_together_in_one_rack(tmp_path: Path) -> None:
    world = tmp_path / "world"
    world.mkdir()
    (world / "config.yaml").write_text(CONFIG)
    nodes = (DATA / "kind-nodes.yaml").read_text()
    (world / "nodes.yaml").write_text(
        nodes.replace("    memory: 64Gi\n", "    memory: 64Gi\n    nvidia.com/gpu: '2'\n")
    )
    queues = DATA / "kueue-examples" / "sample-gpu-queues.yaml"
    (world / "queues.yaml").write_text(queues.read_text())
    lws = SAMPLE.read_text().replace(
        '              nvidia.com/gpu: "1"\n',
        '              nvidia.com/gpu: "1"\n            limits:\n              nvidia.com/gpu: "1"\n',
    )
    (world / "lws.yaml").write_text(lws)
    state = tmp_path / "state"
    r = CliRunner().invoke(main, ["run", str(world), "--state", str(state), "--until", "1m"])
    assert r.exit_code == 0, r.output
    assert "warning" not in r.output

    racks = {n["metadata"]["name"]: n["metadata"]["labels"][RACK] for n in _get(state, "nodes")}
    by_group: dict[str, list[dict[str, Any]]] = {}
    for p in _get(state, "pods"):
        by_group.setdefault(
            p["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/group-index"], []
        ).append(p)
    assert sorted(by_group) == ["0", "1"]
    hosts_of: dict[tuple[str, str], dict[str, int]] = {}
    for wl in _get(state, "workloads"):
        group = wl["metadata"]["name"].split("-")[-2]  # leaderworkerset-<lws>-<group>-<hash>
        for psa in wl["status"]["admission"]["podSetAssignments"]:
            (s,) = psa["topologyAssignment"]["slices"]
            hosts_of[(group, psa["name"])] = {
                s["valuesPerLevel"][0]["universal"]: s["podCounts"]["universal"]
            }
    for group, pods in by_group.items():
        assert len(pods) == 3  # the leader and both workers
        assert all(p["status"]["phase"] == "Running" for p in pods)
        assert len({racks[p["spec"]["nodeName"]] for p in pods}) == 1
        for p in pods:  # each pod on a host its podSet's topology assignment names
            podset = p["metadata"]["labels"]["kueue.x-k8s.io/podset"]
            assert p["spec"]["nodeName"] in hosts_of[(group, podset)]
