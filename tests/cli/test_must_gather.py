"""``kuota must-gather`` on a kept state: the bundle's summary names every
pending workload with its reason and every inactive queue with why; no
credential leaks into it (an env var holding a token, the state's files)."""

from __future__ import annotations

import base64
import gzip
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
import yaml
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
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: held}
spec:
  namespaceSelector: {}
  stopPolicy: Hold
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: orphan, namespace: team}
spec: {clusterQueue: no-such-cq}
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
    # Every inactive queue with Kueue's own reason and message.
    assert "Inactive queues: 3" in summary
    for line in (
        "ClusterQueue broken: FlavorNotFound: Can't admit new workloads:"
        " references missing ResourceFlavor(s): missing-flavor.",
        "ClusterQueue held: Stopped: Can't admit new workloads: is stopped.",
        "LocalQueue team/orphan: ClusterQueueDoesNotExist:"
        " Can't submit new workloads to clusterQueue",
    ):
        assert f"  {line}\n" in summary, summary
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


# --------------------------------------------------------------- real Secrets
SECRET_VALUE = "s3cr3t-db-password-7a6b5c"
SA_TOKEN = "eyJhbGciOiJSUzI1NiJ9.sa-token-body.sig-2b3c4d"
SECRETS = f"""
apiVersion: v1
kind: Secret
metadata: {{name: db, namespace: team}}
type: Opaque
data: {{password: {base64.b64encode(SECRET_VALUE.encode()).decode()}}}
stringData: {{extra: {SECRET_VALUE}-plain}}
---
apiVersion: v1
kind: Secret
metadata:
  name: builder-token
  namespace: team
  annotations: {{kubernetes.io/service-account.name: builder}}
type: kubernetes.io/service-account-token
data: {{token: {base64.b64encode(SA_TOKEN.encode()).decode()}}}
"""


def _bundle(path: Path) -> dict[str, bytes]:
    with tarfile.open(path) as tar:
        return {
            m.name.removeprefix("must-gather/"): tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }


def test_stored_secrets_keep_their_names_and_lose_their_data(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    world.write_text(WORLD + "---" + SECRETS)
    state = tmp_path / "state"
    done = kuota("run", str(world), "--state", str(state), "--until", "1m", "--no-live")
    assert done.returncode == 0, done.stdout + done.stderr
    bundle = tmp_path / "mg.tar.gz"
    out = kuota("must-gather", "--state", str(state), "-o", str(bundle))
    assert out.returncode == 0, out.stdout + out.stderr
    files = _bundle(bundle)
    secrets = yaml.safe_load(files["objects/core/secrets.yaml"])["items"]
    by_name = {s["metadata"]["name"]: s for s in secrets}
    # The objects are there (an admin sees which Secrets exist and their keys) ...
    assert set(by_name) == {"db", "builder-token"}
    assert set(by_name["db"]["data"]) >= {"password"}
    assert by_name["builder-token"]["type"] == "kubernetes.io/service-account-token"
    # ... and no form of any value is, in any file or in the compressed bundle.
    forms = [SECRET_VALUE, SA_TOKEN]
    forms += [base64.b64encode(v.encode()).decode() for v in forms]
    everything = b"".join(files.values())
    for form in forms:
        assert form.encode() not in everything, form
    raw = gzip.decompress(bundle.read_bytes())
    for form in forms:
        assert form.encode() not in raw, form


# --------------------------------------------------------------- the examples
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _true(obj: dict[str, Any], ctype: str) -> bool:
    return any(
        c.get("type") == ctype and c.get("status") == "True"
        for c in (obj.get("status") or {}).get("conditions") or []
    )


def _metric_sum(text: str, name: str) -> float:
    return sum(
        float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name + "{")
    )


@pytest.mark.parametrize(
    ("example", "until"), [("quickstart", "3h"), ("dra", "3h"), ("bizgroups", None)]
)
def test_must_gather_on_the_examples(tmp_path: Path, example: str, until: str | None) -> None:
    """Every Workload of the bundle that is neither finished nor admitted is
    in summary.txt with a reason; the metrics snapshot shows every
    ClusterQueue and the pending ones; every budget spent is named."""
    state = tmp_path / "state"
    args = ["run", str(EXAMPLES / example), "--state", str(state), "--no-live"]
    done = kuota(*args, *(["--until", until] if until else []))
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 1: a refusal the example shows
    bundle = tmp_path / "mg.tar.gz"
    out = kuota("must-gather", "--state", str(state), "-o", str(bundle))
    assert out.returncode == 0, out.stdout + out.stderr
    files = _bundle(bundle)
    summary = files["summary.txt"].decode()
    wls = yaml.safe_load(files["objects/kueue.x-k8s.io/workloads.yaml"])["items"]
    waiting = {
        f"{w['metadata']['namespace']}/{w['metadata']['name']}": w
        for w in wls
        if not _true(w, "Finished") and not _true(w, "Admitted")
    }
    lines = {
        key: why.strip()
        for line in summary.split("\n\nInactive queues")[0].splitlines()[3:]
        for key, _, why in [line.strip().partition(": ")]
    }
    assert set(lines) == set(waiting), summary
    assert all(lines.values()), summary
    assert f"Pending workloads: {len(waiting)}" in out.stdout

    # Every queue whose Active condition is not True, with why (the objects' own condition).
    inactive = []
    for kind, rtype in (("ClusterQueue", "clusterqueues"), ("LocalQueue", "localqueues")):
        for q in yaml.safe_load(files.get(f"objects/kueue.x-k8s.io/{rtype}.yaml", b"items: []"))[
            "items"
        ]:
            if not _true(q, "Active"):
                m = q["metadata"]
                inactive.append(
                    f"{kind} {m.get('namespace', '') + '/' * ('namespace' in m)}{m['name']}: "
                )
    block = summary.split("\n\nInactive queues")[1].split("\n\n")[0]
    assert f"Inactive queues: {len(inactive)}" in summary, summary
    shown = [x.strip() for x in block.splitlines()[1:]]
    assert len(shown) == len(inactive), summary
    for head in inactive:
        line = next((x for x in shown if x.startswith(head)), None)
        assert line is not None and line.removeprefix(head).strip(), (head, summary)

    metrics = files["metrics.txt"].decode()
    for cq in yaml.safe_load(files["objects/kueue.x-k8s.io/clusterqueues.yaml"])["items"]:
        assert f'kueue_cluster_queue_status{{cluster_queue="{cq["metadata"]["name"]}"' in metrics
    queued = [w for w in waiting.values() if not _true(w, "QuotaReserved")]
    assert _metric_sum(metrics, "kueue_pending_workloads") == len(queued)

    spent = []
    for b in yaml.safe_load(
        files.get("objects/kuota.dev/bizgroupresourcequotas.yaml", b"items: []")
    )["items"]:
        used, hard = b["status"].get("used", {}), b["status"].get("hard", {})
        for key in hard:
            if key.startswith("cash/") and key in used and float(used[key]) >= float(hard[key]):
                spent.append(f"BizGroupResourceQuota {b['metadata']['name']}: {key} spent:")
    assert f"Quota-tree nodes over budget: {len(spent)}" in summary
    for head in spent:
        assert head in summary
    if example == "bizgroups":  # the example's README: vision burns 24 of its 20 GPU-hours
        assert (
            "BizGroupResourceQuota vision: cash/limits.nvidia.com/gpu spent: used 24 of 20"
        ) in summary
