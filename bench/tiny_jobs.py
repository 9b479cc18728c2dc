"""A world of N tiny Jobs (issue 24.10) through ``kuota run``, as a user runs
it: one YAML file, one ClusterQueue, every Job created at once (one pod, a
tenth of a CPU, a minute of run time). Prints wall time, Jobs per second and
peak memory (RSS) per Job, for each N.

    python bench/tiny_jobs.py [--jobs 10000 100000] [--profile FILE]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import kuota

HEAD = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: "100"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: tiny, name: main}
spec: {clusterQueue: cq}
---
apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  capacity: {cpu: "100", memory: 1Ti, pods: "1000"}
  allocatable: {cpu: "100", memory: 1Ti, pods: "1000"}
"""

JOB = """\
---
apiVersion: batch/v1
kind: Job
metadata:
  namespace: tiny
  name: job-{i}
  labels: {{kueue.x-k8s.io/queue-name: main}}
spec:
  template:
    metadata:
      annotations: {{kuota.dev/duration: 1m}}
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: i
        resources:
          requests: {{cpu: 100m}}
"""


def write_world(path: Path, jobs: int) -> None:
    with path.open("w") as f:
        f.write(HEAD)
        for i in range(jobs):
            f.write(JOB.format(i=i))


def run(jobs: int, profile: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        world = Path(tmp) / "world.yaml"
        write_world(world, jobs)
        kuota = [sys.executable, "-m", "kuota.cli.main"]
        if profile:
            kuota = [
                sys.executable,
                "-m",
                "cProfile",
                "-o",
                f"{profile}.{jobs}",
                "-m",
                "kuota.cli.main",
            ]
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        t0 = time.perf_counter()
        r = subprocess.run(
            [*kuota, "run", "--no-live", str(world)],
            capture_output=True,
            text=True,
            env={**os.environ, "KUOTA_PROGRESS_AFTER": "3600"},
        )
        wall = time.perf_counter() - t0
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        if r.returncode != 0:
            sys.exit(f"kuota run failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
        # ru_maxrss is the largest child's so far: smallest runs go first
        note = " (not above an earlier run's peak)" if peak_kib <= before else ""
        print(
            f"tiny jobs: {jobs} Jobs in {wall:.1f} s, {jobs / wall:.0f} Jobs/s, "
            f"peak RSS {peak_kib / 1024:.0f} MiB, {peak_kib / jobs:.1f} KiB per Job{note}"
        )


def main() -> None:
    print(f"build: {kuota.build()}, {kuota.interpreter()} (the kuota processes run on it)")
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--profile", default=None, help="write cProfile stats to FILE.N")
    args = ap.parse_args()
    for n in sorted(args.jobs):  # smallest first: ru_maxrss only grows
        run(n, args.profile)


if __name__ == "__main__":
    main()
