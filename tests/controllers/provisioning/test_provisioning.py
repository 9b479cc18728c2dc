"""Kueue's ProvisioningRequest admission check with the embedded
cluster-autoscaler, through ``kuota run`` and ``kuota get``: Kueue's own
example (``site/static/examples/provisioning``, copied in ``kueue_examples/``),
the AdmissionCheck's Active condition, retries with Kueue's backoff until the
check is Rejected, node groups scaling up and down, and the podSetUpdates a
provisioned request gives the pods."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kuota.cli.main import main

EXAMPLES = Path(__file__).parent / "kueue_examples"

GPU_NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: gpu-0
  labels: {kubernetes.io/hostname: gpu-0}
spec:
  taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
status:
  capacity: {cpu: "8", memory: 64Gi, nvidia.com/gpu: "4", pods: "110"}
  conditions: [{type: Ready, status: "True"}]
"""

NODE_GROUP = """\
apiVersion: kuota.dev/v1alpha1
kind: NodeGroup
metadata: {name: gpu-pool}
spec:
  minSize: MIN
  maxSize: 2
  provisioningDelay: 3m
  scaleDownUnneededTime: 10m
  failurePercent: FAIL
  template:
    metadata:
      labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
    spec:
      taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
    status:
      capacity: {cpu: "8", memory: 64Gi, nvidia.com/gpu: "4", pods: "110"}
"""


def _job(name: str, gpus_per_pod: int = 1, duration: str = "10m") -> str:
    return f"""\
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: default
  labels: {{kueue.x-k8s.io/queue-name: user-queue}}
spec:
  parallelism: 3
  completions: 3
  template:
    metadata: {{annotations: {{kuota.dev/duration: {duration}}}}}
    spec:
      tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
      restartPolicy: Never
      containers:
      - name: c
        image: x
        resources:
          requests: {{cpu: 100m, memory: 100Mi, nvidia.com/gpu: {gpus_per_pod}}}
          limits: {{nvidia.com/gpu: {gpus_per_pod}}}
"""


def _world(tmp_path: Path, *docs: str, cls: str | None = None, config: str = "") -> Path:
    world = tmp_path / "world"
    world.mkdir()
    setup = (EXAMPLES / "provisioning-setup.yaml").read_text()
    if cls is not None:
        setup = setup.replace("check-capacity.autoscaling.x-k8s.io", cls)
    if config:
        setup = setup.replace("  retryStrategy:\n", config + "  retryStrategy:\n")
    (world / "setup.yaml").write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n---\n" + setup
    )
    (world / "more.yaml").write_text("---\n".join(docs))
    return world


def _run(tmp_path: Path, world: Path, until: str = "3h", name: str = "state") -> Path:
    state = tmp_path / name
    r = CliRunner().invoke(main, ["run", str(world), "--state", str(state), "--until", until])
    assert r.exit_code == 0, r.output
    return state


def _get(state: Path, kind: str) -> list[dict[str, Any]]:
    r = CliRunner().invoke(main, ["get", kind, "-A", "--state", str(state), "-o", "json"])
    assert r.exit_code == 0, r.output
    items: list[dict[str, Any]] = json.loads(r.output)["items"]
    return items


def _events(state: Path, reason: str) -> list[str]:
    return [e["message"] for e in _get(state, "events") if e["reason"] == reason]


def _check(wl: dict[str, Any]) -> dict[str, Any]:
    (check,) = wl["status"]["admissionChecks"]
    return check


def test_kueue_example_check_capacity_admits_and_cleans_up(tmp_path: Path) -> None:
    world = tmp_path / "world"
    world.mkdir()
    shutil.copy(EXAMPLES / "provisioning-setup.yaml", world)
    job = (EXAMPLES / "sample-job.yaml").read_text()
    # The example's generateName, a duration for the simulated kubelet.
    job = job.replace("generateName: sample-job-", "name: sample-job")
    job = job.replace(
        "    spec:\n      tolerations",
        "    metadata:\n      annotations: {kuota.dev/duration: 10m}\n    spec:\n      tolerations",
    )
    (world / "job.yaml").write_text(job)
    (world / "node.yaml").write_text(GPU_NODE)
    (world / "ns.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n")

    state = _run(tmp_path, world, until="5m")
    (ac,) = _get(state, "admissionchecks")
    assert [(c["type"], c["status"]) for c in ac["status"]["conditions"]] == [("Active", "True")]
    (pr,) = _get(state, "provisioningrequests")
    (wl,) = _get(state, "workloads")
    wl_name = wl["metadata"]["name"]
    assert pr["metadata"]["name"] == f"{wl_name}-sample-prov-1"
    assert pr["metadata"]["ownerReferences"][0]["name"] == wl_name
    assert pr["spec"]["provisioningClassName"] == "check-capacity.autoscaling.x-k8s.io"
    # The job's provreq.kueue.x-k8s.io/ annotation becomes a parameter.
    assert pr["spec"]["parameters"] == {"maxRunDurationSeconds": "600"}
    assert pr["spec"]["podSets"] == [
        {"podTemplateRef": {"name": f"ppt-{wl_name}-sample-prov-1-main"}, "count": 3}
    ]
    conds = {c["type"]: (c["status"], c["reason"]) for c in pr["status"]["conditions"]}
    assert conds == {"Accepted": ("True", "Accepted"), "Provisioned": ("True", "CapacityIsFound")}
    (pt,) = _get(state, "podtemplates")
    assert pt["metadata"]["ownerReferences"][0]["kind"] == "ProvisioningRequest"
    # Limits stand in for missing requests. Only podset.FromAssignment is
    # merged (Kueue's createPodTemplate): no pod-set or queue labels.
    c = pt["template"]["spec"]["containers"][0]
    assert c["resources"]["requests"]["nvidia.com/gpu"] == "1"
    assert "kueue.x-k8s.io/podset" not in (pt["template"]["metadata"].get("labels") or {})
    check = _check(wl)
    assert check["state"] == "Ready"
    assert check["podSetUpdates"][0]["annotations"] == {
        "autoscaling.x-k8s.io/consume-provisioning-request": pr["metadata"]["name"],
        "autoscaling.x-k8s.io/provisioning-class-name": "check-capacity.autoscaling.x-k8s.io",
    }
    assert {c["type"]: c["status"] for c in wl["status"]["conditions"]}["Admitted"] == "True"

    # Finished: Kueue deletes the request; its templates go with it.
    state2 = _run(tmp_path, world, name="whole")
    assert _get(state2, "provisioningrequests") == []
    assert _get(state2, "podtemplates") == []
    (wl,) = _get(state2, "workloads")
    assert {c["type"]: c["status"] for c in wl["status"]["conditions"]}["Finished"] == "True"


def test_check_without_its_config_is_inactive_until_the_config_comes(tmp_path: Path) -> None:
    setup = (EXAMPLES / "provisioning-setup.yaml").read_text()
    head, _, _ = setup.partition(
        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ProvisioningRequestConfig"
    )
    world = tmp_path / "world"
    world.mkdir()
    (world / "setup.yaml").write_text(head)
    state = _run(tmp_path, world, until="1m")
    (ac,) = _get(state, "admissionchecks")
    (cond,) = ac["status"]["conditions"]
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "False",
        "BadParametersRef",
        'provisioningrequestconfigs.kueue.x-k8s.io "prov-test-config" not found',
    )
    (cq,) = _get(state, "clusterqueues")
    active = {c["type"]: c for c in cq["status"]["conditions"]}["Active"]
    assert (active["status"], active["reason"]) == ("False", "AdmissionCheckInactive")

    # The config applied later (a world given again resumes the state).
    (world / "config.yaml").write_text(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ProvisioningRequestConfig\n"
        "metadata: {name: prov-test-config}\n"
        "spec: {provisioningClassName: check-capacity.autoscaling.x-k8s.io}\n"
    )
    r = CliRunner().invoke(main, ["run", str(world), "--state", str(state), "--until", "2m"])
    assert r.exit_code == 0, r.output
    (ac,) = _get(state, "admissionchecks")
    assert ac["status"]["conditions"][0]["status"] == "True"
    (cq,) = _get(state, "clusterqueues")
    assert {c["type"]: c["status"] for c in cq["status"]["conditions"]}["Active"] == "True"


def test_failed_requests_are_retried_with_backoff_then_rejected(tmp_path: Path) -> None:
    # No node fits and noRetry: the autoscaler fails each request at once.
    # backoffLimitCount 2: attempts 1 and 2 retried (60 s, 120 s), attempt 3
    # rejected, which deactivates the workload.
    config = '  parameters: {noRetry: "true"}\n'
    world = _world(tmp_path, _job("big", gpus_per_pod=3), config=config)
    setup = (
        (world / "setup.yaml")
        .read_text()
        .replace("backoffBaseSeconds: 0", "backoffBaseSeconds: 60")
    )
    (world / "setup.yaml").write_text(setup)
    state = _run(tmp_path, world, until="1h")
    (wl,) = _get(state, "workloads")
    name = wl["metadata"]["name"]
    created = _events(state, "ProvisioningRequestCreated")
    assert created == [f'Created ProvisioningRequest: "{name}-sample-prov-{i}"' for i in (1, 2, 3)]
    # Deactivation evicts; Kueue's resetChecksOnEviction then says what it was.
    check = _check(wl)
    assert (check["state"], check["message"]) == (
        "Pending",
        "Reset to Pending after eviction. Previously: Rejected",
    )
    assert wl["spec"]["active"] is False
    evicted = {c["type"]: c for c in wl["status"]["conditions"]}["Evicted"]
    assert evicted["reason"] == "DeactivatedDueToAdmissionCheck"
    assert "CA could not find requested capacity" in evicted["message"]
    updates = _events(state, "AdmissionCheckUpdated")
    assert updates[0] == (
        "Admission check sample-prov updated state from Pending to Retry with message: "
        "Retrying after failure: CA could not find requested capacity"
    )
    assert updates[-1].endswith("to Rejected with message: CA could not find requested capacity")
    # Kueue's backoff between attempts: 60 s, then 120 s (base 60, doubling).
    times = [
        e["firstTimestamp"]
        for e in _get(state, "events")
        if e["reason"] == "ProvisioningRequestCreated"
    ]
    assert sorted(times) == [f"2026-01-01T00:0{m}:00Z" for m in (0, 1, 3)]


def test_node_group_scales_up_waits_at_max_size_and_scales_down(tmp_path: Path) -> None:
    group = NODE_GROUP.replace("MIN", "0").replace("FAIL", "0")
    jobs = [_job(f"job-{i}") for i in range(3)]
    world = _world(tmp_path, group, *jobs, cls="best-effort-atomic-scale-up.autoscaling.x-k8s.io")
    state = _run(tmp_path, world, until="2h")
    scale_ups = _events(state, "TriggeredScaleUp")
    assert len(scale_ups) == 2  # maxSize 2: the third job waits for room
    assert all(_check(wl)["state"] == "Ready" for wl in _get(state, "workloads"))
    # Every pod ran on a node of the group (there was no other node).
    pods = _get(state, "pods")
    assert {p["spec"]["nodeName"] for p in pods} == {"gpu-pool-0", "gpu-pool-1"}
    # job-2 got room when job-0 and job-1 finished (13m) and ran 10m: both
    # nodes idle from 23m, removed scaleDownUnneededTime (10m) later.
    assert _get(state, "nodes") == []
    assert sorted(_events(state, "ScaleDown")) == [
        f"node gpu-pool-{i} removed: unneeded since 2026-01-01T00:23:00Z" for i in (0, 1)
    ]
    assert len(_events(state, "ScaleDown")) == 2
    (ng,) = _get(state, "nodegroups")
    assert ng["status"].get("nodes", 0) == 0


def test_a_stock_out_never_brings_the_nodes(tmp_path: Path) -> None:
    group = NODE_GROUP.replace("MIN", "0").replace("FAIL", "100")
    world = _world(
        tmp_path, group, _job("one"), cls="best-effort-atomic-scale-up.autoscaling.x-k8s.io"
    )
    state = _run(tmp_path, world, until="20m")
    assert len(_events(state, "TriggeredScaleUp")) == 1
    (failed,) = _events(state, "FailedToScaleUpGroup")
    assert "did not come up" in failed
    assert _get(state, "nodes") == []
    # Provisioned when the scale-up was asked for (as cluster-autoscaler
    # marks it): the job is admitted and its pods wait for nodes.
    pods = _get(state, "pods")
    assert pods and all(not p["spec"].get("nodeName") for p in pods)


def test_pod_set_updates_take_the_node_group_from_the_class_details(tmp_path: Path) -> None:
    group = NODE_GROUP.replace("MIN", "0").replace("FAIL", "0")
    updates = (
        "  podSetUpdates:\n    nodeSelector:\n"
        "    - {key: kuota.dev/node-group, valueFromProvisioningClassDetail: NodeGroup}\n"
    )
    world = _world(
        tmp_path,
        group,
        _job("one"),
        cls="best-effort-atomic-scale-up.autoscaling.x-k8s.io",
        config=updates,
    )
    state = _run(tmp_path, world, until="5m")
    (wl,) = _get(state, "workloads")
    assert _check(wl)["podSetUpdates"][0]["nodeSelector"] == {"kuota.dev/node-group": "gpu-pool"}
    (pr,) = _get(state, "provisioningrequests")
    for p in _get(state, "pods"):
        assert p["spec"]["nodeSelector"]["kuota.dev/node-group"] == "gpu-pool"
        # The pods say whose booked capacity they take (podSetUpdates' annotations).
        consumes = p["metadata"]["annotations"]["autoscaling.x-k8s.io/consume-provisioning-request"]
        assert consumes == pr["metadata"]["name"]


def test_a_workload_without_managed_resources_needs_no_request(tmp_path: Path) -> None:
    cpu_job = (
        _job("cpu")
        .replace(", nvidia.com/gpu: 1", "")
        .replace("          limits: {nvidia.com/gpu: 1}\n", "")
    )
    node = GPU_NODE.replace(
        "  taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]\n", ""
    )
    state = _run(tmp_path, _world(tmp_path, node, cpu_job), until="5m")
    assert _get(state, "provisioningrequests") == []
    (wl,) = _get(state, "workloads")
    check = _check(wl)
    assert (check["state"], check["message"]) == ("Ready", "the provisioning request is not needed")


def test_describe_names_the_check_a_reserving_workload_waits_for(tmp_path: Path) -> None:
    # check-capacity on a cluster without room: Provisioned=False, tried again later.
    world = _world(tmp_path, _job("big", gpus_per_pod=3))
    state = _run(tmp_path, world, until="5m")
    (wl,) = _get(state, "workloads")
    r = CliRunner().invoke(
        main,
        ["describe", "workload", wl["metadata"]["name"], "-n", "default", "--state", str(state)],
    )
    assert r.exit_code == 0, r.output
    assert (
        "waiting for admission checks: sample-prov (Pending: Capacity is not found, "
        "CA will try to find it later.)" in " ".join(r.output.split())
    )


def test_bad_node_groups_and_configs_are_refused_with_their_paths(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        NODE_GROUP.replace("MIN", "3").replace("FAIL", "0").replace("3m", "soon")
        + "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ProvisioningRequestConfig\n"
        "metadata: {name: c}\nspec: {provisioningClassName: Not_A_Class}\n"
    )
    r = CliRunner().invoke(main, ["validate", str(bad)])
    assert r.exit_code != 0
    out = " ".join(r.output.split())
    assert "spec.minSize: Invalid value: 3: must be at most maxSize (2)" in out
    assert 'spec.provisioningDelay: Invalid value: "soon"' in out
    assert "spec.provisioningClassName" in out
