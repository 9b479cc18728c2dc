"""AppWrappers through ``kuota run``: Kueue's AppWrapper integration over the
simulated AppWrapper controller, with Kueue's sample manifests
(``kueue_examples/``, site/static/examples/appwrapper).

Translated from Kueue's tests (kubernetes-sigs/kueue@ff69552e):
``test/integration/singlecluster/controller/jobs/appwrapper/appwrapper_controller_test.go``
("Should reconcile AppWrappers", "Should finish the preemption when the
appwrapper no longer has resources deployed", "Should schedule AppWrappers
as they fit in their ClusterQueue") and the AppWrapper webhook's rules
(project-codeflare/appwrapper ``internal/webhook``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from kuota.cli.main import main

HERE = Path(__file__).parent
EXAMPLES = HERE / "kueue_examples"
SETUP = HERE.parent / "jobset" / "kueue_examples" / "single-clusterqueue-setup.yaml"
CONFIG = """\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
integrations:
  frameworks: [workload.codeflare.dev/appwrapper, kubeflow.org/pytorchjob, batch/job]
"""
NODES = """\
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {pool: a}}
status: {allocatable: {cpu: "32", memory: 128Gi, pods: "110"}}
"""
QUEUES = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: pool-a}
spec: {nodeLabels: {pool: a}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors: [{name: pool-a, resources: [{name: cpu, nominalQuota: 2}, {name: memory, nominalQuota: 8Gi}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: default, name: user-queue}
spec: {clusterQueue: cq}
"""


def _sample(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text())
    return doc


def _files(tmp_path: Path, docs: tuple[str | dict[str, Any], ...]) -> list[str]:
    paths = []
    for i, doc in enumerate(docs):
        p = tmp_path / f"doc{i}.yaml"
        p.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
        paths.append(str(p))
    return paths


def _run(tmp_path: Path, *docs: str | dict[str, Any]) -> Path:
    state = tmp_path / "state"
    args = ["run", *_files(tmp_path, docs), "--state", str(state), "--no-live"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    return state


def _get(state: Path, kind: str) -> list[dict[str, Any]]:
    r = CliRunner().invoke(main, ["get", kind, "-A", "--state", str(state), "-o", "json"])
    assert r.exit_code == 0, r.output
    items: list[dict[str, Any]] = json.loads(r.output)["items"]
    return items


def _cond(obj: dict[str, Any], ctype: str) -> dict[str, Any] | None:
    return next(
        (c for c in obj.get("status", {}).get("conditions", []) if c["type"] == ctype), None
    )


def _job_wrapper(name: str, duration: str, cpu: str = "1", priority: str = "") -> dict[str, Any]:
    """An AppWrapper of one batch Job (its podSets inferred: parallelism 2)."""
    pod: dict[str, Any] = {
        "metadata": {"annotations": {"kuota.dev/duration": duration}},
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}
            ],
        },
    }
    if priority:
        pod["spec"]["priorityClassName"] = priority
    return {
        "apiVersion": "workload.codeflare.dev/v1beta2",
        "kind": "AppWrapper",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"kueue.x-k8s.io/queue-name": "user-queue"},
        },
        "spec": {
            "components": [
                {
                    "template": {
                        "apiVersion": "batch/v1",
                        "kind": "Job",
                        "metadata": {"name": f"{name}-job"},
                        "spec": {"parallelism": 2, "completions": 2, "template": pod},
                    }
                }
            ]
        },
    }


def test_kueues_samples_are_admitted_whole_and_their_components_run(tmp_path: Path) -> None:
    """One Workload per AppWrapper, a podSet per pod template (declared, or
    inferred for the PyTorchJob); admitted, the AppWrapper controller makes
    the Deployment, the LeaderWorkerSet and the PyTorchJob, their pods run
    with the AppWrapper's label and the podSet's, and it is Running with
    PodsReady."""
    state = _run(
        tmp_path,
        CONFIG.replace("batch/job]", "batch/job, leaderworkerset.x-k8s.io/leaderworkerset]"),
        SETUP.read_text(),
        NODES,
        _sample("deployment-sample"),
        _sample("leaderworkerset-sample"),
        _sample("pytorch-sample"),
    )
    podsets = {
        w["metadata"]["ownerReferences"][0]["name"]: [
            (p["name"], p["count"]) for p in w["spec"]["podSets"]
        ]
        for w in _get(state, "workloads")
    }
    assert podsets == {
        "sample-appwrapper-deployment": [("sample-appwrapper-deployment-0", 3)],
        "sample-appwrapper-lws": [("sample-appwrapper-lws-0", 2), ("sample-appwrapper-lws-1", 3)],
        "sample-appwrapper-pytorch-job": [
            ("sample-appwrapper-pytorch-job-0", 1),
            ("sample-appwrapper-pytorch-job-1", 1),
        ],
    }
    for aw in _get(state, "appwrappers"):
        assert aw["status"]["phase"] == "Running", aw["status"]
        assert aw["spec"]["suspend"] is False
        assert _cond(aw, "PodsReady")["status"] == "True"  # type: ignore[index]
    (dep,) = _get(state, "deployments")
    assert dep["metadata"]["ownerReferences"][0]["kind"] == "AppWrapper"
    assert dep["metadata"]["labels"]["workload.codeflare.dev/appwrapper"] == (
        "sample-appwrapper-deployment"
    )
    (pt,) = _get(state, "pytorchjobs")
    assert pt["spec"]["runPolicy"]["suspend"] is False
    pods = _get(state, "pods")
    assert len(pods) == 3 + 6 + 2
    for p in pods:
        labels = p["metadata"]["labels"]
        assert labels["workload.codeflare.dev/appwrapper"].startswith("sample-appwrapper-")
        assert labels["kueue.x-k8s.io/podset"].startswith(
            labels["workload.codeflare.dev/appwrapper"]
        )
    # Kueue made the AppWrappers' Workloads only: what they wrap is theirs.
    assert len(_get(state, "workloads")) == 3
    r = CliRunner().invoke(main, ["get", "aw", "--state", str(state)])
    assert r.output.split("\n")[1].split()[:5] == [
        "sample-appwrapper-deployment",
        "Running",
        "True",
        "True",
        "False",
    ], r.output


def test_an_appwrapper_succeeds_with_its_pods_and_a_preempted_one_resumes(tmp_path: Path) -> None:
    """The low AppWrapper runs (its Job's pods carry the flavor's node
    labels from podSetInfos); the high one preempts it at 00:05: suspended,
    its Job deleted (Suspending -> Suspended, ResourcesDeployed False), its
    Workload's quota released; re-admitted at 00:15 it runs anew and
    Succeeds at 00:45, its Workload Finished."""
    low = _job_wrapper("low", "30m")
    low["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    high = _job_wrapper("high", "10m", priority="high")
    high["metadata"]["creationTimestamp"] = "2026-01-01T00:05:00Z"
    state = _run(tmp_path, CONFIG, QUEUES, NODES, low, high)
    aws = {a["metadata"]["name"]: a for a in _get(state, "appwrappers")}
    for name, end in (("high", "2026-01-01T00:15:00Z"), ("low", "2026-01-01T00:45:00Z")):
        st = aws[name]["status"]
        assert st["phase"] == "Succeeded", (name, st)
        done = _cond(aws[name], "QuotaReserved")
        assert done is not None and done["reason"] == "Succeeded"
        assert done["lastTransitionTime"] == end, (name, done)
    wls = {w["metadata"]["ownerReferences"][0]["name"]: w for w in _get(state, "workloads")}
    for w in wls.values():
        assert _cond(w, "Finished")["reason"] == "Succeeded"  # type: ignore[index]
    r = CliRunner().invoke(main, ["get", "events", "-A", "--state", str(state), "-o", "json"])
    said = {
        (e["involvedObject"]["kind"], e["involvedObject"]["name"], e["reason"])
        for e in json.loads(r.output)["items"]
    }
    assert ("AppWrapper", "low", "Suspending") in said, said
    assert ("AppWrapper", "low", "Stopped") in said
    for p in _get(state, "pods"):
        assert p["spec"]["nodeSelector"] == {"pool": "a"}


def test_validate_refuses_what_the_appwrapper_webhook_refuses(tmp_path: Path) -> None:
    bad = _job_wrapper("bad", "1m")
    comp = bad["spec"]["components"][0]
    comp["template"]["metadata"]["namespace"] = "elsewhere"
    comp["podSets"] = [{"path": "template.spec.nope", "replicas": 2}]
    nested = _job_wrapper("nested", "1m")
    nested["spec"]["components"][0]["template"] = {
        "apiVersion": "workload.codeflare.dev/v1beta2",
        "kind": "AppWrapper",
        "metadata": {"name": "inner"},
        "spec": {"components": []},
    }
    paths = _files(tmp_path, (bad, nested))
    r = CliRunner().invoke(main, ["validate", *paths])
    assert r.exit_code == 1, r.output
    out = " ".join(r.output.split())
    for expected in (
        "spec.components[0].template.metadata.namespace: Forbidden: AppWrappers cannot create "
        "objects in other namespaces",
        'spec.components[0].podSets[0].path: Invalid value: "template.spec.nope": path does not '
        "refer to a v1.PodSpecTemplate: at path position 'template.spec.nope' missing field 'nope'",
        'spec.components[0].podSets: Invalid value: "": PodSet with path '
        "'template.spec.template' is missing",
        "spec.components[0].template: Forbidden: Nested AppWrappers are forbidden",
        'spec.components: Invalid value: "": components contains no podspecs',
    ):
        assert expected in out, (expected, out)
    assert "Traceback" not in r.output


def test_validate_accepts_kueues_appwrapper_samples() -> None:
    samples = sorted(str(p) for p in EXAMPLES.glob("*.yaml"))
    r = CliRunner().invoke(main, ["validate", *samples])
    assert r.exit_code == 0, r.output
    assert f"{len(samples)} valid" in r.output


def test_a_failing_appwrapper_is_reset_until_its_retry_limit_then_fails(tmp_path: Path) -> None:
    """The AppWrapper controller's fault tolerance (project-codeflare/appwrapper
    ``appwrapper_controller.go``: resetOrFail, the Resetting phase): its Job
    fails at 00:05 (backoffLimit 0: the component failed, no grace period),
    the AppWrapper is reset (its Job deleted, a 90 s retry pause, then
    Resuming: the Job made again at 00:06:30), fails again at 00:11:30, and
    with ``retryLimit: 1`` spent it is Failed, its Workload finished as
    failed."""
    aw = _job_wrapper("flaky", "5m")
    aw["metadata"]["annotations"] = {"workload.codeflare.dev.appwrapper/retryLimit": "1"}
    job = aw["spec"]["components"][0]["template"]
    job["spec"]["backoffLimit"] = 0
    job["spec"]["template"]["metadata"]["annotations"]["kuota.dev/fail"] = "true"
    state = _run(tmp_path, CONFIG, QUEUES, NODES, aw)
    [got] = _get(state, "appwrappers")
    st = got["status"]
    assert st["phase"] == "Failed", st
    assert st["resettingCount"] == 1
    unhealthy = _cond(got, "Unhealthy")
    assert unhealthy is not None
    assert (unhealthy["reason"], unhealthy["message"]) == (
        "FailedComponent",
        "Found 1 failed components",
    )
    assert unhealthy["lastTransitionTime"] == "2026-01-01T00:11:30Z"
    deployed = _cond(got, "ResourcesDeployed")
    assert deployed is not None
    assert (deployed["status"], deployed["reason"]) == ("False", "Failed")
    r = CliRunner().invoke(main, ["get", "events", "-A", "--state", str(state), "-o", "json"])
    said = [
        (e["reason"], e["message"])
        for e in json.loads(r.output)["items"]
        if e["involvedObject"]["kind"] == "AppWrapper"
    ]
    assert said.count(("Unhealthy", "FailedComponent: Found 1 failed components")) >= 1, said
    [wl] = _get(state, "workloads")
    fin = _cond(wl, "Finished")
    assert fin is not None and fin["status"] == "True" and fin["reason"] == "Failed", fin
