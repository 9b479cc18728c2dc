"""Kueue's site examples, as a new user tries them: every YAML file of
Kueue's ``site/static/examples`` is read by ``kuota validate`` (accepted, or
refused for the reason listed here), and the ones its docs run (a setup and
a job) run in ``kuota run`` to the end its docs describe.

The files are copies (tests/data/kueue-site-examples, README there)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kuota.cli.main import main

EXAMPLES = Path(__file__).parents[1] / "data" / "kueue-site-examples"
FILES = sorted(str(p.relative_to(EXAMPLES)) for p in EXAMPLES.rglob("*.yaml"))

_CRD_FIRST = "ensure CRDs are installed first"
_KIND_CONFIG = "kind (Kubernetes in Docker) cluster configuration"
# file -> what kuota says when it refuses it (everything else is valid).
REFUSED = {
    # Kueue's own webhook refuses it too: onFlavors names a flavor the queue
    # does not have (pkg/webhooks/clusterqueue_webhook.go
    # validateAdmissionCheckOnFlavors; its test expects NotSupported, []).
    "admin/minimal-cq.yaml": "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]",
    # not Kubernetes objects: kind's cluster configurations
    "multikueue/dev/manager-kind-config.yaml": _KIND_CONFIG,
    "multikueue/dev/worker-kind-config.yaml": _KIND_CONFIG,
    "tas/kind-cluster.yaml": _KIND_CONFIG,
    # other operators' kinds, run by Kueue through its pod integration: a
    # cluster needs their CRDs first, and so does kuota
    "pod-based-workloads/sample-sandbox.yaml": _CRD_FIRST,
    "pod-based-workloads/tekton-hello-task.yaml": _CRD_FIRST,
    "pod-based-workloads/tekton-pipeline-run.yaml": _CRD_FIRST,
    "pod-based-workloads/tekton-pipeline.yaml": _CRD_FIRST,
    "pod-based-workloads/tekton-sleep-task.yaml": _CRD_FIRST,
    "pod-based-workloads/workflow-queue-per-template.yaml": _CRD_FIRST,
    "pod-based-workloads/workflow-single-queue.yaml": _CRD_FIRST,
}


def test_the_copies_are_all_there() -> None:
    assert len(FILES) == 80
    assert set(REFUSED) <= set(FILES)


@pytest.mark.parametrize("name", FILES)
def test_every_site_example_is_accepted_or_refused_with_its_reason(name: str) -> None:
    r = CliRunner().invoke(main, ["validate", "--json", str(EXAMPLES / name)])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    docs = json.loads(r.output)["documents"]
    errors = [e["message"] for d in docs for e in d["errors"]]
    if name in REFUSED:
        assert r.exit_code == 1, r.output
        assert any(REFUSED[name] in m or REFUSED[name] in r.output for m in errors), r.output
    else:
        assert r.exit_code == 0, r.output
        assert docs and not errors


# A cluster for the runs: nodes with room for every sample (Kueue's docs
# assume one), and the integrations the pod-based samples' docs enable.
NODES = """\
apiVersion: v1
kind: Node
metadata:
  name: node-{i}
  labels: {{kubernetes.io/hostname: node-{i}}}
status:
  capacity: {{cpu: "32", memory: 128Gi, pods: "110"}}
  allocatable: {{cpu: "32", memory: 128Gi, pods: "110"}}
  conditions: [{{type: Ready, status: "True"}}]
"""
CONFIG = """\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
integrations:
  frameworks: [batch/job, pod, deployment, statefulset, leaderworkerset.x-k8s.io/leaderworkerset]
"""
SETUP = "admin/single-clusterqueue-setup.yaml"

# (files, extra args, admitted, finished): what their docs show.
RUNS = {
    # getting started: the job runs `sleep 30` on 3 pods and completes
    "quick-start": (
        ["getting-started/quick-start-setup.yaml", "getting-started/quick-start-job.yaml"],
        [],
        1,
        1,
    ),
    # run_jobs.md: sample-job (`sleep 60`) admitted, then Complete
    "sample-job": ([SETUP, "jobs/sample-job.yaml"], [], 1, 1),
    # run_jobs.md partial admission: agnhost entrypoint-tester exits at once
    "partial-admission": ([SETUP, "jobs/sample-job-partial-admission.yaml"], [], 1, 1),
    # run_cronjobs.md: a Job every minute, each finished
    "cronjob": ([SETUP, "jobs/sample-cronjob.yaml"], ["--until", "10m"], 10, 10),
    # plain_pods.md: a pod (`sleep 3`), a pod group (`echo ... && sleep 3`)
    "pod": ([SETUP, "pods-kueue/kueue-pod.yaml"], [], 1, 1),
    "pod-group": ([SETUP, "pods-kueue/kueue-pod-group.yaml"], [], 1, 1),
    # serving workloads run until deleted: admitted, never finished
    "serving": (
        [
            SETUP,
            "serving-workloads/sample-deployment.yaml",
            "serving-workloads/sample-statefulset.yaml",
            "serving-workloads/sample-leaderworkerset.yaml",
        ],
        [],
        6,
        0,
    ),
}


@pytest.mark.parametrize("case", sorted(RUNS))
def test_site_examples_run_as_their_docs_say(case: str, tmp_path: Path) -> None:
    files, extra, admitted, finished = RUNS[case]
    world = tmp_path / "cluster.yaml"
    world.write_text(CONFIG + "---\n" + "---\n".join(NODES.format(i=i) for i in range(4)))
    proc = subprocess.run(
        [sys.executable, "-m", "kuota.cli.main", "run", "--no-live", str(world)]
        + [str(EXAMPLES / f) for f in files]
        + extra,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "Traceback" not in out
    m = re.search(r"(\d+) admissions? of (\d+) workloads?; no evictions", out)
    assert m is not None, out
    assert int(m.group(1)) == admitted and int(m.group(2)) == admitted, out
    totals = [
        line for line in out.splitlines() if "default/user-queue" in line and line.count("│") >= 9
    ]
    assert totals, out
    cells = [c.strip() for c in totals[-1].split("│")[1:-1]]
    assert cells[2:4] == [str(admitted), str(finished)], totals[-1]  # ADMITTED, FINISHED
