"""``kuota predict`` on a world with known answers: a ClusterQueue of 4 GPUs
(StrictFIFO), one 4-GPU job running for 1h from 00:00, two 4-GPU jobs
waiting (30m and 20m), and a second queue with room."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

WORLD = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: gpu}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: busy}
spec:
  namespaceSelector: {}
  queueingStrategy: StrictFIFO
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: gpu
      resources: [{name: nvidia.com/gpu, nominalQuota: "4"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: idle}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: gpu
      resources: [{name: nvidia.com/gpu, nominalQuota: "4"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: busy, namespace: team}
spec: {clusterQueue: busy}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: idle, namespace: team}
spec: {clusterQueue: idle}
---
apiVersion: v1
kind: Node
metadata: {name: node-a}
status:
  capacity: {cpu: "64", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}
"""


def job(name: str, queue: str, gpus: int, duration: str, at: str | None = None) -> str:
    stamp = f'\n  creationTimestamp: "{at}"' if at else ""
    return f"""
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: team{stamp}
  labels: {{kueue.x-k8s.io/queue-name: {queue}}}
spec:
  template:
    metadata:
      annotations: {{kuota.dev/duration: {duration}}}
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: x
        resources:
          requests: {{nvidia.com/gpu: "{gpus}"}}
          limits: {{nvidia.com/gpu: "{gpus}"}}
"""


def kuota(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kuota", *args], capture_output=True, text=True, timeout=120
    )


def _state(tmp_path: Path) -> Path:
    world = tmp_path / "world.yaml"
    jobs = [
        job("running", "busy", 4, "1h", "2026-01-01T00:00:00Z"),
        job("second", "busy", 4, "30m", "2026-01-01T00:01:00Z"),
        job("third", "busy", 4, "20m", "2026-01-01T00:02:00Z"),
    ]
    world.write_text(WORLD + "---" + "---".join(jobs))
    state = tmp_path / "state"
    done = kuota("run", str(world), "--state", str(state), "--until", "10m", "--no-live")
    assert done.returncode == 0, done.stdout + done.stderr
    return state


def _predict(tmp_path: Path, state: Path, text: str) -> dict:
    f = tmp_path / "new.yaml"
    f.write_text(text)
    out = kuota("predict", str(f), "--state", str(state), "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    return json.loads(out.stdout)


def test_predict_known_answers(tmp_path: Path) -> None:
    state = _state(tmp_path)

    now = _predict(tmp_path, state, job("quick", "idle", 2, "5m"))
    assert now["admitted_now"] is True
    assert now["flavor"] == "gpu"
    assert now["estimated_start"] == "2026-01-01T00:10:00Z"
    assert now["reason"] is None

    # Behind "second" and "third": running ends at 01:00, second runs to
    # 01:30, third to 01:50.
    later = _predict(tmp_path, state, job("mine", "busy", 4, "1h"))
    assert later["admitted_now"] is False
    assert later["position_in_cluster_queue"] == 2
    assert later["position_in_local_queue"] == 2
    assert later["estimated_start"] == "2026-01-01T01:50:00Z"
    assert "insufficient" in later["reason"] and "nvidia.com/gpu" in later["reason"]

    never = _predict(tmp_path, state, job("huge", "busy", 8, "1h"))
    assert never["admitted_now"] is False
    assert never["estimated_start"] is None
    assert "nvidia.com/gpu" in never["reason"] and "8" in never["reason"]

    # The state was only read: a second prediction sees the same present.
    again = _predict(tmp_path, state, job("mine", "busy", 4, "1h"))
    assert again == later


def test_predict_median_of_finished_for_undeclared_runs(tmp_path: Path) -> None:
    """A running job that declares no duration is taken to run as long as the
    finished ones of its queue and shape did (the median), and says so."""
    world = tmp_path / "world.yaml"
    nodur = job("open-ended", "busy", 4, "1h", "2026-01-01T02:00:00Z").replace(
        "      annotations: {kuota.dev/duration: 1h}\n", "      annotations: {}\n"
    )
    jobs = [
        job("a", "busy", 4, "10m", "2026-01-01T00:00:00Z"),
        job("b", "busy", 4, "20m", "2026-01-01T00:10:00Z"),
        job("c", "busy", 4, "60m", "2026-01-01T00:30:00Z"),
        nodur,
    ]
    world.write_text(WORLD + "---" + "---".join(jobs))
    state = tmp_path / "state"
    done = kuota("run", str(world), "--state", str(state), "--until", "2h5m", "--no-live")
    assert done.returncode == 0, done.stdout + done.stderr
    out = _predict(tmp_path, state, job("next", "busy", 4, "1h"))
    assert out["estimated_start"] == "2026-01-01T02:20:00Z"  # 02:00 + median(10m, 20m, 60m)
    ends = {e["workload"].split("/")[1].rsplit("-", 1)[0]: e for e in out["expected_ends"]}
    assert ends["job-open-ended"]["source"] == "median of finished"
    assert ends["job-open-ended"]["seconds"] == 1200
    assert ends["job-open-ended"]["samples"] == 3


def test_predict_bad_input(tmp_path: Path) -> None:
    state = _state(tmp_path)
    f = tmp_path / "bad.yaml"
    f.write_text(
        job("bad", "busy", 4, "1h").replace("restartPolicy: Never", "restartPolicy: Bogus")
    )
    out = kuota("predict", str(f), "--state", str(state))
    assert out.returncode == 2
    assert "bad.yaml" in out.stderr and "restartPolicy" in out.stderr
    assert "Traceback" not in out.stderr
    missing = kuota("predict", str(f), "--state", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "nope" in missing.stderr


def test_predict_refuses_a_job_that_exists(tmp_path: Path) -> None:
    """A job of a name the state already holds could not be submitted: no
    prediction (the fork would otherwise answer for the existing one)."""
    state = _state(tmp_path)
    f = tmp_path / "again.yaml"
    f.write_text(job("running", "busy", 4, "1h"))
    out = kuota("predict", str(f), "--state", str(state))
    assert out.returncode == 2, out.stdout
    assert "again.yaml" in out.stderr and "Job team/running already exists" in out.stderr


def _undeclared_state(tmp_path: Path, gpus: int, until: str) -> Path:
    """Finished 4-GPU runs of 10m, 20m and 60m in queue busy, then a job of
    ``gpus`` GPUs that declares no run, started at 02:00; run to ``until``
    (hh:mm; a job in queue idle then keeps the run going to that instant)."""
    world = tmp_path / "world.yaml"
    nodur = job("open-ended", "busy", gpus, "1h", "2026-01-01T02:00:00Z").replace(
        "      annotations: {kuota.dev/duration: 1h}\n", "      annotations: {}\n"
    )
    jobs = [
        job("a", "busy", 4, "10m", "2026-01-01T00:00:00Z"),
        job("b", "busy", 4, "20m", "2026-01-01T00:10:00Z"),
        job("c", "busy", 4, "60m", "2026-01-01T00:30:00Z"),
        nodur,
        job("tick", "idle", 1, "1h", f"2026-01-01T{until}:00Z"),
    ]
    world.write_text(WORLD + "---" + "---".join(jobs))
    state = tmp_path / "state"
    hours, minutes = until.split(":")
    span = f"{int(hours)}h{int(minutes)}m"
    done = kuota("run", str(world), "--state", str(state), "--until", span, "--no-live")
    assert done.returncode == 0, done.stdout + done.stderr
    return state


def _open_ended(out: dict) -> dict:
    ends = {e["workload"].split("/")[1].rsplit("-", 1)[0]: e for e in out["expected_ends"]}
    return ends["job-open-ended"]


def test_predict_median_of_its_queue_when_no_finished_run_has_its_shape(tmp_path: Path) -> None:
    """A 2-GPU run nothing of its shape ever finished: the median of its
    queue's finished runs (20m), not "runs until deleted" (which made every
    job behind it "never")."""
    state = _undeclared_state(tmp_path, 2, "02:05")
    out = _predict(tmp_path, state, job("next", "busy", 4, "1h"))
    assert out["estimated_start"] == "2026-01-01T02:20:00Z"
    end = _open_ended(out)
    assert end["source"] == "median of finished in its queue"
    assert end["seconds"] == 1200 and end["samples"] == 3


def test_predict_median_of_the_runs_longer_than_its_run_so_far(tmp_path: Path) -> None:
    """At 02:30 the open-ended job has run 30m, past the median (20m): it is
    taken to run as the finished runs longer than 30m did (60m: to 03:00),
    not to have ended already."""
    state = _undeclared_state(tmp_path, 4, "02:30")
    out = _predict(tmp_path, state, job("next", "busy", 4, "1h"))
    assert out["now"] == "2026-01-01T02:30:00Z"
    assert out["admitted_now"] is False
    assert out["estimated_start"] == "2026-01-01T03:00:00Z"
    end = _open_ended(out)
    assert end["source"] == "median of finished" and end["seconds"] == 3600
    assert end["samples"] == 1
