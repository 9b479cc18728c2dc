"""Kueue's TAS examples (site/static/examples/tas and the TAS JobSet and
LeaderWorkerSet samples; copies in tests/data/tas/kueue-examples) as its docs
use them: accepted by `kuota validate`, and the three sample Jobs run on the
eight workers of its kind cluster (tests/data/tas/kind-nodes.yaml) with each
Job's pods where its annotation asks: the required Job in one rack, the
preferred one in one block, every pod on the host its ungated node selector
names, as many pods per host as the admission's topology assignment says;
and the JobSet samples' pods in the rack, block and rack slices they ask."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from embedded.world import T0, config, control_plane, namespace, obj
from kuota.api.decode import decode_yaml
from kuota.api.kueue.v1beta1 import domains_of
from kuota.cli.main import main
from kuota.store.resources import JOB, NODE, POD, WORKLOAD

DATA = Path(__file__).parent.parent / "data" / "tas"
EXAMPLES = DATA / "kueue-examples"
JOBS = ("sample-job-required", "sample-job-preferred", "sample-job-unconstrained")
BLOCK = "cloud.provider.com/topology-block"
RACK = "cloud.provider.com/topology-rack"
HOST = "kubernetes.io/hostname"


def _objects(*names: str) -> list[Any]:
    out = []
    for n in names:
        path = DATA / f"{n}.yaml" if n == "kind-nodes" else EXAMPLES / f"{n}.yaml"
        for doc in decode_yaml(path.read_text()):
            assert doc.ok, [str(e) for e in doc.errors]
            if doc.obj.kind == "Job" and not doc.obj.metadata.namespace:
                doc.obj.metadata.namespace = "default"  # as kubectl (and kuota run) apply it
            out.append(doc.obj)
    return out


def test_every_example_is_valid() -> None:
    r = CliRunner().invoke(main, ["validate", str(EXAMPLES)])
    assert r.exit_code == 0, r.output
    assert "15 objects in 9 files: 15 valid, 0 invalid" in r.output


def test_sample_jobs_run_where_their_annotations_ask() -> None:
    cp = control_plane()
    cp.create([namespace("default"), *_objects("kind-nodes", "sample-queues", *JOBS)])
    cp.settle()
    cp.advance(T0 + timedelta(seconds=30))
    nodes = {n.metadata.name: n.metadata.labels for n in cp.store.list(NODE).items}
    pods: dict[str, list[Any]] = {}
    for p in cp.store.list(POD, "default").items:
        owner = p.metadata.owner_references[0].name
        pods.setdefault(owner, []).append(p)
    jobs = {j.metadata.generate_name: j.metadata.name for j in cp.store.list(JOB, "default").items}
    assert sorted(jobs) == [
        "tas-sample-preferred",
        "tas-sample-required",
        "tas-sample-unconstrained",
    ]
    for wl in cp.store.list(WORKLOAD, "default").items:
        job = wl.metadata.owner_references[0].name
        mine = pods[job]
        assert len(mine) == wl.spec.pod_sets[0].count
        (psa,) = wl.status.admission.pod_set_assignments
        ta = psa.topology_assignment
        assert ta is not None and ta.levels == [HOST]
        want = {values[0]: count for values, count in domains_of(ta)}
        for p in mine:
            assert not p.spec.scheduling_gates
            assert p.spec.node_name == p.spec.node_selector[HOST]
            assert p.status.phase == "Running"
        assert Counter(p.spec.node_name for p in mine) == want
    required = {
        tuple(nodes[p.spec.node_name][k] for k in (BLOCK, RACK))
        for p in pods[jobs["tas-sample-required"]]
    }
    assert len(required) == 1
    preferred = {nodes[p.spec.node_name][BLOCK] for p in pods[jobs["tas-sample-preferred"]]}
    assert len(preferred) == 1


def test_kuota_run_admits_the_three_sample_jobs() -> None:
    paths = [str(DATA / "kind-nodes.yaml"), str(EXAMPLES / "sample-queues.yaml")]
    paths += [str(EXAMPLES / f"{j}.yaml") for j in JOBS]
    r = CliRunner().invoke(main, ["run", *paths, "--no-live"])
    assert r.exit_code == 0, r.output
    assert "3 admissions of 3 workloads" in r.output


def _rack_of_pods(example: str) -> list[tuple[str, str]]:
    cfg = config(integrations={"frameworks": ["batch/job", "jobset.x-k8s.io/jobset"]})
    cp = control_plane(cfg)
    lq = obj(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "user-queue", "namespace": "default"},
            "spec": {"clusterQueue": "tas-cluster-queue"},
        }
    )
    objs = _objects("kind-nodes", "sample-queues", example)
    objs[-1].metadata.namespace = "default"
    cp.create([namespace("default"), lq, *objs])
    cp.settle()
    cp.advance(T0 + timedelta(seconds=10))
    nodes = {n.metadata.name: n.metadata.labels for n in cp.store.list(NODE).items}
    pods = [p for p in cp.store.list(POD, "default").items if p.spec.node_name]
    return [(nodes[p.spec.node_name][BLOCK], nodes[p.spec.node_name][RACK]) for p in pods]


def test_jobset_samples_run_in_the_domains_they_ask() -> None:
    required = _rack_of_pods("sample-jobset-tas-required")
    assert len(required) == 4 and len(set(required)) == 1  # one rack
    sliced = Counter(_rack_of_pods("sample-jobset-tas-sliced"))
    assert sum(sliced.values()) == 8 and all(n % 4 == 0 for n in sliced.values())
    combined = _rack_of_pods("sample-jobset-tas-combined")
    assert len(combined) == 8 and len({b for b, _ in combined}) == 1  # one block
    assert all(n % 4 == 0 for n in Counter(combined).values())  # slices of 4 per rack
