"""What ``kuota manifests`` prints: kuota installed on a cluster as Kueue's
default kustomization installs Kueue (cluster-mode spec §1: namespace
``kueue-system``, names prefixed ``kueue-``, pods selected by
``control-plane: controller-manager``), so users' tooling finds the same
objects: CRDs, the manager's least-privilege RBAC (manager_rbac) and
Kueue's batch admin/user roles, ServiceAccount, the Configuration's
ConfigMap, the webhook certificates' Secret (filled by the manager), a
Deployment of two replicas electing a leader, the webhook and metrics
Services, the webhook configurations at Kueue's paths (caBundle injected by
the manager) and, on request, a Prometheus ServiceMonitor.

``openshift``: the Red Hat build's differences (openshift.md): webhooks and
managed jobs only in namespaces labelled ``kueue.openshift.io/managed=true``,
no fixed user id (the restricted SCC assigns one), the namespace opted in to
cluster monitoring."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import yaml

from kuota.clustermode.manager_rbac import cluster_rules, namespace_rules
from kuota.clustermode.webhook_seam import configurations
from kuota.controllers.visibility import GROUP as VIS_GROUP
from kuota.webhooks import certs

NAMESPACE: Final = certs.NAMESPACE
PREFIX: Final = "kueue-"
MANAGER: Final = "kueue-controller-manager"
VISIBILITY_SERVICE: Final = "kueue-visibility-server"  # https 443 -> 8082
LABELS: Final = {"app.kubernetes.io/name": "kueue", "control-plane": "controller-manager"}
SELECTOR: Final = {"control-plane": "controller-manager"}
CONFIG_KEY: Final = "controller_manager_config.yaml"
OPENSHIFT_MANAGED: Final = {
    "matchLabels": {"kueue.openshift.io/managed": "true"},
}
DEFAULT_IMAGE: Final = "localhost/kuota:latest"


@dataclass(frozen=True)
class Options:
    openshift: bool = False
    service_monitor: bool = False
    image: str = DEFAULT_IMAGE
    replicas: int = 2


def _meta(name: str, namespaced: bool = True, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": dict(LABELS)}
    if namespaced:
        meta["namespace"] = NAMESPACE
    meta.update(extra)
    return meta


def _obj(api_version: str, kind: str, meta: dict[str, Any], **body: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **body}


def configuration(opts: Options) -> dict[str, Any]:
    """Kueue's shipped controller_manager_config.yaml (cluster-mode spec §2),
    with leader election on and the frameworks kuota runs."""
    from kuota.api.kueue.config.frameworks import BUILTIN_FRAMEWORKS
    from kuota.controllers.jobs.integrations import INTEGRATIONS

    cfg: dict[str, Any] = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "namespace": NAMESPACE,
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443"},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "internalCertManagement": {
            "enable": True,
            "webhookServiceName": certs.SERVICE,
            "webhookSecretName": certs.SECRET,
        },
        "clientConnection": {"qps": 300, "burst": 500},
        # (as Kueue ships it: an alpha integration, SparkApplication's, left out)
        "integrations": {
            "frameworks": [
                i.name
                for i in INTEGRATIONS
                if i.name not in BUILTIN_FRAMEWORKS or BUILTIN_FRAMEWORKS[i.name].gate is None
            ]
        },
    }
    if opts.openshift:
        cfg["managedJobsNamespaceSelector"] = OPENSHIFT_MANAGED
    return cfg


def _rbac() -> list[dict[str, Any]]:
    rbac = "rbac.authorization.k8s.io/v1"
    subject = [{"kind": "ServiceAccount", "name": MANAGER, "namespace": NAMESPACE}]
    ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole"}
    return [
        _obj(rbac, "ClusterRole", _meta(f"{PREFIX}manager-role", False), rules=cluster_rules()),
        _obj(
            rbac,
            "ClusterRoleBinding",
            _meta(f"{PREFIX}manager-rolebinding", False),
            roleRef={**ref, "name": f"{PREFIX}manager-role"},
            subjects=subject,
        ),
        _obj(rbac, "Role", _meta(f"{PREFIX}leader-election-role"), rules=namespace_rules()),
        _obj(
            rbac,
            "RoleBinding",
            _meta(f"{PREFIX}leader-election-rolebinding"),
            roleRef={**ref, "kind": "Role", "name": f"{PREFIX}leader-election-role"},
            subjects=subject,
        ),
        _obj(
            rbac,
            "ClusterRole",
            _meta(f"{PREFIX}metrics-reader", False),
            rules=[{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
        ),
        # The visibility server's delegated authentication and authorization.
        _obj(
            rbac,
            "ClusterRole",
            _meta(f"{PREFIX}metrics-auth-role", False),
            rules=[
                {
                    "apiGroups": ["authentication.k8s.io"],
                    "resources": ["tokenreviews"],
                    "verbs": ["create"],
                },
                {
                    "apiGroups": ["authorization.k8s.io"],
                    "resources": ["subjectaccessreviews"],
                    "verbs": ["create"],
                },
            ],
        ),
        _obj(
            rbac,
            "ClusterRoleBinding",
            _meta(f"{PREFIX}metrics-auth-rolebinding", False),
            roleRef={**ref, "name": f"{PREFIX}metrics-auth-role"},
            subjects=subject,
        ),
        # ... and the aggregator's requestheader CA it trusts (kube-system).
        _obj(
            rbac,
            "RoleBinding",
            {
                "name": f"{PREFIX}visibility-server-auth-reader",
                "namespace": "kube-system",
                "labels": dict(LABELS),
            },
            roleRef={**ref, "kind": "Role", "name": "extension-apiserver-authentication-reader"},
            subjects=subject,
        ),
    ]


def _deployment(opts: Options) -> dict[str, Any]:
    security: dict[str, Any] = {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    pod_security: dict[str, Any] = {
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    if not opts.openshift:  # OpenShift's restricted SCC picks the user id itself
        pod_security["runAsUser"] = 65532
    container = {
        "name": "manager",
        "image": opts.image,
        "command": ["kuota", "controller"],
        "args": [f"--config=/{CONFIG_KEY}"],
        "ports": [
            {"containerPort": 9443, "name": "webhook-server", "protocol": "TCP"},
            {"containerPort": 8443, "name": "metrics", "protocol": "TCP"},
            {"containerPort": 8081, "name": "health", "protocol": "TCP"},
            {"containerPort": 8082, "name": "visibility", "protocol": "TCP"},
        ],
        "livenessProbe": {
            "httpGet": {"path": "/healthz", "port": 8081},
            "initialDelaySeconds": 15,
            "periodSeconds": 20,
        },
        "readinessProbe": {
            "httpGet": {"path": "/readyz", "port": 8081},
            "initialDelaySeconds": 5,
            "periodSeconds": 10,
        },
        "resources": {
            "requests": {"cpu": "500m", "memory": "512Mi"},
            "limits": {"cpu": "2", "memory": "1Gi"},
        },
        "securityContext": security,
        "volumeMounts": [
            {"name": "manager-config", "mountPath": f"/{CONFIG_KEY}", "subPath": CONFIG_KEY},
            {"name": "cert", "mountPath": certs.CERT_DIR, "readOnly": True},
            {"name": "tmp", "mountPath": "/tmp/kuota"},
        ],
        "env": [{"name": "TMPDIR", "value": "/tmp/kuota"}],
    }
    return _obj(
        "apps/v1",
        "Deployment",
        _meta(MANAGER),
        spec={
            "replicas": opts.replicas,
            "selector": {"matchLabels": dict(SELECTOR)},
            "template": {
                "metadata": {
                    "labels": dict(LABELS),
                    "annotations": {"kubectl.kubernetes.io/default-container": "manager"},
                },
                "spec": {
                    "serviceAccountName": MANAGER,
                    "terminationGracePeriodSeconds": 10,
                    "securityContext": pod_security,
                    "containers": [container],
                    "volumes": [
                        {
                            "name": "manager-config",
                            "configMap": {"name": f"{PREFIX}manager-config"},
                        },
                        {
                            "name": "cert",
                            "secret": {"secretName": certs.SECRET, "defaultMode": 420},
                        },
                        {"name": "tmp", "emptyDir": {}},
                    ],
                },
            },
        },
    )


def _service(name: str, port: int, target: int, port_name: str) -> dict[str, Any]:
    return _obj(
        "v1",
        "Service",
        _meta(name),
        spec={
            "selector": dict(SELECTOR),
            "ports": [{"name": port_name, "port": port, "targetPort": target, "protocol": "TCP"}],
        },
    )


def _webhooks(opts: Options) -> list[dict[str, Any]]:
    """Kueue's two configurations, calling the webhook Service (the manager
    injects its CA as caBundle)."""
    out = []
    for conf in configurations(service=(NAMESPACE, certs.SERVICE)):
        conf["metadata"]["labels"] = dict(LABELS)
        if opts.openshift:
            for hook in conf["webhooks"]:
                if "namespaceSelector" in hook:
                    hook["namespaceSelector"] = OPENSHIFT_MANAGED
        out.append(conf)
    return out


def _apiservices() -> list[dict[str, Any]]:
    """Kueue's visibility API registered with the aggregator, served by the
    manager's visibility server (self-signed: Kueue's skip verification)."""
    return [
        _obj(
            "apiregistration.k8s.io/v1",
            "APIService",
            {"name": f"{version}.{VIS_GROUP}", "labels": dict(LABELS)},
            spec={
                "group": VIS_GROUP,
                "version": version,
                "groupPriorityMinimum": 100,
                "versionPriority": 100,
                "insecureSkipTLSVerify": True,
                "service": {"name": VISIBILITY_SERVICE, "namespace": NAMESPACE},
            },
        )
        for version in ("v1beta1", "v1beta2")
    ]


def _service_monitor() -> dict[str, Any]:
    return _obj(
        "monitoring.coreos.com/v1",
        "ServiceMonitor",
        _meta(f"{PREFIX}controller-manager-metrics-monitor"),
        spec={
            "endpoints": [
                {
                    "path": "/metrics",
                    "port": "http",
                    "scheme": "http",  # kuota controller's /metrics is plain HTTP for now
                }
            ],
            "selector": {"matchLabels": dict(SELECTOR)},
        },
    )


def objects(opts: Options, user_roles: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every object, in the order ``kubectl apply`` needs them (namespace and
    CRDs first, webhook configurations last). ``user_roles``: Kueue's
    batch admin/user ClusterRoles and their building blocks (wire form; the
    API server's bootstrap holds them, an outer layer)."""
    from kuota.api.crd import all_crds

    ns_labels = dict(LABELS)
    if opts.openshift:
        ns_labels["openshift.io/cluster-monitoring"] = "true"
    out: list[dict[str, Any]] = [
        _obj("v1", "Namespace", {"name": NAMESPACE, "labels": ns_labels}),
        *all_crds(),
        _obj("v1", "ServiceAccount", _meta(MANAGER)),
        *_rbac(),
    ]
    for role in user_roles:
        role["metadata"].setdefault("labels", {}).update(LABELS)
        out.append(role)
    out += [
        _obj(
            "v1",
            "ConfigMap",
            _meta(f"{PREFIX}manager-config"),
            data={CONFIG_KEY: yaml.safe_dump(configuration(opts), sort_keys=False)},
        ),
        _obj("v1", "Secret", _meta(certs.SECRET), type="Opaque"),
        _service(certs.SERVICE, 443, 9443, "https"),
        _service(f"{PREFIX}controller-manager-metrics-service", 8443, 8443, "http"),
        _service(VISIBILITY_SERVICE, 443, 8082, "https"),
        _deployment(opts),
        *_webhooks(opts),
        *_apiservices(),
    ]
    if opts.service_monitor:
        out.append(_service_monitor())
    return out
