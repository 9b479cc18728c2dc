"""examples/elastic-jobs with the real kubectl against ``kuota serve``, as its
README shows: Kueue's sample-scalable-job.yaml scaled up with ``kubectl
patch`` while another Job holds the rest of the quota gets a second Workload
slice that waits, its two new pods SchedulingGated; when the other Job ends
the slice is admitted, the first one finished (WorkloadSliceReplaced) and
five pods run; scaled down, the admitted slice shrinks in place."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from tests.server.conftest import EXAMPLES, Served, needs_kubectl, start_server

from kuota.cli.main import main

JOB = "sample-elastic-job"


def _until(what: str, check: Callable[[], Any], timeout: float = 90) -> Any:
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.3)
    raise AssertionError(f"{what}: not within {timeout}s (last: {last!r})")


def _workloads(s: Served) -> dict[str, dict[str, Any]]:
    items = json.loads(s.ok("get", "workloads", "-o", "json"))["items"]
    return {
        w["metadata"]["name"]: w for w in items if w["metadata"]["name"].startswith("job-sample")
    }


def _cond(w: dict[str, Any], ctype: str) -> dict[str, Any] | None:
    return next((c for c in w.get("status", {}).get("conditions", []) if c["type"] == ctype), None)


def _true(w: dict[str, Any], ctype: str) -> bool:
    c = _cond(w, ctype)
    return c is not None and c["status"] == "True"


def _pods(s: Served) -> dict[str, int]:
    items = json.loads(s.ok("get", "pods", "-l", f"job-name={JOB}", "-o", "json"))["items"]
    out = {"gated": 0, "running": 0}
    for p in items:
        gates = [g["name"] for g in p["spec"].get("schedulingGates") or []]
        if "kueue.x-k8s.io/elastic-job" in gates:
            out["gated"] += 1
        elif p.get("status", {}).get("phase") == "Running":
            out["running"] += 1
    return out


def _wait(s: Served, what: str, pred: Callable[[dict[str, dict[str, Any]]], bool]) -> Any:
    """The workloads, once ``pred`` holds for them."""

    def check() -> Any:
        wls = _workloads(s)
        return wls if pred(wls) else None

    return _until(what, check)


def _scale(s: Served, n: int) -> None:
    s.ok("patch", "job", JOB, "--type=merge", "-p", json.dumps({"spec": {"parallelism": n}}))


@needs_kubectl
def test_the_elastic_jobs_example(tmp_path: Path) -> None:
    s = start_server(
        tmp_path / "state", str(EXAMPLES / "elastic-jobs"), "--speed", "60", home=tmp_path / "home"
    )
    try:
        (first,) = _until(
            "the first slice admitted",
            lambda: [n for n, w in _workloads(s).items() if _true(w, "Admitted")],
        )
        _scale(s, 5)
        wls = _wait(s, "a second slice", lambda w: len(w) == 2)
        (second,) = [n for n in wls if n != first]
        ann = wls[second]["metadata"]["annotations"]
        assert ann["kueue.x-k8s.io/workload-slice-replacement-for"] == f"default/{first}"
        assert wls[second]["spec"]["podSets"][0]["count"] == 5
        # The other Job holds 200m of 500m for 10 (simulated) minutes: the
        # slice waits and the two new pods are made but gated.
        assert not _true(wls[second], "QuotaReserved")
        _until("two pods gated", lambda: _pods(s)["gated"] == 2, timeout=30)

        wls = _wait(s, "the second slice admitted", lambda w: _true(w[second], "Admitted"))
        fin = _cond(wls[first], "Finished")
        assert fin is not None and (fin["status"], fin["reason"]) == (
            "True",
            "WorkloadSliceReplaced",
        )
        _until("five pods running", lambda: _pods(s) == {"gated": 0, "running": 5})

        _scale(s, 2)
        wls = _wait(s, "scaled in place", lambda w: w[second]["spec"]["podSets"][0]["count"] == 2)
        assert _true(wls[second], "Admitted")
        assert len(wls) == 2  # no new slice for a scale-down
    finally:
        s.stop()


SAMPLE = Path(__file__).parent / "kueue_examples" / "sample-scalable-job.yaml"
SETUP = Path(__file__).parents[1] / "jobset" / "kueue_examples" / "single-clusterqueue-setup.yaml"
NODE = """\
apiVersion: v1
kind: Node
metadata: {name: node-1}
status: {capacity: {cpu: "8", memory: 32Gi, pods: "110"}}
"""


def test_kueues_sample_scalable_job_as_its_docs_say(tmp_path: Path) -> None:
    """Kueue's docs (concepts/elastic_workload.md): "The example above will
    result in an admitted workload and 3 running pods." Its Workload is the
    first of a slice chain: marked elastic and naming itself the chain."""
    node = tmp_path / "node.yaml"
    node.write_text(NODE)
    state = tmp_path / "state"
    args = ["run", str(SETUP), str(node), str(SAMPLE), "--state", str(state), "--no-live"]
    # (at 30 s: each pod runs its `sleep 60`, then the next three start)
    r = CliRunner().invoke(main, [*args, "--until", "30s"])
    assert r.exit_code == 0, r.output
    wls = json.loads(
        CliRunner().invoke(main, ["get", "workloads", "--state", str(state), "-o", "json"]).output
    )
    (wl,) = wls["items"]
    assert _true(wl, "Admitted")
    ann = wl["metadata"]["annotations"]
    assert ann["kueue.x-k8s.io/elastic-job"] == "true"
    assert ann["kueue.x-k8s.io/workload-slice-name"] == wl["metadata"]["name"]
    pods = json.loads(
        CliRunner().invoke(main, ["get", "pods", "--state", str(state), "-o", "json"]).output
    )
    assert [p["status"]["phase"] for p in pods["items"]] == ["Running"] * 3
    # 100 completions, 3 at a time, 60 s each: done in 34 minutes
    r = CliRunner().invoke(main, ["run", "--state", str(state), "--no-live"])
    assert r.exit_code == 0, r.output
    pods = json.loads(
        CliRunner().invoke(main, ["get", "pods", "--state", str(state), "-o", "json"]).output
    )
    phases = [p["status"]["phase"] for p in pods["items"]]
    assert phases.count("Succeeded") == 100, phases
