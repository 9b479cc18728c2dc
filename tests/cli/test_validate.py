"""``kuota validate`` at the command line: exit codes, messages, robustness."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kuota.cli.main import main

CQ = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-a}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: a100
      resources:
      - {name: cpu, nominalQuota: "8"}
      - {name: nvidia.com/gpu, nominalQuota: "4"}
"""


def run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.output


def write(tmp_path: Path, name: str, text: str | bytes) -> str:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(p)


def test_valid_file(tmp_path: Path) -> None:
    code, out = run("validate", write(tmp_path, "cq.yaml", CQ))
    assert code == 0
    assert "1 valid, 0 invalid" in out


def test_all_errors_of_one_object_reported_together(tmp_path: Path) -> None:
    bad = CQ.replace('nominalQuota: "8"', 'nominalQuota: "-8"').replace(
        "{name: nvidia.com/gpu,", "{name: memory,"
    )
    code, out = run("validate", write(tmp_path, "cq.yaml", bad))
    assert code == 1
    assert "ClusterQueue/team-a" in out
    assert "cq.yaml (document 1)" in out
    assert (
        'spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid value: "-8": '
        "must be greater than or equal to 0" in out
    )
    assert "spec.resourceGroups[0].flavors[0].resources[1].name: Invalid value" in out


def test_unknown_field_is_a_warning(tmp_path: Path) -> None:
    code, out = run(
        "validate", write(tmp_path, "cq.yaml", CQ.replace("spec:\n", "spec:\n  cohrt: x\n"))
    )
    assert code == 0
    assert 'warning: unknown field "spec.cohrt"' in out


def test_missing_file_exits_2(tmp_path: Path) -> None:
    code, out = run("validate", str(tmp_path / "nope.yaml"))
    assert code == 2
    assert "no such file" in out


@pytest.mark.parametrize(
    "text",
    [b"a: [1, 2\n", b"name: \xc3\x28 bad utf-8\n", b"key: value\n  bad indent: x\n"],
    ids=["unclosed", "not-utf8", "bad-indent"],
)
def test_unreadable_yaml_exits_2(tmp_path: Path, text: bytes) -> None:
    code, out = run("validate", write(tmp_path, "x.yaml", text))
    assert code == 2
    assert "x.yaml" in out
    assert "Traceback" not in out


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("- just\n- a list\n", "must be a mapping"),
        ("apiVersion: v1\nkind: Unicorn\nmetadata: {name: x}\n", 'no matches for kind "Unicorn"'),
        ("kind: ClusterQueue\nmetadata: {name: x}\n", "apiVersion: Required value"),
        (
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: x}\nspec: 7\n",
            "spec: Invalid value",
        ),
        (
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: Bad_Name}\n",
            "metadata.name",
        ),
        (
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w}\nspec: {podSets: [{count: x, template: {spec: {containers: []}}}]}\n",
            "spec.podSets[0].count",
        ),
    ],
)
def test_bad_documents_are_invalid_not_crashes(tmp_path: Path, text: str, needle: str) -> None:
    code, out = run("validate", write(tmp_path, "x.yaml", text))
    assert code == 1, out
    assert needle in out


def test_deep_nesting_and_alias_bomb(tmp_path: Path) -> None:
    deep = (
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\nspec: "
        + "[" * 5000
        + "]" * 5000
        + "\n"
    )
    code, out = run("validate", write(tmp_path, "deep.yaml", deep))
    assert code in (1, 2) and "Traceback" not in out
    bomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        bomb.append(f"{chr(97 + i)}: &{chr(97 + i)} [" + ", ".join([f"*{chr(96 + i)}"] * 10) + "]")
    text = (
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: x}\nspec:\n"
        + "\n".join("  " + line for line in bomb)
    )
    code, out = run("validate", write(tmp_path, "bomb.yaml", text))
    assert code == 1
    assert "nodes" in out


def test_directory_recursion_and_json(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub", "a.yaml", CQ)
    write(tmp_path, "b.yml", CQ.replace("team-a", "team-b").replace('"4"', '"-4"'))
    write(tmp_path, "ignored.txt", "not yaml: [")
    code, out = run("validate", "--json", str(tmp_path))
    assert code == 1
    data = json.loads(out)
    assert data["files"] == 2 and data["valid"] == 1 and data["invalid"] == 1
    bad = next(d for d in data["documents"] if not d["valid"])
    assert bad["object"] == "ClusterQueue/team-b"
    assert bad["errors"][0]["path"] == "spec.resourceGroups[0].flavors[0].resources[1].nominalQuota"


def test_scenario_objects_validated_with_their_position(tmp_path: Path) -> None:
    scenario = """\
name: s
objects:
- apiVersion: kueue.x-k8s.io/v1beta2
  kind: ResourceFlavor
  metadata: {name: default}
steps:
- apply:
  - apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata: {name: q, namespace: ns}
    spec: {stopPolicy: Pause}
- cycles: 1
"""
    code, out = run("validate", write(tmp_path, "s.yaml", scenario))
    assert code == 1
    assert "steps[0].apply[0].spec.stopPolicy: Unsupported value" in out


def test_multi_document_and_list(tmp_path: Path) -> None:
    text = (
        CQ
        + "---\n"
        + "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata: {name: team-a}\n"
    )
    code, out = run("validate", write(tmp_path, "m.yaml", text))
    assert code == 0
    assert "2 valid" in out


def test_a_bad_creation_timestamp_shows_the_value_written(tmp_path: Path) -> None:
    text = (
        CQ.replace(
            "metadata: {name: team-a}", 'metadata: {name: team-a, creationTimestamp: "yesterday"}'
        )
        + "---\n"
        + "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  namespace: team\n"
        + "  creationTimestamp: 2026-13-45\nspec:\n  template:\n    spec:\n"
        + "      restartPolicy: Never\n      containers: [{name: main, image: busybox}]\n"
    )
    code, out = run("validate", write(tmp_path, "t.yaml", text))
    assert code == 1
    assert 'metadata.creationTimestamp: Invalid value: "yesterday"' in out
    assert 'metadata.creationTimestamp: Invalid value: "2026-13-45"' in out
    assert 'Invalid value: "value"' not in out


def test_a_world_files_kueue_configuration_is_checked_as_kueue_starts(tmp_path: Path) -> None:
    # kuota run reads a Configuration document as the world's; validate checks
    # it as Kueue does at start-up instead of calling it an unknown kind.
    good = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n---\n" + CQ
    code, out = run("validate", write(tmp_path, "good.yaml", good))
    assert code == 0, out
    assert "Configuration" in out and "2 valid, 0 invalid" in out
    bad = (
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
        "waitForPodsReady: {timeout: 5x}\n"
    )
    code, out = run("validate", write(tmp_path, "bad.yaml", bad))
    assert code == 1
    assert 'waitForPodsReady.timeout: Invalid value: "5x"' in out


def peak_rss_kib(*args: str) -> int:
    """``kuota ARGS`` in a process of its own; its peak memory (RSS, KiB)."""
    code = (
        "import resource, sys\n"
        "from kuota.cli.main import main\n"
        "try:\n    main(sys.argv[1:])\n"
        "except SystemExit:\n    pass\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "KUOTA_PROGRESS_AFTER": "3600"},
    )
    return int(r.stderr.strip().splitlines()[-1])


def test_a_large_file_is_validated_in_bounded_memory(tmp_path: Path) -> None:
    """Issue 24.9: 819k documents took 820 MB; each document is now checked
    and printed as it is read, so 8 times the documents cost no more memory."""
    doc = "---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: ns-{i}}}\n"
    small, large = tmp_path / "small.yaml", tmp_path / "large.yaml"
    small.write_text("".join(doc.format(i=i) for i in range(5_000)))
    large.write_text("".join(doc.format(i=i) for i in range(40_000)))
    base = peak_rss_kib("validate", "-q", str(small))
    more = peak_rss_kib("validate", "-q", str(large))
    # Held documents cost about 1 KiB each: 35,000 more were 29 MiB on main.
    assert more - base < 12 * 1024, (base, more)


@pytest.mark.parametrize(
    ("api_version", "kind", "says", "not_says"),
    [
        # a typo of a known kind: the kind meant, with its versions
        ("kueue.x-k8s.io/v1beta2", "Clusterqueue", 'did you mean "ClusterQueue"', "CRDs"),
        ("kueue.x-k8s.io/v1beta2", "LocalQueues", 'did you mean "LocalQueue"', "CRDs"),
        # a kind of a group kuota does not know: kubectl's advice, no guess
        ("tekton.dev/v1", "Task", "ensure CRDs are installed first", "did you mean"),
        # a close name in another group is not a typo of this one
        ("example.com/v1", "Cluster", "ensure CRDs are installed first", "RayCluster"),
        # Kueue's docs ship kind cluster configs beside their manifests
        (
            "kind.x-k8s.io/v1alpha4",
            "Cluster",
            "kind (Kubernetes in Docker) cluster configuration",
            "CRDs",
        ),
    ],
)
def test_unknown_kind_says_what_to_do(
    tmp_path: Path, api_version: str, kind: str, says: str, not_says: str
) -> None:
    text = f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: x}}\n"
    code, out = run("validate", write(tmp_path, "x.yaml", text))
    assert code == 1, out
    assert f'no matches for kind "{kind}" in version "{api_version}"' in out
    assert says in out and not_says not in out
    assert len(out) < 1000  # one line of advice, not every kind kuota reads


def test_validate_kinds_lists_what_kuota_reads() -> None:
    code, out = run("validate", "--kinds")
    assert code == 0
    lines = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert "kueue.x-k8s.io/v1beta1, kueue.x-k8s.io/v1beta2" in lines["ClusterQueue"]
    assert lines["LocalQueue"].split()[1] == "true" and lines["ClusterQueue"].split()[1] == "false"
    code, out = run("validate", "--kinds", "--json")
    rows = {r["kind"]: r for r in json.loads(out)}
    assert rows["Job"] == {"kind": "Job", "apiVersions": ["batch/v1"], "namespaced": True}
    code, out = run("validate")
    assert code == 2 and "PATHS" in out
