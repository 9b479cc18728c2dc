"""SparkApplications through ``kuota run``: Kueue's SparkApplication
integration (alpha, SparkApplicationIntegration) over the simulated Spark
operator, with Kueue's sample (``kueue_examples/``,
site/static/examples/jobs/sample-sparkapplication.yaml).

Translated from Kueue's tests (kubernetes-sigs/kueue@ff69552e):
``test/integration/singlecluster/controller/jobs/sparkapplication/
sparkapplication_controller_test.go`` ("Should reconcile SparkApplications",
"Should schedule jobs as they fit in their ClusterQueue", the
waitForPodsReady block); ``pkg/controller/jobs/sparkapplication/
sparkapplication_controller_test.go`` (TestPodSets "base",
TestRunWithPodsetsInfo and TestRestorePodSetsInfo "global nodeSelector",
CanSupportIntegration); ``sparkapplication_webhook_test.go``
(TestValidateCreate "dynamicAllocation without elastic job feature",
"dynamicAllocation with elastic job feature", "invalid TAS configuration";
TestDefault "should suspend a SparkApplication", "should not suspend a
SparkApplication without a queue label")."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from kuota.cli.main import main

HERE = Path(__file__).parent
SAMPLE = HERE / "kueue_examples" / "sample-sparkapplication.yaml"
GVK = "sparkoperator.k8s.io/v1beta2, Kind=SparkApplication"


def _config(gate: bool | None = True, frameworks: tuple[str, ...] = (), extra: str = "") -> str:
    names = ", ".join(frameworks or ("sparkoperator.k8s.io/sparkapplication", "batch/job"))
    gates = (
        ""
        if gate is None
        else f"featureGates: {{SparkApplicationIntegration: {str(gate).lower()}}}\n"
    )
    return (
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
        f"{gates}integrations:\n  frameworks: [{names}]\n{extra}"
    )


CONFIG = _config()


def _nodes(memory: str = "64Gi", labels: str = "{pool: a, disk: ssd}") -> str:
    return f"""\
apiVersion: v1
kind: Node
metadata: {{name: node-1, labels: {labels}}}
status: {{allocatable: {{cpu: "32", memory: {memory}, pods: "110"}}}}
"""


def _queues(cpu: str = "3", memory: str = "3Gi") -> str:
    return f"""\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: pool-a}}
spec: {{nodeLabels: {{pool: a}}}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: high}}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq}}
spec:
  namespaceSelector: {{}}
  preemption: {{withinClusterQueue: LowerPriority}}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors: [{{name: pool-a, resources: [{{name: cpu, nominalQuota: {cpu}}}, {{name: memory, nominalQuota: {memory}}}]}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{namespace: default, name: user-queue}}
spec: {{clusterQueue: cq}}
"""


def _sample(
    name: str = "spark-pi", duration: str | None = "10m", created: str | None = None
) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(SAMPLE.read_text())
    doc["metadata"]["name"] = name
    doc["metadata"]["namespace"] = "default"
    if duration is not None:
        doc["metadata"]["annotations"] = {"kuota.dev/duration": duration}
    if created is not None:
        doc["metadata"]["creationTimestamp"] = created
    return doc


def _files(tmp_path: Path, docs: tuple[str | dict[str, Any], ...]) -> list[str]:
    paths = []
    tmp_path.mkdir(parents=True, exist_ok=True)
    for i, doc in enumerate(docs):
        p = tmp_path / f"doc{i}.yaml"
        p.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
        paths.append(str(p))
    return paths


def _run(
    tmp_path: Path, *docs: str | dict[str, Any], until: str = "", code: int = 0
) -> tuple[Path, str]:
    state = tmp_path / "state"
    args = ["run", *_files(tmp_path, docs), "--state", str(state), "--no-live"]
    r = CliRunner().invoke(main, [*args, "--until", until] if until else args)
    assert r.exit_code == code, r.output
    assert "Traceback" not in r.output
    return state, " ".join(r.output.split())


def _resume(state: Path, until: str = "") -> None:
    args = ["run", "--state", str(state), "--no-live"]
    r = CliRunner().invoke(main, [*args, "--until", until] if until else args)
    assert r.exit_code == 0, r.output


def _get(state: Path, kind: str) -> list[dict[str, Any]]:
    r = CliRunner().invoke(main, ["get", kind, "-A", "--state", str(state), "-o", "json"])
    assert r.exit_code == 0, r.output
    items: list[dict[str, Any]] = json.loads(r.output)["items"]
    return items


def _one(state: Path, kind: str, name: str) -> dict[str, Any]:
    return next(o for o in _get(state, kind) if o["metadata"]["name"] == name)


def _cond(obj: dict[str, Any], ctype: str) -> dict[str, Any] | None:
    return next(
        (c for c in obj.get("status", {}).get("conditions", []) if c["type"] == ctype), None
    )


def _workload_of(state: Path, app: str) -> dict[str, Any]:
    return next(
        w for w in _get(state, "workloads") if w["metadata"]["ownerReferences"][0]["name"] == app
    )


def _requests(pod: dict[str, Any]) -> dict[str, str]:
    req: dict[str, str] = pod["spec"]["containers"][0]["resources"]["requests"]
    return req


def test_kueues_sample_is_admitted_its_driver_then_executors_run_and_it_completes(
    tmp_path: Path,
) -> None:
    """Kueue's sample: one Workload of a driver podSet (1) and an executor
    podSet (2), each 1 CPU and 1Gi (Kueue counts ``memory``, not Spark's
    overhead), admitted into a queue of exactly 3 CPU and 3Gi. The operator
    submits the driver (1Gi + the 384Mi minimum overhead: the sample's
    factor 0 still leaves Spark's minimum), then the two executors once the
    driver runs, owned by it; RUNNING, its executors RUNNING, PodsReady.
    At 10m the driver succeeds: COMPLETED, executors deleted and taken as
    COMPLETED, the Workload Finished."""
    state, _ = _run(tmp_path, CONFIG, _queues(), _nodes(), _sample(), until="5m")
    app = _one(state, "sparkapplications", "spark-pi")
    assert app["spec"]["suspend"] is False
    st = app["status"]
    assert st["applicationState"]["state"] == "RUNNING", st
    assert st["driverInfo"]["podName"] == "spark-pi-driver"
    wl = _workload_of(state, "spark-pi")
    podsets = [
        (
            p["name"],
            p["count"],
            p["template"]["spec"]["containers"][0]["name"],
            _requests(p["template"]),
        )
        for p in wl["spec"]["podSets"]
    ]
    assert podsets == [
        ("driver", 1, "spark-kubernetes-driver", {"cpu": "1", "memory": "1Gi"}),
        ("executor", 2, "spark-kubernetes-executor", {"cpu": "1", "memory": "1Gi"}),
    ]
    assert _cond(wl, "Admitted")["status"] == "True"  # type: ignore[index]
    assert _cond(wl, "PodsReady")["status"] == "True"  # type: ignore[index]
    pods = {p["metadata"]["name"]: p for p in _get(state, "pods")}
    driver = pods.pop("spark-pi-driver")
    assert driver["status"]["phase"] == "Running"
    assert _requests(driver) == {"cpu": "1", "memory": "1408Mi"}
    assert driver["metadata"]["ownerReferences"][0]["kind"] == "SparkApplication"
    assert driver["metadata"]["labels"]["spark-role"] == "driver"
    assert driver["metadata"]["labels"]["kueue.x-k8s.io/podset"] == "driver"
    assert driver["spec"]["nodeSelector"] == {"pool": "a"}  # the flavor's, from the admission
    assert len(pods) == 2, pods.keys()
    for name, p in pods.items():
        assert "-exec-" in name
        assert p["status"]["phase"] == "Running"
        assert p["metadata"]["labels"]["spark-role"] == "executor"
        assert p["metadata"]["ownerReferences"][0] == {
            **p["metadata"]["ownerReferences"][0],
            "kind": "Pod",
            "name": "spark-pi-driver",
        }
        assert _requests(p) == {"cpu": "1", "memory": "1408Mi"}
        assert p["spec"]["nodeSelector"] == {"pool": "a"}
    assert st["executorState"] == dict.fromkeys(pods, "RUNNING")

    _resume(state)
    st = _one(state, "sparkapplications", "spark-pi")["status"]
    assert st["applicationState"]["state"] == "COMPLETED", st
    assert st["terminationTime"] == "2026-01-01T00:10:00Z"
    assert st["executorState"] == dict.fromkeys(pods, "COMPLETED")
    assert [p["metadata"]["name"] for p in _get(state, "pods")] == ["spark-pi-driver"]
    fin = _cond(_workload_of(state, "spark-pi"), "Finished")
    assert fin is not None and fin["status"] == "True" and fin["reason"] == "Succeeded", fin


def test_applications_are_admitted_as_they_fit_in_their_clusterqueue(tmp_path: Path) -> None:
    """ "Should schedule jobs as they fit in their ClusterQueue": two of the
    sample in a queue of 3 CPU: the second waits for the first to finish."""
    first = _sample("first", "10m", created="2026-01-01T00:00:00Z")
    second = _sample("second", "10m", created="2026-01-01T00:00:01Z")
    state, _ = _run(tmp_path, CONFIG, _queues(), _nodes(), first, second, until="5m")
    apps = {a["metadata"]["name"]: a for a in _get(state, "sparkapplications")}
    assert apps["first"]["status"]["applicationState"]["state"] == "RUNNING"
    assert apps["second"]["spec"]["suspend"] is True
    assert apps["second"].get("status", {}).get("applicationState", {}).get("state") == "SUSPENDED"
    assert _cond(_workload_of(state, "second"), "QuotaReserved")["status"] == "False"  # type: ignore[index]
    _resume(state)
    for name, end in (("first", "2026-01-01T00:10:00Z"), ("second", "2026-01-01T00:20:00Z")):
        st = _one(state, "sparkapplications", name)["status"]
        assert st["applicationState"]["state"] == "COMPLETED", (name, st)
        assert st["terminationTime"] == end, (name, st)


def test_a_preempted_application_is_suspended_restored_and_submitted_again(
    tmp_path: Path,
) -> None:
    """The low application runs from 00:00; the high one (its driver's and
    executors' priorityClassName) preempts it at 00:05: suspended, its pods
    deleted (SUSPENDING -> SUSPENDED), its spec restored to the Workload's
    podSets (the admission's labels and the flavor's node selector gone);
    re-admitted when the high one completes (00:15) it is submitted again
    (a second submission) and completes at 00:45."""
    low = _sample("low", "30m", created="2026-01-01T00:00:00Z")
    high = _sample("high", "10m", created="2026-01-01T00:05:00Z")
    for role in ("driver", "executor"):
        high["spec"][role]["priorityClassName"] = "high"
    state, _ = _run(tmp_path, CONFIG, _queues(), _nodes(), low, high, until="10m")
    app = _one(state, "sparkapplications", "low")
    assert app["spec"]["suspend"] is True
    assert app["status"]["applicationState"]["state"] == "SUSPENDED"
    for role in ("driver", "executor"):
        spec = app["spec"][role]
        assert "labels" not in spec, spec  # restored: the admission's labels gone
        assert "nodeSelector" not in spec, spec
    assert app["spec"]["executor"]["instances"] == 2
    assert {
        p["metadata"]["labels"]["sparkoperator.k8s.io/app-name"] for p in _get(state, "pods")
    } == {"high"}
    evicted = _cond(_workload_of(state, "low"), "Evicted")
    assert evicted is not None and evicted["reason"] == "Preempted", evicted
    _resume(state)
    st = _one(state, "sparkapplications", "low")["status"]
    assert st["applicationState"]["state"] == "COMPLETED", st
    assert st["submissionAttempts"] == 2
    assert st["terminationTime"] == "2026-01-01T00:45:00Z"
    r = CliRunner().invoke(main, ["get", "events", "-A", "--state", str(state), "-o", "json"])
    said = {(e["involvedObject"]["name"], e["reason"]) for e in json.loads(r.output)["items"]}
    assert ("low", "Stopped") in said, said


def test_pod_sets_follow_kueues_spec_reading(tmp_path: Path) -> None:
    """TestPodSets "base" (driver and executor node selectors and
    tolerations, 3 executors of 100m and 512Mi), with what else
    mutateSparkPod reads: a sidecar's requests, an init container, the
    coreLimit, memoryLimit and GPU limits; ``cores`` alone is no CPU request
    (Kueue reads ``coreRequest`` only); the template's and the role's
    labels and annotations on the podSet template."""
    app = _sample("base", duration=None)
    toleration = {"key": "t1k", "operator": "Equal", "value": "t1v", "effect": "NoExecute"}
    app["spec"]["driver"] = {
        "memory": "512Mi",
        "coreRequest": "100m",
        "serviceAccount": "spark-operator-spark",
        "nodeSelector": {"test": "test"},
        "tolerations": [toleration],
        "coreLimit": "2",
        "memoryLimit": "1g",
        "labels": {"role-label": "d"},
        "template": {"metadata": {"labels": {"tpl": "x"}, "annotations": {"a": "b"}}},
        "sidecars": [
            {"name": "side", "image": "busybox", "resources": {"requests": {"cpu": "50m"}}}
        ],
        "initContainers": [{"name": "init", "image": "busybox"}],
    }
    app["spec"]["executor"] = {
        "instances": 3,
        "memory": "512Mi",
        "coreRequest": "100m",
        "nodeSelector": {"test": "test"},
        "tolerations": [toleration],
        "gpu": {"name": "nvidia.com/gpu", "quantity": 1},
    }
    cores_only = _sample("cores-only", duration=None)
    cores_only["spec"]["executor"] = {"instances": 1, "cores": 4, "memory": "1g"}
    state, _ = _run(tmp_path, CONFIG, _queues("20", "20Gi"), _nodes(), app, cores_only, until="1s")
    wl = _workload_of(state, "base")
    driver, executor = wl["spec"]["podSets"]
    assert (driver["name"], driver["count"], executor["name"], executor["count"]) == (
        "driver",
        1,
        "executor",
        3,
    )
    dspec, xspec = driver["template"]["spec"], executor["template"]["spec"]
    assert dspec["nodeSelector"] == xspec["nodeSelector"] == {"test": "test"}
    assert dspec["tolerations"] == xspec["tolerations"] == [toleration]
    assert [c["name"] for c in dspec["containers"]] == ["spark-kubernetes-driver", "side"]
    assert dspec["containers"][0]["resources"] == {
        "requests": {"cpu": "100m", "memory": "512Mi"},
        "limits": {"cpu": "2", "memory": "1Gi"},
    }
    assert [c["name"] for c in dspec["initContainers"]] == ["init"]
    assert driver["template"]["metadata"] == {
        "labels": {"tpl": "x", "role-label": "d"},
        "annotations": {"a": "b"},
    }
    assert xspec["containers"][0]["resources"] == {
        "requests": {"cpu": "100m", "memory": "512Mi"},
        "limits": {"nvidia.com/gpu": "1"},
    }
    cx = _workload_of(state, "cores-only")["spec"]["podSets"][1]["template"]["spec"]
    assert cx["containers"][0]["resources"] == {"requests": {"memory": "1Gi"}}


def test_spark_submit_refuses_a_kubernetes_memory_unit(tmp_path: Path) -> None:
    """Kueue reads ``memory: 512Mi`` (a Kubernetes unit) and admits it; Spark
    reads Java units only: spark-submit fails, SUBMISSION_FAILED, and Kueue
    finishes the Workload as failed with the operator's message."""
    app = _sample("mi", duration="1m")
    app["spec"]["driver"]["memory"] = "512Mi"
    state, _ = _run(tmp_path, CONFIG, _queues(), _nodes(), app)
    st = _one(state, "sparkapplications", "mi")["status"]
    assert st["applicationState"]["state"] == "SUBMISSION_FAILED", st
    assert 'Invalid suffix: "mi"' in st["applicationState"]["errorMessage"]
    fin = _cond(_workload_of(state, "mi"), "Finished")
    assert fin is not None and fin["reason"] == "Failed", fin
    assert 'Invalid suffix: "mi"' in fin["message"]
    assert _get(state, "pods") == []


def test_a_global_node_selector_goes_to_each_role(tmp_path: Path) -> None:
    """TestRunWithPodsetsInfo / TestRestorePodSetsInfo "global nodeSelector":
    ``spec.nodeSelector`` (which Kueue's podSets do not read) is moved into
    the driver's and the executors' node selectors with the flavor's labels,
    and cleared; the pods carry both."""
    app = _sample("global", duration="1m")
    app["spec"]["nodeSelector"] = {"disk": "ssd"}
    state, _ = _run(tmp_path, CONFIG, _queues(), _nodes(), app, until="30s")
    spec = _one(state, "sparkapplications", "global")["spec"]
    assert "nodeSelector" not in spec
    for role in ("driver", "executor"):
        assert spec[role]["nodeSelector"] == {"disk": "ssd", "pool": "a"}, spec[role]
    pods = _get(state, "pods")
    assert len(pods) == 3
    for p in pods:
        assert p["spec"]["nodeSelector"] == {"disk": "ssd", "pool": "a"}
        assert p["spec"]["nodeName"] == "node-1"


def test_pods_ready_waits_for_every_executor(tmp_path: Path) -> None:
    """The waitForPodsReady block: a queue of 3Gi admits the sample (Kueue
    counts 1Gi a pod) but the node has 3Gi and the pods ask 1408Mi each
    (Spark's overhead): the driver runs (RUNNING), one executor stays
    Pending, so the Workload is not PodsReady and is evicted at the timeout."""
    config = _config(extra="waitForPodsReady: {timeout: 5m}\n")
    state, _ = _run(tmp_path, config, _queues(), _nodes(memory="3Gi"), _sample(), until="4m")
    st = _one(state, "sparkapplications", "spark-pi")["status"]
    assert st["applicationState"]["state"] == "RUNNING"
    assert sorted(st["executorState"].values()) == ["PENDING", "RUNNING"], st
    ready = _cond(_workload_of(state, "spark-pi"), "PodsReady")
    assert ready is not None and ready["status"] == "False", ready
    _resume(state, until="2m")
    evicted = _cond(_workload_of(state, "spark-pi"), "Evicted")
    assert evicted is not None, evicted  # evicted at 5m, then admitted again
    assert "Exceeded the PodsReady timeout" in evicted["message"], evicted
    st = _one(state, "sparkapplications", "spark-pi")["status"]
    assert st["submissionAttempts"] == 2, st  # suspended, then submitted anew


def test_kueue_refuses_what_its_sparkapplication_webhook_refuses(tmp_path: Path) -> None:
    """TestValidateCreate: dynamic allocation without an elastic job (Kueue's
    path and message); client mode; with the elastic-job annotation and
    ElasticJobsViaWorkloadSlices on, jobframework's refusal of elastic
    SparkApplications; an invalid TAS request on the executors. A
    SparkApplication without a queue name is not Kueue's: accepted."""
    dyn = _sample("dyn")
    dyn["spec"]["dynamicAllocation"] = {
        "enabled": True,
        "minExecutors": 1,
        "initialExecutors": 2,
        "maxExecutors": 3,
    }
    client = _sample("client")
    client["spec"]["mode"] = "client"
    elastic = copy.deepcopy(dyn)
    elastic["metadata"]["name"] = "elastic"
    elastic["metadata"]["annotations"]["kueue.x-k8s.io/elastic-job"] = "true"
    tas = _sample("tas")
    tas["spec"]["executor"]["annotations"] = {
        "kueue.x-k8s.io/podset-required-topology": "cloud.com/block",
        "kueue.x-k8s.io/podset-preferred-topology": "cloud.com/block",
    }
    unmanaged = copy.deepcopy(dyn)
    unmanaged["metadata"]["name"] = "unmanaged"
    del unmanaged["metadata"]["labels"]
    config = _config(
        frameworks=("sparkoperator.k8s.io/sparkapplication",),
        gate=None,
    ).replace(
        "integrations:",
        "featureGates: {SparkApplicationIntegration: true, ElasticJobsViaWorkloadSlices: true}\n"
        "integrations:",
    )
    plain = _config()
    _, out = _run(tmp_path / "a", plain, _queues(), _nodes(), dyn, client, tas, unmanaged, code=1)
    for expected in (
        'SparkApplication.sparkoperator.k8s.io "dyn" is invalid: spec.dynamicAllocation.enabled: '
        "Invalid value: true: a kueue managed job can use dynamicAllocation only when the "
        "ElasticJobsViaWorkloadSlices feature gate is on and the job is an elastic job",
        'SparkApplication.sparkoperator.k8s.io "client" is invalid: spec.mode: Invalid value: '
        '"client": only Cluster mode is supported for a kueue managed job',
        'SparkApplication.sparkoperator.k8s.io "tas" is invalid: spec.executor.annotations',
        "must not contain more than one topology annotation",
    ):
        assert expected in out, (expected, out)
    assert '"unmanaged" is invalid' not in out
    _, out = _run(tmp_path / "b", config, _queues(), _nodes(), elastic, code=1)
    expected = (
        'SparkApplication.sparkoperator.k8s.io "elastic" is invalid: '
        "metadata.annotations[kueue.x-k8s.io/elastic-job]: Forbidden: elastic job is not "
        f'supported for "{GVK}"'
    )
    assert expected in out, out
    assert "dynamicAllocation" not in out


def test_the_integration_needs_its_feature_gate(tmp_path: Path) -> None:
    """CanSupportIntegration: the framework enabled with
    SparkApplicationIntegration off (its default) stops Kueue's manager
    ("failed to configure reconcilers"): kuota refuses the Configuration.
    Not enabled (gate on or off), Kueue neither suspends nor admits a
    SparkApplication, queue name or not: the operator runs it at once."""
    _, out = _run(tmp_path / "off", _config(gate=None), _queues(), _nodes(), _sample(), code=2)
    expected = (
        "integrations.frameworks[0]: Forbidden: failed to configure reconcilers: "
        "sparkoperator.k8s.io/sparkapplication integration is alpha feature. please enable "
        "SparkApplicationIntegration featuregate"
    )
    assert expected in out, out
    for gate in (True, False):
        config = _config(gate=gate, frameworks=("batch/job",))
        state, _ = _run(tmp_path / str(gate), config, _queues(), _nodes(), _sample(), until="5m")
        app = _one(state, "sparkapplications", "spark-pi")
        assert "suspend" not in app["spec"]
        assert app["status"]["applicationState"]["state"] == "RUNNING"
        assert _get(state, "workloads") == []
        assert len(_get(state, "pods")) == 3


def test_validate_accepts_kueues_sample_and_refuses_what_the_crd_refuses(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["validate", str(SAMPLE)])
    assert r.exit_code == 0, r.output
    bad = _sample("bad")
    bad["spec"]["type"] = "Go"
    bad["spec"]["executor"]["instances"] = 0
    del bad["spec"]["sparkVersion"]
    r = CliRunner().invoke(main, ["validate", *_files(tmp_path, (bad,))])
    assert r.exit_code == 1, r.output
    out = " ".join(r.output.split())
    assert "Traceback" not in out
    for field in ("spec.type", "spec.executor.instances", "spec.sparkVersion"):
        assert field in out, (field, out)
    # Kueue's webhook's TAS rule, as kuota validate reads every job kind's
    tas = _sample("tas")
    tas["spec"]["executor"]["annotations"] = {
        "kueue.x-k8s.io/podset-required-topology": "cloud.com/block",
        "kueue.x-k8s.io/podset-preferred-topology": "cloud.com/block",
    }
    r = CliRunner().invoke(main, ["validate", *_files(tmp_path / "tas", (tas,))])
    assert r.exit_code == 1, r.output
    assert (
        "spec.executor.annotations: Invalid value: must not contain more than one topology "
        "annotation"
    ) in " ".join(r.output.split())


def test_its_pods_are_not_admitted_again_by_the_pod_integration(tmp_path: Path) -> None:
    """With the pod integration on too, the driver (owned by the
    SparkApplication) and the executors (owned by the driver pod) carry the
    application's queue name but are not pods Kueue admits on their own: one
    Workload, the application's; its pods are not gated."""
    config = _config(
        frameworks=("sparkoperator.k8s.io/sparkapplication", "pod"),
        extra=(
            "managedJobsNamespaceSelector: {matchExpressions: [{key: "
            "kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, kueue-system]}]}\n"
        ),
    )
    state, _ = _run(tmp_path, config, _queues(), _nodes(), _sample(), until="5m")
    assert [w["metadata"]["name"] for w in _get(state, "workloads")] == [
        _workload_of(state, "spark-pi")["metadata"]["name"]
    ]
    pods = _get(state, "pods")
    assert len(pods) == 3
    for p in pods:
        assert p["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "user-queue"
        assert not p["spec"].get("schedulingGates"), p["spec"]
        assert p["status"]["phase"] == "Running"
