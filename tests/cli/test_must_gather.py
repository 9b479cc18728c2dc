"""``kuota must-gather`` on a kept state: the bundle's summary names every
pending workload with its reason and every inactive queue with why; no
credential leaks into it (an env var holding a token, the state's files)."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

from tests.cli.test_predict import WORLD, job

TOKEN = "hf_s3cr3tT0kenValue4242"
FILE_TOKEN = "static-token-9f8e7d6c5b4a"

INACTIVE = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: broken}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: missing-flavor
      resources: [{name: cpu, nominalQuota: "4"}]
"""


def kuota(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kuota", *args], capture_output=True, text=True, timeout=120
    )


def test_must_gather_summary_and_no_secrets(tmp_path: Path) -> None:
    secret_job = job("with-token", "busy", 4, "30m", "2026-01-01T00:03:00Z").replace(
        "        image: x\n",
        f"        image: x\n        env:\n        - {{name: HF_TOKEN, value: {TOKEN}}}\n"
        "        - {name: MODE, value: plain-visible}\n",
    )
    jobs = [
        job("running", "busy", 4, "1h", "2026-01-01T00:00:00Z"),
        job("second", "busy", 4, "30m", "2026-01-01T00:01:00Z"),
        secret_job,
    ]
    world = tmp_path / "world.yaml"
    world.write_text(WORLD + "---" + INACTIVE + "---" + "---".join(jobs))
    state = tmp_path / "state"
    done = kuota("run", str(world), "--state", str(state), "--until", "10m", "--no-live")
    assert done.returncode == 0, done.stdout + done.stderr
    # What a served state keeps beside the journal: a token file, a kubeconfig.
    (state / "tokens.csv").write_text(f'{FILE_TOKEN},admin,1,"system:masters"\n')
    (state / "kubeconfig").write_text(f"users:\n- user: {{token: {FILE_TOKEN}}}\n")

    bundle = tmp_path / "mg.tar.gz"
    out = kuota("must-gather", "--state", str(state), "-o", str(bundle))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Pending workloads: 2" in out.stdout

    with tarfile.open(bundle) as tar:
        files = {
            m.name.removeprefix("must-gather/"): tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }
    summary = files["summary.txt"].decode()
    pending = [line for line in summary.splitlines() if line.startswith("  team/")]
    assert len(pending) == 2
    for name in ("job-second-", "job-with-token-"):
        line = next(x for x in pending if name in x)
        assert "insufficient unused quota for nvidia.com/gpu" in line
    assert "ClusterQueue broken:" in summary and "missing-flavor" in summary
    assert "objects/batch/jobs.yaml" in files and "objects/core/events.yaml" in files
    assert "objects/kueue.x-k8s.io/workloads.yaml" in files and "nodes.txt" in files
    assert b"plain-visible" in files["objects/batch/jobs.yaml"]  # other env values stay
    everything = b"".join(files.values())
    assert TOKEN.encode() not in everything
    assert FILE_TOKEN.encode() not in everything
    raw = bundle.read_bytes()
    assert TOKEN.encode() not in raw and FILE_TOKEN.encode() not in raw


def test_must_gather_bad_state(tmp_path: Path) -> None:
    out = kuota("must-gather", "--state", str(tmp_path / "nope"), "-o", str(tmp_path / "x.tgz"))
    assert out.returncode == 2 and "nope" in out.stderr and "Traceback" not in out.stderr
