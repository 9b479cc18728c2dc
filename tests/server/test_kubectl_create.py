"""kubectl's imperative ``create`` subcommands against ``kuota serve``: they
send built-in kinds in protobuf (``create namespace`` is many users' first
command; ``create deployment``, ``job``, ``cronjob``, ``role``, ``service``
...). Each must store what the same object sent as YAML stores: ``kubectl
create X --dry-run=client -o yaml | kubectl apply -f -``. A kind kuota reads
only as JSON (Kueue's, which are CRDs on a cluster too) is refused with 415
and a way round it."""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests.server.conftest import Served, needs_kubectl, start_server


@needs_kubectl
def test_kubectl_create_namespace_configmap_secret_serviceaccount(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "state", home=tmp_path / "home")
    try:
        srv.ok("create", "namespace", "team-x")
        assert srv.json("get", "namespace", "team-x")["metadata"]["name"] == "team-x"
        srv.ok(
            "create",
            "configmap",
            "cfg",
            "-n",
            "team-x",
            "--from-literal=mode=fast",
            "--from-literal=gpus=8",
        )
        cm = srv.json("get", "configmap", "cfg", "-n", "team-x")
        assert cm["data"] == {"mode": "fast", "gpus": "8"}
        srv.ok(
            "create",
            "secret",
            "generic",
            "db",
            "-n",
            "team-x",
            "--from-literal=password=s3cret",
            "--type=Opaque",
        )
        sec = srv.json("get", "secret", "db", "-n", "team-x")
        assert base64.b64decode(sec["data"]["password"]) == b"s3cret"
        assert sec["type"] == "Opaque"
        srv.ok("create", "serviceaccount", "builder", "-n", "team-x")
        assert srv.json("get", "serviceaccount", "builder", "-n", "team-x")["metadata"]["name"]
        # A name kube-apiserver refuses is refused with its field path.
        r = srv.kubectl("create", "namespace", "Not_Valid")
        assert r.returncode == 1 and "metadata.name" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
    finally:
        srv.stop()


# (resource, name, kubectl create arguments with NAME where the name goes)
CREATES = [
    ("deployment", "web", "deployment NAME --image=nginx --replicas=2 --port=80"),
    ("deployment", "idle", "deployment NAME --image=nginx --replicas=0"),
    ("deployment", "pair", "deployment NAME --image=nginx --image=busybox"),
    ("job", "j", "job NAME --image=busybox -- echo hi"),
    (
        "cronjob",
        "cj",
        "cronjob NAME --image=busybox --schedule=@hourly --restart=OnFailure -- date",
    ),
    (
        "priorityclass",
        "high",
        "priorityclass NAME --value=1000 --description=hi --preemption-policy=Never",
    ),
    ("priorityclass", "zero", "priorityclass NAME --value=0"),
    (
        "role",
        "reader",
        "role NAME --verb=get,list --resource=pods,deployments.apps --resource-name=x",
    ),
    (
        "rolebinding",
        "rb",
        "rolebinding NAME --role=reader --user=bob --group=g --serviceaccount=default:sa",
    ),
    ("clusterrole", "cr", "clusterrole NAME --verb=get --resource=pods"),
    ("clusterrole", "agg", "clusterrole NAME --aggregation-rule=a=b"),
    ("clusterrole", "logs", "clusterrole NAME --verb=get --non-resource-url=/logs/*"),
    ("clusterrolebinding", "crb", "clusterrolebinding NAME --clusterrole=cr --user=bob"),
    ("service", "svc", "service clusterip NAME --tcp=80:8080"),
    ("service", "headless", "service clusterip NAME --clusterip=None"),
    ("service", "np", "service nodeport NAME --tcp=5678:8080 --node-port=30080"),
    ("service", "lb", "service loadbalancer NAME --tcp=5678:8080"),
    ("service", "ext", "service externalname NAME --external-name=bar.example.com"),
]


def _stored(srv: Served, resource: str, name: str) -> dict[str, Any]:
    """The object as stored, less what differs between any two creates
    (names, uids, times, versions, apply's annotation, status)."""
    obj = srv.json("get", resource, name)
    text = json.dumps(obj).replace(obj["metadata"]["uid"], "UID")
    obj = json.loads(text.replace(f'"{name}"', '"NAME"'))
    obj.pop("status", None)
    meta = obj["metadata"]
    for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"):
        meta.pop(key, None)
    notes = meta.get("annotations", {})
    notes.pop("kubectl.kubernetes.io/last-applied-configuration", None)
    if not notes:
        meta.pop("annotations", None)
    return obj


@needs_kubectl
def test_kubectl_create_stores_what_apply_of_its_yaml_stores(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "state", home=tmp_path / "home")
    try:
        for resource, name, line in CREATES:
            args = line.split()
            at = args.index("NAME")
            r = srv.kubectl("create", *args[:at], name, *args[at + 1 :])
            assert r.returncode == 0, f"kubectl create {line}: {r.stderr}"
            twin = f"{name}-yaml"
            manifest = srv.ok(
                "create", *args[:at], twin, "--dry-run=client", "-o", "yaml", *args[at + 1 :]
            )
            srv.ok("apply", "-f", "-", input=manifest)
            assert _stored(srv, resource, name) == _stored(srv, resource, twin), line
        dep = srv.json("get", "deployment", "idle")
        assert dep["spec"]["replicas"] == 0  # a pointer sent as 0 stays 0
        assert srv.json("get", "priorityclass", "zero")["value"] == 0
        svc = srv.json("get", "service", "np")["spec"]["ports"][0]
        assert (svc["port"], svc["targetPort"], svc["nodePort"]) == (5678, 8080, 30080)
    finally:
        srv.stop()


# A CronJob whose pod template uses most of PodSpec: `kubectl create job
# --from=cronjob/...` sends all of it back in protobuf.
RICH = """
apiVersion: batch/v1
kind: CronJob
metadata: {name: rich, labels: {team: a}}
spec:
  schedule: "@daily"
  suspend: true
  jobTemplate:
    metadata:
      labels: {kueue.x-k8s.io/queue-name: user-queue}
    spec:
      parallelism: 3
      completions: 6
      backoffLimit: 0
      activeDeadlineSeconds: 600
      ttlSecondsAfterFinished: 100
      completionMode: Indexed
      suspend: true
      template:
        metadata:
          labels: {app: rich}
          annotations: {note: "x"}
        spec:
          restartPolicy: Never
          terminationGracePeriodSeconds: 5
          nodeSelector: {disk: ssd}
          tolerations:
          - {key: gpu, operator: Exists, effect: NoSchedule}
          - {key: t, operator: Equal, value: v, effect: NoExecute, tolerationSeconds: 30}
          affinity:
            nodeAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                nodeSelectorTerms:
                - matchExpressions:
                  - {key: zone, operator: In, values: [a, b]}
            podAntiAffinity:
              preferredDuringSchedulingIgnoredDuringExecution:
              - weight: 10
                podAffinityTerm:
                  topologyKey: kubernetes.io/hostname
                  labelSelector: {matchLabels: {app: rich}}
          securityContext: {runAsUser: 1000, fsGroup: 2000, runAsNonRoot: true}
          volumes:
          - name: scratch
            emptyDir: {medium: Memory, sizeLimit: 1Gi}
          - name: cfg
            configMap: {name: cm1, defaultMode: 420, items: [{key: a, path: a.txt}]}
          - name: sec
            secret: {secretName: s1, optional: true}
          - name: host
            hostPath: {path: /data, type: Directory}
          - name: proj
            projected:
              sources:
              - downwardAPI:
                  items:
                  - path: labels
                    fieldRef: {fieldPath: metadata.labels}
          initContainers:
          - name: init
            image: busybox
            command: [sh, -c, "true"]
          containers:
          - name: main
            image: registry.io/train:1.0
            imagePullPolicy: IfNotPresent
            args: ["--epochs", "3"]
            workingDir: /w
            ports:
            - {name: http, containerPort: 8080, protocol: TCP}
            - {containerPort: 9090, hostPort: 9090, protocol: UDP}
            env:
            - {name: A, value: "1"}
            - name: POD
              valueFrom: {fieldRef: {fieldPath: metadata.name}}
            - name: LIM
              valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: 1m}}
            - name: S
              valueFrom: {secretKeyRef: {name: s1, key: a}}
            envFrom:
            - configMapRef: {name: cm1}
              prefix: CM_
            resources:
              requests: {cpu: 500m, memory: 1Gi, nvidia.com/gpu: "1"}
              limits: {cpu: "2", memory: 2Gi, nvidia.com/gpu: "1"}
            volumeMounts:
            - {name: scratch, mountPath: /scratch}
            - {name: cfg, mountPath: /cfg, readOnly: true, subPath: a.txt}
            readinessProbe:
              httpGet: {path: /healthz, port: http, scheme: HTTP}
              initialDelaySeconds: 3
              periodSeconds: 5
            livenessProbe:
              tcpSocket: {port: 8080}
              failureThreshold: 4
            startupProbe:
              exec: {command: [cat, /tmp/ok]}
            lifecycle:
              preStop:
                sleep: {seconds: 2}
            securityContext:
              allowPrivilegeEscalation: false
              capabilities: {drop: [ALL], add: [NET_ADMIN]}
              readOnlyRootFilesystem: true
"""


def _without_empty(v: Any) -> Any:
    """Go's encoder writes an unset struct field as {} (``resources: {}``);
    kuota keeps a YAML client's omission."""
    if isinstance(v, dict):
        return {k: _without_empty(x) for k, x in v.items() if x != {}}
    if isinstance(v, list):
        return [_without_empty(x) for x in v]
    return v


@needs_kubectl
def test_kubectl_create_job_from_cronjob_carries_the_whole_pod_template(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "state", home=tmp_path / "home")
    try:
        srv.ok("apply", "-f", "-", input=RICH)
        srv.ok("create", "job", "rich-now", "--from=cronjob/rich")
        template = srv.json("get", "cronjob", "rich")["spec"]["jobTemplate"]["spec"]
        job = srv.json("get", "job", "rich-now")
        assert job["metadata"]["ownerReferences"][0]["name"] == "rich"
        assert _without_empty(job["spec"]) == _without_empty(template)
        main = job["spec"]["template"]["spec"]["containers"][0]
        assert main["resources"]["requests"] == {
            "cpu": "500m",
            "memory": "1Gi",
            "nvidia.com/gpu": "1",
        }
        assert main["readinessProbe"]["httpGet"]["port"] == "http"  # IntOrString as a name
        assert main["livenessProbe"]["tcpSocket"]["port"] == 8080  # and as a number
    finally:
        srv.stop()


def _ld(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (lengths here are < 128)."""
    return bytes([number << 3 | 2, len(payload)]) + payload


def _post(srv: Served, path: str, body: bytes) -> tuple[int, dict[str, Any]]:
    pki = srv.state / "pki"
    ctx = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    ctx.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
    req = urllib.request.Request(
        srv.url + path,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/vnd.kubernetes.protobuf",
            "Accept": "application/json",
        },
    )
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_protobuf_of_a_json_only_kind_or_a_broken_body_is_refused(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "state", home=tmp_path / "home")
    try:
        type_meta = _ld(1, b"kueue.x-k8s.io/v1beta2") + _ld(2, b"ClusterQueue")
        cq = b"k8s\x00" + _ld(1, type_meta) + _ld(2, _ld(1, _ld(1, b"cq")))
        code, st = _post(srv, "/apis/kueue.x-k8s.io/v1beta2/clusterqueues", cq)
        assert (code, st["reason"]) == (415, "UnsupportedMediaType"), st
        assert "--dry-run=client -o yaml" in st["message"]
        # A Job whose spec field is cut short: 400, the reason, no traceback.
        type_meta = _ld(1, b"batch/v1") + _ld(2, b"Job")
        job = b"k8s\x00" + _ld(1, type_meta) + _ld(2, _ld(1, _ld(1, b"j")) + b"\x12\x40\x0a")
        code, st = _post(srv, "/apis/batch/v1/namespaces/default/jobs", job)
        assert (code, st["reason"]) == (400, "BadRequest"), st
        assert "truncated" in st["message"] and "Traceback" not in st["message"]
    finally:
        srv.stop()
