"""Why a gated pod waits, at the command line over a kept state: ``kuota get
pods`` prints ``SchedulingGated`` as ``kubectl get pods`` does (the API
server's ``PodScheduled=False`` reason ``SchedulingGated`` on a pod created
gated); ``kuota describe pod`` names the Workload that holds it (a group's by
its pod-group name, a single pod's by ownership), that Workload's state and
the admission core's reason with numbers, and the group's pod counts;
``kuota describe lws|sts|deploy`` do the same per Workload of the set
(integrations.md §2-§4); ``kuota get workloads -o wide`` names each
Workload's owner as ``kueuectl list workloads`` does."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from click.testing import CliRunner

from kuota.cli.main import main
from kuota.store import clone
from kuota.store.resources import POD

from .world import T0, control_plane, node, obj

GPU4 = '{requests: {cpu: "1", nvidia.com/gpu: "4"}, limits: {nvidia.com/gpu: "4"}}'
NODES = "".join(
    f"""---
apiVersion: v1
kind: Node
metadata: {{name: n{i}, labels: {{gpu: h100}}}}
status:
  allocatable: {{cpu: "32", memory: 256Gi, nvidia.com/gpu: "8", pods: "110"}}
"""
    for i in range(6)
)
# ClusterQueue serving (16 GPUs) holds the blocker Job (8 GPUs, 08:00-09:00)
# and the LWS vllm: 2 groups of a leader and a worker of 4 GPUs each (8 per
# group). Group 0 fits beside the blocker; group 1 waits for it to end.
# ClusterQueue web (4 GPUs) holds the Deployment web (2 pods of 4 GPUs, each
# its own Workload: one waits for ever) and the StatefulSet db (2 pods of 4:
# 8, more than web can ever give; its second pod is never created, ordered).
# The pod group pair says 2 pods and has 1: Kueue makes no Workload for it.
WORLD = f"""\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
integrations:
  frameworks: [batch/job, pod, deployment, statefulset, leaderworkerset.x-k8s.io/leaderworkerset]
---
apiVersion: v1
kind: Namespace
metadata: {{name: team}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: h100}}
spec: {{nodeLabels: {{gpu: h100}}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: serving}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: h100
      resources: [{{name: cpu, nominalQuota: "100"}}, {{name: nvidia.com/gpu, nominalQuota: "16"}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: web}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: h100
      resources: [{{name: cpu, nominalQuota: "100"}}, {{name: nvidia.com/gpu, nominalQuota: "4"}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{namespace: team, name: main}}
spec: {{clusterQueue: serving}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{namespace: team, name: web}}
spec: {{clusterQueue: web}}
{NODES}---
apiVersion: batch/v1
kind: Job
metadata:
  namespace: team
  name: blocker
  creationTimestamp: "2026-01-01T08:00:00Z"
  labels: {{kueue.x-k8s.io/queue-name: main}}
spec:
  template:
    metadata: {{annotations: {{kuota.dev/duration: 1h}}}}
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: i
        resources: {{requests: {{cpu: "1", nvidia.com/gpu: "8"}}, limits: {{nvidia.com/gpu: "8"}}}}
---
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  namespace: team
  name: vllm
  creationTimestamp: "2026-01-01T08:01:00Z"
  labels: {{kueue.x-k8s.io/queue-name: main}}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        containers: [{{name: vllm, image: "vllm:1", resources: {GPU4}}}]
    workerTemplate:
      spec:
        containers: [{{name: vllm, image: "vllm:1", resources: {GPU4}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  namespace: team
  name: web
  creationTimestamp: "2026-01-01T08:01:00Z"
  labels: {{kueue.x-k8s.io/queue-name: web}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers: [{{name: c, image: "server:1", resources: {GPU4}}}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  namespace: team
  name: db
  creationTimestamp: "2026-01-01T08:01:00Z"
  labels: {{kueue.x-k8s.io/queue-name: web}}
spec:
  replicas: 2
  serviceName: db
  selector: {{matchLabels: {{app: db}}}}
  template:
    metadata: {{labels: {{app: db}}}}
    spec:
      containers: [{{name: c, image: "db:1", resources: {GPU4}}}]
---
apiVersion: v1
kind: Pod
metadata:
  namespace: team
  name: pair-a
  creationTimestamp: "2026-01-01T08:01:00Z"
  labels: {{kueue.x-k8s.io/queue-name: main, kueue.x-k8s.io/pod-group-name: pair}}
  annotations: {{kueue.x-k8s.io/pod-group-total-count: "2"}}
spec:
  containers: [{{name: c, image: i, resources: {{requests: {{cpu: "1"}}}}}}]
"""


def _run(tmp: Any, *until: str) -> str:
    (tmp / "world.yaml").write_text(WORLD)
    state = str(tmp / "state")
    r = CliRunner().invoke(
        main, ["run", str(tmp / "world.yaml"), "--state", state, "--no-live", *until]
    )
    assert r.exit_code == 0, r.output
    return state


@pytest.fixture(scope="module")
def waiting(tmp_path_factory: pytest.TempPathFactory) -> str:
    """At 08:30: the blocker runs, LWS group 1 waits for its 8 GPUs."""
    return _run(tmp_path_factory.mktemp("gated"), "--until", "30m")


@pytest.fixture(scope="module")
def settled(tmp_path_factory: pytest.TempPathFactory) -> str:
    """After 09:00: the blocker ended and group 1 was admitted."""
    return _run(tmp_path_factory.mktemp("settled"))


def cli(state: str, *args: str) -> str:
    r = CliRunner().invoke(main, [*args, "-n", "team", "--state", state])
    assert r.exit_code == 0, r.output
    return r.output


def statuses(state: str) -> dict[str, str]:
    out = cli(state, "get", "pods")
    rows = out.split("\n\n")[0].splitlines()[1:]
    return {line.split()[0]: line.split()[2] for line in rows}


def workload_named(state: str, prefix: str) -> str:
    rows = cli(state, "get", "workloads").splitlines()[1:]
    (name,) = [line.split()[0] for line in rows if line.startswith(prefix)]
    return name


def field(out: str, label: str) -> str:
    """The value of ``Label:`` in describe's output."""
    (line,) = [line for line in out.splitlines() if line.startswith(label + ":")]
    return line[len(label) + 1 :].strip()


# ------------------------------------------------------------------ get pods
def test_get_pods_shows_gated_pods_scheduling_gated_and_admitted_ones_running(
    waiting: str,
) -> None:
    st = statuses(waiting)
    assert st["vllm-0"] == st["vllm-0-1"] == "Running"
    # Group 1, the pod group's lone pod, the StatefulSet's first pod: gated.
    for pod in ("vllm-1", "vllm-1-1", "pair-a", "db-0"):
        assert st[pod] == "SchedulingGated", (pod, st)
    web = sorted(s for p, s in st.items() if p.startswith("web-"))
    assert web == ["Running", "SchedulingGated"]
    out = cli(waiting, "get", "pods")
    assert "Pending" not in out
    # Not "not placed": the scheduler has not tried them.
    assert "not placed" not in out
    assert "5 pod(s) gated by Kueue (kueue.x-k8s.io/admission)" in out


def test_the_api_server_marks_a_pod_created_gated_and_the_scheduler_replaces_it() -> None:
    """PodScheduled=False/SchedulingGated on create (any gate, here not
    Kueue's); once the gate is removed the pod is bound: PodScheduled=True."""
    cp = control_plane()
    cp.create([node("n0", 0, {})])
    pod = obj(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"namespace": "default", "name": "p"},
            "spec": {
                "schedulingGates": [{"name": "example.com/wait"}],
                "containers": [{"name": "c", "image": "i"}],
            },
        }
    )
    cp.create([pod])
    cp.run(until=T0 + timedelta(minutes=1))
    stored = cp.store.get(POD, "default", "p")
    (c,) = stored.status.conditions
    assert (c.type, c.status, c.reason, c.message) == (
        "PodScheduled",
        "False",
        "SchedulingGated",
        "Scheduling is blocked due to non-empty scheduling gates",
    )
    assert c.last_transition_time == T0 and stored.spec.node_name is None
    new = clone(stored)
    new.spec.scheduling_gates = None
    cp.store.update(new)
    cp.run(until=T0 + timedelta(minutes=2))
    stored = cp.store.get(POD, "default", "p")
    assert stored.spec.node_name == "n0"
    scheduled = [c for c in stored.status.conditions if c.type == "PodScheduled"]
    assert [(c.status, c.reason) for c in scheduled] == [("True", None)]


# ------------------------------------------------------------------ describe pod
def test_describe_gated_pod_names_its_groups_workload_and_why_it_waits(waiting: str) -> None:
    group1 = workload_named(waiting, "leaderworkerset-vllm-1-")
    out = cli(waiting, "describe", "pod", "vllm-1-1")
    assert field(out, "Scheduling Gates") == "kueue.x-k8s.io/admission"
    assert field(out, "Workload") == f"{group1} (pending)"
    # Each pod set named: the group's leader and its worker each wait.
    assert field(out, "Pending") == (
        "pod set leader: insufficient unused quota for nvidia.com/gpu in flavor h100: "
        "4 requested, 0 available (nominal 16, no cohort to borrow from); "
        "pod set worker: insufficient unused quota for nvidia.com/gpu in flavor h100: "
        "4 requested, 0 available (nominal 16, no cohort to borrow from)"
    )
    assert field(out, "Pod Group") == f"{group1} (pods 2/2 created, 2 gated)"
    conditions = out[out.index("Conditions") :]
    assert "PodScheduled  False   SchedulingGated" in conditions
    # A StatefulSet's group, one pod of two made so far, more than its queue has.
    out = cli(waiting, "describe", "pod", "db-0")
    sts = workload_named(waiting, "statefulset-db-")
    assert field(out, "Workload") == f"{sts} (pending)"
    assert field(out, "Pending").startswith(
        "nvidia.com/gpu in flavor h100: 8 requested, more than this ClusterQueue can ever get (4;"
    )
    assert field(out, "Pod Group") == f"{sts} (pods 1/2 created, 1 gated)"


def test_describe_pod_of_a_group_still_short_of_pods_and_of_a_single_pod(waiting: str) -> None:
    out = cli(waiting, "describe", "pod", "pair-a")
    assert field(out, "Workload") == "pair (not created yet)"
    assert field(out, "Pod Group") == "pair (pods 1/2 created, 1 gated)"
    assert "Pending:" not in out
    # A Deployment's pod is a Workload of its own: found by ownership, no group.
    st = statuses(waiting)
    (gated,) = [p for p, s in st.items() if p.startswith("web-") and s == "SchedulingGated"]
    out = cli(waiting, "describe", "pod", gated)
    assert field(out, "Workload") == f"{workload_named(waiting, f'pod-{gated}-')} (pending)"
    assert "4 requested, 0 available (nominal 4" in field(out, "Pending")
    assert "Pod Group:" not in out
    # A Job's pod: its Job's Workload.
    (blocker,) = [p for p in st if p.startswith("blocker-")]
    out = cli(waiting, "describe", "pod", blocker)
    assert field(out, "Scheduling Gates") == "<none>"
    assert field(out, "Workload") == (
        f"{workload_named(waiting, 'job-blocker-')} (admitted by ClusterQueue serving)"
    )


def test_once_admitted_describe_says_so_and_the_pods_run(settled: str) -> None:
    st = statuses(settled)
    assert all(st[p] == "Running" for p in ("vllm-0", "vllm-0-1", "vllm-1", "vllm-1-1"))
    group1 = workload_named(settled, "leaderworkerset-vllm-1-")
    out = cli(settled, "describe", "pod", "vllm-1-1")
    assert field(out, "Scheduling Gates") == "<none>"
    assert field(out, "Workload") == f"{group1} (admitted by ClusterQueue serving)"
    assert "Pending:" not in out and "SchedulingGated" not in out
    assert field(out, "Pod Group") == f"{group1} (pods 2/2 created, 0 gated)"


# ------------------------------------------------------------------ describe sets
def test_describe_leaderworkerset_gives_each_groups_workload_state_and_reason(
    waiting: str, settled: str
) -> None:
    out = cli(waiting, "describe", "lws", "vllm")
    assert field(out, "Replicas") == "2 desired | 1 ready | 2 updated (groups)"
    assert field(out, "Group Size") == "2"
    assert field(out, "Pods Status") == "2 Running / 2 Waiting (2 gated) / 0 Succeeded / 0 Failed"
    assert field(out, "Workloads") == "2 (1 admitted, 1 pending)"
    g0 = workload_named(waiting, "leaderworkerset-vllm-0-")
    g1 = workload_named(waiting, "leaderworkerset-vllm-1-")
    assert (
        f"  group 0: {g0} (admitted by ClusterQueue serving), pods 2/2 created, 0 gated\n"
        f"  group 1: {g1} (pending), pods 2/2 created, 2 gated\n"
        "    Pending: pod set leader: insufficient unused quota for nvidia.com/gpu in "
        "flavor h100: 4 requested, 0 available (nominal 16, no cohort to borrow from); "
        "pod set worker: insufficient unused quota for nvidia.com/gpu in flavor h100: "
        "4 requested, 0 available (nominal 16, no cohort to borrow from)\n"
    ) in out
    out = cli(settled, "describe", "leaderworkerset", "vllm")
    assert field(out, "Workloads") == "2 (2 admitted)"
    assert f"  group 1: {g1} (admitted by ClusterQueue serving), pods 2/2 created, 0 gated\n" in out


def test_describe_statefulset_and_deployment(waiting: str) -> None:
    out = cli(waiting, "describe", "sts", "db")
    assert field(out, "Replicas") == "2 desired | 1 total | 0 ready"
    assert field(out, "Workloads") == "1 (1 pending)"
    sts = workload_named(waiting, "statefulset-db-")
    assert f"  {sts} (pending), pods 1/2 created, 1 gated\n    Pending: nvidia.com/gpu" in out

    out = cli(waiting, "describe", "deployment", "web")
    assert field(out, "Replicas").startswith("2 desired | 2 updated | 2 total | 1 available")
    assert field(out, "Pods Status") == "1 Running / 1 Waiting (1 gated) / 0 Succeeded / 0 Failed"
    assert field(out, "Workloads") == "2 (1 admitted, 1 pending)"
    lines = [line for line in out.splitlines() if line.startswith("  pod web-")]
    assert len(lines) == 2
    assert sum("(admitted by ClusterQueue web)" in line for line in lines) == 1
    assert sum(line.endswith("(pending)") for line in lines) == 1
    assert "    Pending: insufficient unused quota for nvidia.com/gpu" in out

    r = CliRunner().invoke(main, ["describe", "lws", "nope", "-n", "team", "--state", waiting])
    assert r.exit_code == 1
    assert 'leaderworkersets.leaderworkerset.x-k8s.io "nope" not found' in r.output


# ------------------------------------------------------------------ get workloads
def test_get_workloads_wide_names_each_workloads_owner(waiting: str) -> None:
    out = cli(waiting, "get", "workloads", "-o", "wide")
    head, *rows = out.splitlines()
    assert head.split()[-4:] == ["JOB", "TYPE", "JOB", "NAME"]
    owner = {r.split()[0].rsplit("-", 1)[0]: r.split()[-2:] for r in rows}
    assert owner["leaderworkerset-vllm-1"] == ["leaderworkerset.leaderworkerset.x-k8s.io", "vllm"]
    assert owner["statefulset-db"] == ["statefulset.apps", "db"]
    assert owner["job-blocker"] == ["job.batch", "blocker"]
    pods = [o for name, o in owner.items() if name.startswith("pod-web-")]
    assert len(pods) == 2 and all(t == "pod" and n.startswith("web-") for t, n in pods)
    assert "JOB TYPE" not in cli(waiting, "get", "workloads")
