"""A world's CustomResourceDefinition (apiextensions.k8s.io/v1): objects of
the kind it defines are read against its structural schema as kube-apiserver
reads them (defaults, pruning, types, required, enum, pattern, bounds,
sizes, list types, with its messages and field paths), stored, and shown by
``kuota get`` with the CRD's printer columns; the CRD itself is checked as
kube-apiserver checks it. The CRD may come in any file of the world."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CRD = Path(__file__).parent.parent / "data" / "crd" / "crontab-crd.yaml"

GOOD = """
apiVersion: v1
kind: Namespace
metadata: {name: default}
---
apiVersion: stable.example.com/v1
kind: CronTab
metadata: {name: good, namespace: default}
spec:
  cronSpec: "* * * * */5"
  image: my-cron-image
  tags: [a, b]
  extra: {anything: [1, 2]}
  bogus: 1
"""
BAD = """
apiVersion: stable.example.com/v1
kind: CronTab
metadata: {name: bad, namespace: default}
spec:
  cronSpec: hello
  image: a-very-long-image-name-indeed
  replicas: 20
  mode: Medium
  tags: [a, a, b, c]
---
apiVersion: stable.example.com/v1
kind: CronTab
metadata: {name: bad2, namespace: default}
spec:
  replicas: three
"""


class _Result:
    def __init__(self, p: subprocess.CompletedProcess[str]) -> None:
        self.exit_code = p.returncode
        self.output = p.stdout + p.stderr


def _kuota(*args: str) -> _Result:
    """The CLI in a process of its own: a CRD's kind, once registered, stays
    registered in the process that read it (as in a real one)."""
    p = subprocess.run(
        [sys.executable, "-m", "kuota", *args], capture_output=True, text=True, timeout=120
    )
    return _Result(p)


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_validate_reads_custom_resources_against_the_crd_schema(tmp_path: Path) -> None:
    objs = tmp_path / "objs.yaml"
    objs.write_text(GOOD + "---" + BAD)
    r = _kuota("validate", str(CRD), str(objs))
    assert r.exit_code == 1, r.output
    out = _flat(r.output)
    assert "ok " in out and "CustomResourceDefinition/crontabs.stable.example.com" in out
    assert 'CronTab/default/good warning: unknown field "spec.bogus"' in out
    for line in (
        'spec.cronSpec: Invalid value: "hello": spec.cronSpec in body should match '
        "'^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'",
        "spec.image: Too long: may not be more than 20 bytes",
        "spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10",
        'spec.mode: Unsupported value: "Medium": supported values: "Fast", "Slow"',
        "spec.tags: Too many: 4: must have at most 3 items",
        'spec.tags[1]: Duplicate value: "a"',
        'spec.replicas: Invalid value: "three": spec.replicas in body must be of type integer: "string"',
        "spec.cronSpec: Required value",
    ):
        assert line in out, line
    assert "5 objects in 2 files: 3 valid, 2 invalid" in out


def test_the_crd_itself_is_checked(tmp_path: Path) -> None:
    bad = CRD.read_text().replace("name: crontabs.stable.example.com", "name: crontab.example.com")
    bad = bad.replace(
        "            type: object\n            required: [cronSpec]",
        "            required: [cronSpec]",
    )
    bad = bad.replace("    storage: true", "    storage: false")
    f = tmp_path / "crd.yaml"
    f.write_text(bad)
    r = _kuota("validate", str(f))
    assert r.exit_code == 1, r.output
    out = _flat(r.output)
    assert (
        'metadata.name: Invalid value: "crontab.example.com": must be spec.names.plural+"."+spec.group'
    ) in out
    assert "must have exactly one version marked as storage version" in out
    assert (
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: "
        "must not be empty for specified object fields"
    ) in out


def test_run_stores_custom_resources_whatever_file_holds_the_crd(tmp_path: Path) -> None:
    world = tmp_path / "world"
    world.mkdir()
    (world / "a-objects.yaml").write_text(GOOD)  # read before the CRD's file
    (world / "z-crd.yaml").write_text(CRD.read_text())
    state = tmp_path / "state"
    r = _kuota("run", str(world), "--state", str(state), "--until", "1m")
    assert r.exit_code == 0, r.output
    assert 'unknown field "spec.bogus"' in r.output
    # A fresh process reads the kept state: the stored CRD makes its kind known.
    r = _kuota("get", "ct", "--state", str(state))
    assert r.exit_code == 0, r.output
    assert r.output.split("\n")[0].split() == ["NAME", "SPEC", "REPLICAS", "AGE"]
    assert r.output.split("\n")[1].split()[:7] == ["good", "*", "*", "*", "*", "*/5", "1"]
    r = _kuota("get", "crontabs", "good", "--state", str(state), "-o", "json")
    assert r.exit_code == 0, r.output
    obj = json.loads(r.output)
    # Defaulted (replicas), pruned (bogus), unknown fields kept where preserved (extra).
    assert obj["spec"] == {
        "cronSpec": "* * * * */5",
        "image": "my-cron-image",
        "tags": ["a", "b"],
        "extra": {"anything": [1, 2]},
        "replicas": 1,
    }
    r = _kuota("get", "crd", "-o", "json", "--state", str(state))
    (crd,) = json.loads(r.output)["items"]
    assert [c["type"] for c in crd["status"]["conditions"]] == ["NamesAccepted", "Established"]


def test_cel_rules_the_environment_lacks_are_said_not_evaluated(tmp_path: Path) -> None:
    crd = CRD.read_text().replace(
        "            required: [cronSpec]\n",
        "            required: [cronSpec]\n            x-kubernetes-validations:\n"
        "            - {rule: self.replicas <= 5, message: too many}\n"
        '            - {rule: "!format.dns1123Label().validate(self.image).hasValue()"}\n',
    )
    f = tmp_path / "crd.yaml"
    f.write_text(crd)
    r = _kuota("validate", str(f))
    assert r.exit_code == 0, r.output
    out = _flat(r.output)
    assert (
        "warning: spec.versions[0].schema.openAPIV3Schema.properties[spec]"
        ".x-kubernetes-validations[1].rule: not evaluated (kuota's CEL environment has no "
        "format.dns1123Label())"
    ) in out
    assert "x-kubernetes-validations[0]" not in out  # evaluated: nothing to say
