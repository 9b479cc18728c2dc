"""A CRD's CEL rules (``x-kubernetes-validations``) run on its objects as
kube-apiserver runs them: in ``kuota validate`` and ``kuota run``, with
kube-apiserver's field paths and messages (``spec: Invalid value:
"object": <message>``), messageExpression, fieldPath and reason; a rule
that does not compile refuses the CRD."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CRD = Path(__file__).parent.parent / "data" / "crd" / "widget-cel-crd.yaml"
OBJS = """
apiVersion: v1
kind: Namespace
metadata: {name: default}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: good, namespace: default}
spec: {minReplicas: 2, maxReplicas: 4, image: registry.example.com/w, memory: 512Mi, tags: [a, b]}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: bad-and-far-too-long, namespace: default}
spec: {minReplicas: 5, maxReplicas: 4, image: docker.io/w, memory: 2Gi, tags: [a, B1]}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: mistyped, namespace: default}
spec: {minReplicas: two}
"""


def _kuota(*args: str) -> tuple[int, str]:
    p = subprocess.run(
        [sys.executable, "-m", "kuota", *args], capture_output=True, text=True, timeout=120
    )
    return p.returncode, " ".join((p.stdout + p.stderr).split())


def test_validate_runs_the_crd_rules(tmp_path: Path) -> None:
    objs = tmp_path / "objs.yaml"
    objs.write_text(OBJS)
    code, out = _kuota("validate", str(CRD), str(objs))
    assert code == 1, out
    assert "ok tests" not in out and "Widget/default/good" in out
    for line in (
        '<root>: Invalid value: "object": widget names have at most 12 characters',
        'spec: Invalid value: "object": minReplicas (5) exceeds maxReplicas (4)',
        "spec.image: Forbidden: images come from registry.example.com",
        'spec: Invalid value: "object": at most 1Gi of memory',
        "spec.tags: Invalid value: \"array\": failed rule: self.all(t, t.matches('^[a-z]+$'))",
        # A value of the wrong type: the rules are not run (hasBlockingErr).
        'spec.minReplicas: Invalid value: "two": spec.minReplicas in body must be of type integer',
        "some validation rules were not checked because the object was invalid",
    ):
        assert line in out, line
    assert "5 objects in 2 files: 3 valid, 2 invalid" in out


def test_run_refuses_an_object_its_crd_rules_refuse(tmp_path: Path) -> None:
    world = tmp_path / "world"
    world.mkdir()
    (world / "crd.yaml").write_text(CRD.read_text())
    (world / "objs.yaml").write_text(OBJS)
    code, out = _kuota("run", str(world), "--until", "1m")
    assert code != 0
    assert "minReplicas (5) exceeds maxReplicas (4)" in out


def test_a_rule_that_does_not_compile_refuses_the_crd(tmp_path: Path) -> None:
    f = tmp_path / "crd.yaml"
    f.write_text(
        CRD.read_text().replace("self.minReplicas <= self.maxReplicas", "self.minReplicas <=")
    )
    code, out = _kuota("validate", str(f))
    assert code == 1, out
    assert (
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: "
        'Invalid value: "self.minReplicas <=": compilation failed: ERROR: <input>:1:20: Syntax error'
    ) in out


LIBRARY = Path(__file__).parent.parent / "data" / "crd" / "cel-library-crd.yaml"
PROBES = """
apiVersion: v1
kind: Namespace
metadata: {name: default}
---
apiVersion: example.com/v1
kind: Probe
metadata: {name: good, namespace: default}
spec: {name: p-abc, code: ABC, memory: 512Mi, sizes: [1, 2, 3], tags: [a, b]}
---
apiVersion: example.com/v1
kind: Probe
metadata: {name: bad, namespace: default}
spec:
  name: "Q-a12-"
  code: x
  note: other
  memory: 2Gi
  sizes: [6, 5, 4]
  tags: [b, x, b]
"""


def test_kubernetes_cel_library(tmp_path: Path) -> None:
    """Each rule of the library CRD holds for "good" and fails for "bad"."""
    objs = tmp_path / "probes.yaml"
    objs.write_text(PROBES)
    code, out = _kuota("validate", str(LIBRARY), str(objs))
    assert code == 1, out
    # "good" has no error line under it: the next document's status follows.
    assert "(document 2): Probe/default/good error" in out
    bad = out[out.index("Probe/default/bad") :]
    messages = [
        "strings-lower",
        "strings-split",
        "strings-replace",
        "strings-substring",
        "strings-index",
        "strings-char",
        "lists-sorted",
        "lists-sum",
        "lists-index",
        "sets-contains",
        "sets-intersects",
        "regex",
        "macros",
        "macros-map",
        "optional",
        "quantity",
        "quantity-add",
    ]
    for m in messages:
        assert f'spec: Invalid value: "object": {m} ' in bad + " ", m
    assert "strings-join" not in bad  # (it holds for both)
    assert "4 objects in 2 files: 3 valid, 1 invalid" in out


NET = Path(__file__).parent.parent / "data" / "crd" / "cel-net-crd.yaml"
NET_PROBES = """
apiVersion: v1
kind: Namespace
metadata: {name: default}
---
apiVersion: example.com/v1
kind: NetProbe
metadata: {name: good, namespace: default}
spec: {address: 10.1.2.3, v6: "2001:db8::1", network: 10.1.0.0/16, endpoint: "https://api.example.com:8443/v1?x=1"}
---
apiVersion: example.com/v1
kind: NetProbe
metadata: {name: bad, namespace: default}
spec: {address: 127.0.0.1, v6: "2001:DB8::2", network: 10.1.0.1/8, endpoint: "http://other.org/v2?debug=1"}
---
apiVersion: example.com/v1
kind: NetProbe
metadata: {name: unparsable, namespace: default}
spec: {address: 010.0.0.1, v6: "2001:db8::1", network: 10.0.0.0/16, endpoint: "https://api.example.com:8443/v1"}
"""


def test_kubernetes_ip_cidr_and_url_libraries(tmp_path: Path) -> None:
    """Kubernetes' ip, cidr and url libraries: each rule holds for "good"
    and fails for "bad"; an address netip refuses (an IPv4 octet with a
    leading zero) is no IP, and ip() of it fails with Kubernetes' message."""
    objs = tmp_path / "probes.yaml"
    objs.write_text(NET_PROBES)
    code, out = _kuota("validate", str(NET), str(objs))
    assert code == 1, out
    assert "(document 2): NetProbe/default/good error" in out
    bad = out[out.index("NetProbe/default/bad") : out.index("NetProbe/default/unparsable")]
    for m in (
        "ip-loopback",
        "ip-canonical",
        "ip-equal",
        "cidr-contains",
        "cidr-masked",
        "cidr-prefix",
        "url-scheme",
        "url-host",
        "url-query",
    ):
        assert f'spec: Invalid value: "object": {m} ' in bad + " ", m
    assert "ip-family" not in bad
    rest = out[out.index("NetProbe/default/unparsable") :]
    assert 'spec: Invalid value: "object": ip-family' in rest
    assert (
        'spec: Invalid value: "object": IP Address "010.0.0.1" parse error during conversion '
        'from string: ParseAddr("010.0.0.1"): IPv4 field has octet with leading zero '
        "evaluating rule: ip-loopback"
    ) in rest
    assert "5 objects in 2 files: 3 valid, 2 invalid" in out
