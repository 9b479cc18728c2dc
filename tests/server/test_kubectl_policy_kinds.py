"""The built-in kinds users keep beside Kueue, through the real kubectl against
``kuota serve``: ``kubectl autoscale`` (an autoscaling/v1
HorizontalPodAutoscaler, sent in protobuf, stored as v2), ``kubectl create
quota`` (ResourceQuota: ``status.used`` counted, creates over ``hard``
refused with kube-apiserver's Forbidden text), ``kubectl create pdb``
(policy/v1) and ``kubectl create ingress`` (networking.k8s.io/v1), with
kubectl's usual columns and the API server's field errors."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.server.conftest import EXAMPLES, Served, needs_kubectl, start_server


def _pod(name: str, cpu: str | None, limit: str | None = None) -> str:
    res: dict[str, dict[str, str]] = {}
    if cpu is not None:
        res["requests"] = {"cpu": cpu}
    if limit is not None:
        res["limits"] = {"cpu": limit}
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "team-q"},
            "spec": {"containers": [{"name": "main", "image": "busybox", "resources": res}]},
        }
    )


def _used(srv: Served, want: dict[str, str]) -> dict[str, str]:
    used: dict[str, str] = {}
    for _ in range(50):
        used = (srv.json("get", "quota", "q", "-n", "team-q").get("status") or {}).get("used", {})
        if used == want:
            break
        time.sleep(0.1)
    return used


@needs_kubectl
def test_kubectl_autoscale_pdb_ingress(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "state", home=tmp_path / "home")
    try:
        srv.ok("create", "deployment", "web", "--image=nginx", "--replicas=1")
        srv.ok("autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=60")
        srv.ok("autoscale", "deployment", "web", "--max=3", "--name=web-default")
        # Stored as v2, defaulted as kube-apiserver defaults it.
        v2 = srv.json("get", "horizontalpodautoscalers.v2.autoscaling", "web-default")
        assert v2["spec"]["minReplicas"] == 1
        assert v2["spec"]["metrics"] == [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 80},
                },
            }
        ]
        v1 = srv.json("get", "horizontalpodautoscalers.v1.autoscaling", "web")
        assert v1["apiVersion"] == "autoscaling/v1"
        assert v1["spec"]["targetCPUUtilizationPercentage"] == 60
        assert v1["spec"]["scaleTargetRef"] == {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": "web",
        }
        lines = srv.ok("get", "hpa").splitlines()
        assert lines[0].split() == [
            "NAME",
            "REFERENCE",
            "TARGETS",
            "MINPODS",
            "MAXPODS",
            "REPLICAS",
            "AGE",
        ]
        assert "Deployment/web" in lines[1] and "cpu: <unknown>/60%" in lines[1], lines
        # A v1 update keeps what only v2 says (its behavior).
        srv.ok(
            "patch",
            "hpa.v2.autoscaling",
            "web",
            "--type=merge",
            "-p",
            '{"spec":{"behavior":{"scaleDown":{"stabilizationWindowSeconds":60}}}}',
        )
        srv.ok(
            "patch", "hpa.v1.autoscaling", "web", "--type=merge", "-p", '{"spec":{"maxReplicas":7}}'
        )
        again = srv.json("get", "hpa.v2.autoscaling", "web")
        assert again["spec"]["maxReplicas"] == 7
        assert again["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 60
        # The API server's errors, with their field paths.
        bad_hpa = {
            "apiVersion": "autoscaling/v1",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "bad"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 4,
                "maxReplicas": 3,
            },
        }
        r = srv.kubectl("apply", "-f", "-", input=json.dumps(bad_hpa))
        assert r.returncode == 1, r.stderr
        assert (
            "spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`"
            in r.stderr
        ), r.stderr
        assert "Traceback" not in r.stderr

        srv.ok("create", "pdb", "web", "--selector=app=web", "--min-available=1")
        pdb = srv.json("get", "pdb", "web")
        assert pdb["spec"] == {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}
        lines = srv.ok("get", "pdb").splitlines()
        assert lines[0].split() == [
            "NAME",
            "MIN",
            "AVAILABLE",
            "MAX",
            "UNAVAILABLE",
            "ALLOWED",
            "DISRUPTIONS",
            "AGE",
        ]
        assert lines[1].split()[:4] == ["web", "1", "N/A", "0"]
        r = srv.kubectl(
            "create",
            "pdb",
            "both",
            "--selector=app=web",
            "--min-available=1",
            "--max-unavailable=1",
        )
        # (kubectl itself refuses both flags; the API server refuses both fields)
        assert r.returncode == 1
        both = {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "both"},
            "spec": {"minAvailable": "150%", "maxUnavailable": 1},
        }
        r = srv.kubectl("apply", "-f", "-", input=json.dumps(both))
        assert r.returncode == 1
        assert "minAvailable and maxUnavailable cannot be both set" in r.stderr, r.stderr
        assert "spec.minAvailable" in r.stderr and "must not be greater than 100%" in r.stderr
        assert srv.kubectl("get", "pdb", "both").returncode == 1

        srv.ok("create", "ingress", "web", "--rule=foo.com/bar=svc1:8080", "--class=nginx")
        ing = srv.json("get", "ingress", "web")
        assert ing["spec"]["ingressClassName"] == "nginx"
        assert ing["spec"]["rules"][0]["http"]["paths"][0] == {
            "path": "/bar",
            "pathType": "Exact",
            "backend": {"service": {"name": "svc1", "port": {"number": 8080}}},
        }
        lines = srv.ok("get", "ingress").splitlines()
        assert lines[0].split() == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
        assert lines[1].split()[:4] == ["web", "nginx", "foo.com", "80"]
        bad = {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "Ingress",
            "metadata": {"name": "bad"},
            "spec": {
                "rules": [
                    {
                        "host": "10.0.0.1",
                        "http": {
                            "paths": [
                                {
                                    "path": "x",
                                    "pathType": "Prefix",
                                    "backend": {"service": {"name": "s"}},
                                }
                            ]
                        },
                    }
                ]
            },
        }
        r = srv.kubectl("apply", "-f", "-", input=json.dumps(bad))
        assert r.returncode == 1
        for text in (
            'The Ingress "bad" is invalid',
            'spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address',
            'spec.rules[0].http.paths[0].path: Invalid value: "x": must be an absolute path',
            "spec.rules[0].http.paths[0].backend: Required value: port name or number is required",
        ):
            assert text in r.stderr, r.stderr
        assert srv.kubectl("get", "ingress", "bad").returncode == 1
        # Discovery and OpenAPI: kubectl explain reads the served schemas.
        assert "minAvailable" in srv.ok("explain", "pdb.spec")
        assert "targetCPUUtilizationPercentage" in srv.ok(
            "explain", "hpa.spec", "--api-version=autoscaling/v1"
        )
    finally:
        srv.stop()


@needs_kubectl
def test_kubectl_create_quota_counts_and_refuses(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "state", home=tmp_path / "home")
    try:
        srv.ok("create", "namespace", "team-q")
        srv.ok(
            "create",
            "quota",
            "q",
            "-n",
            "team-q",
            "--hard=pods=2,requests.cpu=1,limits.cpu=2,count/configmaps=5",
        )
        srv.ok("apply", "-f", "-", input=_pod("a", "300m", "1"))
        srv.ok("apply", "-f", "-", input=_pod("b", "300m", "1"))
        used = _used(
            srv,
            {"pods": "2", "requests.cpu": "600m", "limits.cpu": "2", "count/configmaps": "0"},
        )
        assert used == {
            "pods": "2",
            "requests.cpu": "600m",
            "limits.cpu": "2",
            "count/configmaps": "0",
        }
        q = srv.json("get", "quota", "q", "-n", "team-q")
        assert q["status"]["hard"] == q["spec"]["hard"]
        lines = srv.ok("get", "quota", "-n", "team-q").splitlines()
        assert lines[0].split() == ["NAME", "AGE", "REQUEST", "LIMIT"]
        assert "pods: 2/2, requests.cpu: 600m/1" in lines[1], lines
        assert "limits.cpu: 2/2" in lines[1], lines
        # Over hard: kube-apiserver's Forbidden, nothing stored.
        r = srv.kubectl("apply", "-f", "-", input=_pod("c", "300m", "1"))
        assert r.returncode == 1
        assert (
            'pods "c" is forbidden: exceeded quota: q, requested: limits.cpu=1,pods=1, '
            "used: limits.cpu=2,pods=2, limited: limits.cpu=2,pods=2"
        ) in r.stderr, r.stderr
        assert srv.kubectl("get", "pod", "c", "-n", "team-q").returncode == 1
        # A quota of cpu needs every container to say how much.
        r = srv.kubectl("apply", "-f", "-", input=_pod("d", None))
        assert r.returncode == 1
        assert (
            'pods "d" is forbidden: failed quota: q: must specify limits.cpu for: main; '
            "requests.cpu for: main"
        ) in r.stderr, r.stderr
        # A deleted pod frees its share.
        srv.ok("delete", "pod", "a", "-n", "team-q", "--wait=false")
        used = _used(
            srv, {"pods": "1", "requests.cpu": "300m", "limits.cpu": "1", "count/configmaps": "0"}
        )
        assert used["pods"] == "1", used
        srv.ok("apply", "-f", "-", input=_pod("c", "300m", "1"))
        # Object counts of other kinds follow their creates and deletes.
        srv.ok("create", "configmap", "one", "-n", "team-q", "--from-literal=a=b")
        srv.ok("create", "configmap", "two", "-n", "team-q", "--from-literal=a=b")
        want = {"pods": "2", "requests.cpu": "600m", "limits.cpu": "2", "count/configmaps": "2"}
        assert _used(srv, want) == want
        srv.ok("delete", "configmap", "one", "-n", "team-q")
        want["count/configmaps"] = "1"
        assert _used(srv, want) == want
        # The API server's validation of a quota, with its field paths.
        r = srv.kubectl("create", "quota", "bad", "-n", "team-q", "--hard=pods=1.5,foo=1")
        assert r.returncode == 1
        assert 'ResourceQuota "bad" is invalid' in r.stderr, r.stderr
        assert (
            'spec.hard[foo]: Invalid value: "foo": must be a standard resource type or fully qualified'
            in r.stderr
        )
        assert 'spec.hard[pods]: Invalid value: "1500m": must be an integer' in r.stderr
    finally:
        srv.stop()


@needs_kubectl
def test_pdb_status_counts_the_ready_pods(tmp_path: Path) -> None:
    """The disruption controller's status: expectedPods from the selector's
    pods (minAvailable: an int) or their Deployment's replicas (a percent),
    disruptionsAllowed = Ready pods - desiredHealthy."""
    srv = start_server(tmp_path / "state", str(EXAMPLES / "quickstart"), home=tmp_path / "home")
    try:
        srv.ok("create", "namespace", "web")
        srv.ok("-n", "web", "create", "deployment", "web", "--image=nginx", "--replicas=3")
        srv.ok("-n", "web", "create", "pdb", "min", "--selector=app=web", "--min-available=1")
        srv.ok("-n", "web", "create", "pdb", "max", "--selector=app=web", "--max-unavailable=50%")
        want = {
            "min": (3, 1, 2),  # (expectedPods, desiredHealthy, disruptionsAllowed)
            "max": (3, 1, 2),  # 50% of 3 rounded up is 2 unavailable: 1 healthy wanted
        }
        got: dict[str, tuple[int, int, int]] = {}
        for _ in range(100):
            items = srv.json("-n", "web", "get", "pdb")["items"]
            got = {
                i["metadata"]["name"]: (
                    i.get("status", {}).get("expectedPods", 0),
                    i.get("status", {}).get("desiredHealthy", 0),
                    i.get("status", {}).get("disruptionsAllowed", 0),
                )
                for i in items
            }
            if got == want:
                break
            time.sleep(0.2)
        assert got == want
        pdb = srv.json("-n", "web", "get", "pdb", "min")
        cond = pdb["status"]["conditions"][0]
        assert (cond["type"], cond["status"], cond["reason"]) == (
            "DisruptionAllowed",
            "True",
            "SufficientPods",
        )
        lines = srv.ok("-n", "web", "get", "pdb", "min").splitlines()
        assert lines[1].split()[:4] == ["min", "1", "N/A", "2"]
        # kubectl diff of what is applied shows nothing: its dry-run patch
        # (a PDB's selector is always sent: patchStrategy replace) keeps the
        # status the controller wrote, as the write would.
        applied = {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "applied", "namespace": "web"},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
        }
        srv.ok("apply", "-f", "-", input=json.dumps(applied))
        for _ in range(50):
            if srv.json("-n", "web", "get", "pdb", "applied").get("status"):
                break
            time.sleep(0.1)
        r = srv.kubectl("diff", "-f", "-", input=json.dumps(applied))
        assert r.returncode == 0, r.stdout + r.stderr
    finally:
        srv.stop()


@needs_kubectl
def test_a_job_refused_by_quota_gets_its_pod_once_another_frees_it(tmp_path: Path) -> None:
    """The job controller's create refused by the quota (a FailedCreate
    event with the API server's text), then made when another Job's pod ends
    and the quota's usage goes down (the refused Job has no pod whose
    change would sync it: the quota's does)."""
    srv = start_server(
        tmp_path / "state", str(EXAMPLES / "quickstart"), "--speed", "20", home=tmp_path / "home"
    )

    def job(name: str) -> str:
        return json.dumps(
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": name, "namespace": "q"},
                "spec": {
                    "template": {
                        "metadata": {"annotations": {"kuota.dev/duration": "20s"}},
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [{"name": "c", "image": "x"}],
                        },
                    },
                },
            }
        )

    try:
        srv.ok("create", "namespace", "q")
        srv.ok("-n", "q", "create", "quota", "rq", "--hard=pods=1")
        srv.ok("apply", "-f", "-", input=job("first"))
        srv.ok("apply", "-f", "-", input=job("second"))
        srv.ok("-n", "q", "wait", "--for=condition=Complete", "job/second", "--timeout=60s")
        events = srv.json("-n", "q", "get", "events", "--field-selector", "reason=FailedCreate")
        messages = [e["message"] for e in events["items"]]
        assert any(
            "is forbidden: exceeded quota: rq, requested: pods=1, used: pods=1, limited: pods=1"
            in m
            for m in messages
        ), messages
        assert srv.json("-n", "q", "get", "job", "first")["status"]["succeeded"] == 1
    finally:
        srv.stop()
