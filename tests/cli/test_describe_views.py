"""``kuota describe clusterqueue|localqueue|cohort|node`` show quota, usage,
borrowing and lending per flavor and resource, and a node's GPUs with the
pods holding them; a preempted workload's describe names its preemptor."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kuota.cli.main import main

QUICKSTART = Path(__file__).parent.parent.parent / "examples" / "quickstart"


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> str:
    d = str(tmp_path_factory.mktemp("describe") / "s")
    r = CliRunner().invoke(
        main, ["run", str(QUICKSTART), "--state", d, "--until", "3h30m", "--no-live"]
    )
    assert r.exit_code == 0, r.output
    return d


def kuota(*args: str) -> str:
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == 0, r.output
    return r.output


def stored(state: str, *args: str) -> Any:
    return json.loads(kuota("get", *args, "-o", "json", "--state", state))


def table(out: str, title: str) -> list[dict[str, str]]:
    """The rows of the table printed under ``title``, by column."""
    lines = out.splitlines()
    at = lines.index(title) + 1
    head = re.split(r"\s{3,}", lines[at].strip())
    rows = []
    for line in lines[at + 1 :]:
        cells = re.split(r"\s{3,}", line.strip())
        if len(cells) != len(head):
            break
        rows.append(dict(zip(head, cells, strict=True)))
    return rows


def test_describe_clusterqueue_shows_quota_usage_and_borrowing_per_flavor(state: str) -> None:
    cq = stored(state, "cq", "team-vision")
    out = kuota("describe", "cq", "team-vision", "--state", state)
    rows = {(r["FLAVOR"], r["RESOURCE"]): r for r in table(out, "Quota and usage:")}
    for rg in cq["spec"]["resourceGroups"]:
        for fq in rg["flavors"]:
            for rq in fq["resources"]:
                row = rows[(fq["name"], rq["name"])]
                assert row["NOMINAL"] == str(rq["nominalQuota"])
                assert row["BORROWING LIMIT"] == str(rq.get("borrowingLimit", "-"))
                assert row["LENDING LIMIT"] == str(rq.get("lendingLimit", "-"))
    for fu in cq["status"]["flavorsReservation"]:
        for ru in fu["resources"]:
            assert rows[(fu["name"], ru["name"])]["RESERVED"] == str(ru["total"])
    gpu = rows[("h100-spot", "nvidia.com/gpu")]
    assert int(gpu["RESERVED"]) > int(gpu["NOMINAL"])  # borrowing from the cohort then
    assert int(gpu["BORROWED"]) == int(gpu["RESERVED"]) - int(gpu["NOMINAL"])
    assert "Local Queues:         vision/default" in out


def test_describe_localqueue_and_cohort(state: str) -> None:
    lq = stored(state, "lq", "default", "-n", "nlp")
    out = kuota("describe", "lq", "default", "-n", "nlp", "--state", state)
    rows = {(r["FLAVOR"], r["RESOURCE"]): r for r in table(out, "Usage:")}
    for fu in lq["status"]["flavorsReservation"]:
        for ru in fu["resources"]:
            assert rows[(fu["name"], ru["name"])]["RESERVED"] == str(ru["total"])
    out = kuota("describe", "cohort", "research", "--state", state)
    assert "Cluster Queues:       team-nlp, team-vision" in out
    rows = {
        (r["FLAVOR"], r["RESOURCE"]): r for r in table(out, "Its ClusterQueues' quota and usage:")
    }
    nominal = sum(
        int(rq["nominalQuota"])
        for name in ("team-nlp", "team-vision")
        for rg in stored(state, "cq", name)["spec"]["resourceGroups"]
        for fq in rg["flavors"]
        if fq["name"] == "a100"
        for rq in fq["resources"]
        if rq["name"] == "nvidia.com/gpu"
    )
    assert rows[("a100", "nvidia.com/gpu")]["NOMINAL"] == str(nominal)


def test_describe_node_shows_its_gpus_and_the_pods_holding_them(state: str) -> None:
    pods = stored(state, "pods", "-A")["items"]
    on: dict[str, list[tuple[str, int]]] = {}
    for p in pods:
        if p["status"].get("phase") in ("Succeeded", "Failed") or not p["spec"].get("nodeName"):
            continue
        gpus = sum(
            int((c.get("resources", {}).get("requests") or {}).get("nvidia.com/gpu", 0))
            for c in p["spec"]["containers"]
        )
        if gpus:
            on.setdefault(p["spec"]["nodeName"], []).append((p["metadata"]["name"], gpus))
    node = sorted(on)[0]
    out = kuota("describe", "node", node, "--state", state)
    holders = table(out, f"GPU pods: ({len(on[node])} holding GPUs)")
    assert sorted((r["NAME"], int(r["NVIDIA.COM/GPU"])) for r in holders) == sorted(on[node])
    (gpu,) = [r for r in table(out, "Allocated resources:") if r["RESOURCE"] == "nvidia.com/gpu"]
    assert gpu["REQUESTED"].split()[0] == str(sum(n for _, n in on[node]))


def test_describe_workload_names_its_preemptor(state: str) -> None:
    workloads = stored(state, "wl", "-A")["items"]
    by_uid = {w["metadata"]["uid"]: w["metadata"] for w in workloads}
    preempted = [
        (w, m[1])
        for w in workloads
        for c in w["status"].get("conditions", [])
        if (m := re.match(r"Preempted to accommodate a workload \(UID: ([^,]+)", c["message"]))
    ]
    assert preempted
    w, uid = preempted[0]
    meta = w["metadata"]
    out = kuota("describe", "wl", meta["name"], "-n", meta["namespace"], "--state", state)
    who = by_uid[uid]
    assert f"Preempted by:  {who['namespace']}/{who['name']} (UID: {uid})" in out
