"""The priority-boost annotation is read as Go's strconv.ParseInt(v, 10, 32):
an optional sign and ASCII digits within int32. Python's int() would also take
"1_0", surrounding spaces and non-ASCII digits, which Kueue's webhook refuses."""

from __future__ import annotations

import pytest

from kuota.api.decode import decode_yaml
from kuota.api.features import FEATURE_GATE_DEFAULTS
from kuota.api.kueue.webhooks import parse_int32

WL = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: w
  namespace: ns
  annotations: {{kueue.x-k8s.io/priority-boost: "{boost}"}}
spec:
  queueName: lq
  podSets:
  - name: main
    count: 1
    template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]}}}}
"""
GATES = {**FEATURE_GATE_DEFAULTS, "PriorityBoost": True}


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("5", 5),
        ("+5", 5),
        ("-3", -3),
        ("0", 0),
        ("2147483647", 2**31 - 1),
        ("-2147483648", -(2**31)),
    ],
)
def test_what_go_parses_is_accepted(value: str, parsed: int) -> None:
    assert parse_int32(value) == parsed
    (doc,) = decode_yaml(WL.format(boost=value), "w.yaml", gates=GATES)
    assert doc.ok, doc.errors


@pytest.mark.parametrize("value", ["1_0", " 5", "5 ", "٣", "2147483648", "0x10", "1.5"])
def test_what_go_refuses_is_refused(value: str) -> None:
    assert parse_int32(value) is None
    (doc,) = decode_yaml(WL.format(boost=value), "w.yaml", gates=GATES)
    assert [e.detail for e in doc.errors] == ["must be a valid signed integer"]
