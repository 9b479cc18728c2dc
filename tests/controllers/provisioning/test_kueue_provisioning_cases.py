"""Cases of Kueue's own ProvisioningRequest admission-check tests
(kubernetes-sigs/kueue@ff69552e, pkg/controller/admissionchecks/provisioning/
{admissioncheck_reconciler,controller}_test.go), translated to ``kuota run``:
the same checks, configs, flavors and workload, only what the Go test
asserts. Each test names the Go test and case; tests/scenarios/INDEX.md lists
them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kuota.cli.main import main

PROV = "kueue.x-k8s.io/provisioning-request"


def _check(name: str, params: str = "") -> str:
    return f"""\
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {{name: {name}}}
spec:
  controllerName: {PROV}{params}
"""


def _params(group: str, kind: str, name: str) -> str:
    return f"\n  parameters: {{apiGroup: {group}, kind: {kind}, name: {name}}}"


def _config(extra: str = "") -> str:
    return f"""\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ProvisioningRequestConfig
metadata: {{name: config1}}
spec:
  provisioningClassName: class1
  parameters: {{p1: v1}}{extra}
  retryStrategy: {{backoffLimitCount: 3, backoffBaseSeconds: 60, backoffMaxSeconds: 1800}}
"""


def _run(tmp_path: Path, *docs: str, until: str = "1s") -> Path:
    world = tmp_path / "world.yaml"
    world.write_text("---\n".join(docs))
    state = tmp_path / "state"
    r = CliRunner().invoke(
        main, ["run", str(world), "--state", str(state), "--no-live", "--until", until]
    )
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    return state


def _get(state: Path, kind: str) -> list[dict[str, Any]]:
    r = CliRunner().invoke(main, ["get", kind, "-A", "--state", str(state), "-o", "json"])
    assert r.exit_code == 0, r.output
    items: list[dict[str, Any]] = json.loads(r.output)["items"]
    return items


def test_reconcile_admission_check_active_condition(tmp_path: Path) -> None:
    """admissioncheck_reconciler_test.go TestReconcileAdmissionCheck: "no
    parameters specified", "bad ref group", "bad ref kind", "config missing"
    and "config found" (one check each), and "unrelated check" (another
    controller's check gets no condition from this one)."""
    docs = [
        _check("no-params"),
        _check("bad-group", _params("bad.group", "ProvisioningRequestConfig", "config1")),
        _check("bad-kind", _params("kueue.x-k8s.io", "BadKind", "config1")),
        _check("missing", _params("kueue.x-k8s.io", "ProvisioningRequestConfig", "config2")),
        _check("found", _params("kueue.x-k8s.io", "ProvisioningRequestConfig", "config1")),
        _config(),
    ]
    state = _run(tmp_path, *docs)
    got = {}
    for ac in _get(state, "admissionchecks"):
        (c,) = (c for c in ac["status"]["conditions"] if c["type"] == "Active")
        got[ac["metadata"]["name"]] = (
            c["status"],
            c["reason"],
            c["message"],
            c["observedGeneration"],
        )
    assert got == {
        "no-params": ("False", "BadParametersRef", "missing parameters reference", 1),
        "bad-group": (
            "False",
            "BadParametersRef",
            'wrong group "bad.group", expecting "kueue.x-k8s.io": bad parameters reference',
            1,
        ),
        "bad-kind": (
            "False",
            "BadParametersRef",
            'wrong kind "BadKind", expecting "ProvisioningRequestConfig": bad parameters reference',
            1,
        ),
        "missing": (
            "False",
            "BadParametersRef",
            'provisioningrequestconfigs.kueue.x-k8s.io "config2" not found',
            1,
        ),
        "found": ("True", "Active", "The admission check is active", 1),
    }


# The TestReconcile world: flv1 (node label f1l1=v1, a toleration) for cpu,
# flv2 (f2l1=v1) for memory, so ps1 lands on flv1 and ps2 on flv2.
QUEUES = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: flv1}
spec:
  nodeLabels: {f1l1: v1}
  tolerations: [{key: f1t1k, operator: Equal, value: f1t1v, effect: NoSchedule}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: flv2}
spec: {nodeLabels: {f2l1: v1}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q1}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: flv1, resources: [{name: cpu, nominalQuota: 10}]}]
  - coveredResources: [memory]
    flavors: [{name: flv2, resources: [{name: memory, nominalQuota: 1G}]}]
  admissionChecksStrategy: {admissionChecks: [{name: check1}]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: ns, name: lq}
spec: {clusterQueue: q1}
---
apiVersion: v1
kind: Namespace
metadata: {name: ns}
"""


def _workload(count1: int, count2: int) -> str:
    return f"""\
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {{name: wl, namespace: ns}}
spec:
  queueName: lq
  podSets:
  - name: ps1
    count: {count1}
    template:
      spec:
        restartPolicy: Never
        containers: [{{name: c, image: x, resources: {{requests: {{cpu: "1"}}}}}}]
  - name: ps2
    count: {count2}
    template:
      spec:
        restartPolicy: Never
        containers: [{{name: c, image: x, resources: {{requests: {{memory: 1M}}}}}}]
"""


def _check1() -> str:
    return _check("check1", _params("kueue.x-k8s.io", "ProvisioningRequestConfig", "config1"))


def test_request_and_templates_with_config(tmp_path: Path) -> None:
    """controller_test.go TestReconcile "with config": request wl-check1-1
    with one pod template per pod set (ppt-wl-check1-1-<podset>, the
    flavor's node selector and tolerations merged in, Kueue's managed label,
    owned by the request), the config's class and parameters, and the
    ProvisioningRequestCreated event. (The Go test admits ps2 with 3 of its
    4 pods by hand; here ps2 has 3.)"""
    state = _run(tmp_path, QUEUES, _check1(), _config(), _workload(4, 3))
    (req,) = _get(state, "provisioningrequests")
    assert req["metadata"]["name"] == "wl-check1-1"
    assert req["metadata"]["namespace"] == "ns"
    assert req["metadata"]["labels"]["kueue.x-k8s.io/managed"] == "true"
    assert req["metadata"]["ownerReferences"][0]["name"] == "wl"
    assert req["spec"]["podSets"] == [
        {"podTemplateRef": {"name": "ppt-wl-check1-1-ps1"}, "count": 4},
        {"podTemplateRef": {"name": "ppt-wl-check1-1-ps2"}, "count": 3},
    ]
    assert req["spec"]["provisioningClassName"] == "class1"
    assert req["spec"]["parameters"] == {"p1": "v1"}
    templates = {t["metadata"]["name"]: t for t in _get(state, "podtemplates")}
    assert set(templates) == {"ppt-wl-check1-1-ps1", "ppt-wl-check1-1-ps2"}
    for t in templates.values():
        assert t["metadata"]["labels"]["kueue.x-k8s.io/managed"] == "true"
        (owner,) = t["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["name"], owner["controller"]) == (
            "ProvisioningRequest",
            "wl-check1-1",
            True,
        )
    ps1 = templates["ppt-wl-check1-1-ps1"]["template"]["spec"]
    assert ps1["nodeSelector"] == {"f1l1": "v1"}
    assert ps1["tolerations"] == [
        {"key": "f1t1k", "operator": "Equal", "value": "f1t1v", "effect": "NoSchedule"}
    ]
    assert templates["ppt-wl-check1-1-ps2"]["template"]["spec"]["nodeSelector"] == {"f2l1": "v1"}
    created = [e for e in _get(state, "events") if e["reason"] == "ProvisioningRequestCreated"]
    assert [(e["involvedObject"]["name"], e["type"], e["message"]) for e in created] == [
        ("wl", "Normal", 'Created ProvisioningRequest: "wl-check1-1"')
    ]


def test_request_only_for_the_pod_set_using_a_managed_resource(tmp_path: Path) -> None:
    """controller_test.go TestReconcile "when request is needed for one
    PodSet (resource request)": with managedResources [memory], only ps2
    (which requests memory) is in the request, with its template."""
    config = _config("\n  managedResources: [memory]")
    state = _run(tmp_path, QUEUES, _check1(), config, _workload(4, 3))
    (req,) = _get(state, "provisioningrequests")
    assert req["spec"]["podSets"] == [
        {"podTemplateRef": {"name": "ppt-wl-check1-1-ps2"}, "count": 3}
    ]
    assert [t["metadata"]["name"] for t in _get(state, "podtemplates")] == ["ppt-wl-check1-1-ps2"]


def test_only_zero_count_pod_sets_need_no_request(tmp_path: Path) -> None:
    """controller_test.go TestReconcile "with only zero-count PodSets": no
    request; the check turns Ready with "the provisioning request is not
    needed" and the AdmissionCheckUpdated event says so."""
    state = _run(tmp_path, QUEUES, _check1(), _config(), _workload(0, 0))
    assert _get(state, "provisioningrequests") == []
    (wl,) = _get(state, "workloads")
    (check,) = wl["status"]["admissionChecks"]
    assert (check["name"], check["state"], check["message"]) == (
        "check1",
        "Ready",
        "the provisioning request is not needed",
    )
    updated = [
        e["message"] for e in _get(state, "events") if e["reason"] == "AdmissionCheckUpdated"
    ]
    assert (
        "Admission check check1 updated state from Pending to Ready with message: "
        "the provisioning request is not needed"
    ) in updated, updated
