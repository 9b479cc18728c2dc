"""The real kubectl against ``kuota serve``: a CRD's CEL rules
(``x-kubernetes-validations``) refuse a write as kube-apiserver does (422,
``The Widget "x" is invalid: spec: Invalid value: "object": <message>``),
transition rules (``self == oldSelf``) on updates only, ``optionalOldSelf``
rules on both (oldSelf none on create)."""

from __future__ import annotations

from pathlib import Path

from tests.server.conftest import needs_kubectl

pytestmark = needs_kubectl

CRD = Path(__file__).resolve().parents[1] / "data" / "crd" / "widget-cel-crd.yaml"
WORLD = "{apiVersion: v1, kind: Namespace, metadata: {name: team}}\n"
WIDGET = """
apiVersion: example.com/v1
kind: Widget
metadata: {{name: {name}, namespace: team}}
spec: {spec}
"""


def test_kubectl_writes_are_held_to_the_crd_rules(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    world = tmp_path / "world.yaml"
    world.write_text(WORLD)
    s = serve(str(world))
    s.ok("apply", "-f", str(CRD))

    bad = WIDGET.format(name="w1", spec="{minReplicas: 5, maxReplicas: 4, image: docker.io/x}")
    r = s.kubectl("apply", "-f", "-", input=bad)
    assert r.returncode == 1
    err = " ".join(r.stderr.split())
    assert 'The Widget "w1" is invalid:' in err, err
    assert 'spec: Invalid value: "object": minReplicas (5) exceeds maxReplicas (4)' in err
    assert "spec.image: Forbidden: images come from registry.example.com" in err

    good = WIDGET.format(name="w1", spec="{owner: ana, tags: [a]}")
    assert "widget.example.com/w1 created" in s.ok("apply", "-f", "-", input=good)
    # A transition rule binds updates: the owner may not change...
    r = s.kubectl("apply", "-f", "-", input=good.replace("ana", "bob"))
    assert r.returncode == 1
    err = " ".join(r.stderr.split())
    assert 'spec.owner: Invalid value: "string": owner is immutable' in err, err
    # ...while other fields may.
    assert "configured" in s.ok("apply", "-f", "-", input=good.replace("[a]", "[a, b]"))
    assert s.json("get", "widget", "w1", "-n", "team")["spec"]["owner"] == "ana"

    # optionalOldSelf: on create oldSelf is none (level starts at 3 at most),
    # on update it holds the old value (level may only grow).
    r = s.kubectl("apply", "-f", "-", input=WIDGET.format(name="w2", spec="{level: 5}"))
    assert 'spec.level: Invalid value: "integer": level starts at 3 at most' in " ".join(
        r.stderr.split()
    ), r.stderr
    s.ok("apply", "-f", "-", input=WIDGET.format(name="w2", spec="{level: 2}"))
    r = s.kubectl("apply", "-f", "-", input=WIDGET.format(name="w2", spec="{level: 1}"))
    assert 'spec.level: Invalid value: "integer": level may only grow' in " ".join(
        r.stderr.split()
    ), r.stderr
    assert "configured" in s.ok(
        "apply", "-f", "-", input=WIDGET.format(name="w2", spec="{level: 6}")
    )
