"""The RBAC objects a cluster starts with: kube-apiserver's bootstrap policy
(plugin/pkg/auth/authorizer/rbac/bootstrappolicy: cluster-admin, admin, edit,
view and their aggregate-to-* building blocks, system:discovery,
system:basic-user, system:public-info-viewer and their bindings) and Kueue's
user-facing ClusterRoles (config/components/rbac), with the OpenShift
operator's aggregation labels to admin/edit/view."""

from __future__ import annotations

from kuota.api.k8s.rbac import (
    GROUP,
    AggregationRule,
    ClusterRole,
    ClusterRoleBinding,
    PolicyRule,
    RoleRef,
    Subject,
)
from kuota.api.meta import LabelSelector, ObjectMeta

_RO = ["get", "list", "watch"]
_RW = ["create", "delete", "get", "list", "patch", "update", "watch"]
_WRITE = ["create", "delete", "deletecollection", "patch", "update"]
_AGG = "rbac.authorization.k8s.io/aggregate-to-"
_BOOT = {"kubernetes.io/bootstrapping": "rbac-defaults"}


def _rule(group: str, resources: list[str], verbs: list[str]) -> PolicyRule:
    return PolicyRule(verbs=list(verbs), api_groups=[group], resources=list(resources))


def _urls(urls: list[str], verbs: list[str]) -> PolicyRule:
    return PolicyRule(verbs=list(verbs), non_resource_urls=list(urls))


def _role(name: str, rules: list[PolicyRule], labels: dict[str, str] | None = None) -> ClusterRole:
    return ClusterRole(metadata=ObjectMeta(name=name, labels=labels), rules=rules)


def _aggregated(name: str, key: str, labels: dict[str, str] | None = None) -> ClusterRole:
    sel = LabelSelector(match_labels={key: "true"})
    return ClusterRole(
        metadata=ObjectMeta(name=name, labels=labels),
        rules=[],
        aggregation_rule=AggregationRule(cluster_role_selectors=[sel]),
    )


def _bind(name: str, role: str, *groups: str) -> ClusterRoleBinding:
    return ClusterRoleBinding(
        metadata=ObjectMeta(name=name, labels=dict(_BOOT)),
        subjects=[Subject(kind="Group", name=g, api_group=GROUP) for g in groups],
        role_ref=RoleRef(api_group=GROUP, kind="ClusterRole", name=role),
    )


def _to(*roles: str) -> dict[str, str]:
    return {f"{_AGG}{r}": "true" for r in roles} | _BOOT


_CORE_READ = [
    "pods", "pods/log", "pods/status", "configmaps", "endpoints", "persistentvolumeclaims",
    "persistentvolumeclaims/status", "replicationcontrollers", "replicationcontrollers/scale",
    "replicationcontrollers/status", "serviceaccounts", "services", "services/status",
    "bindings", "events", "limitranges", "namespaces/status", "resourcequotas",
    "resourcequotas/status",
]  # fmt: skip
_APPS = [
    "controllerrevisions", "daemonsets", "daemonsets/status", "deployments",
    "deployments/scale", "deployments/status", "replicasets", "replicasets/scale",
    "replicasets/status", "statefulsets", "statefulsets/scale", "statefulsets/status",
]  # fmt: skip
_BATCH = ["cronjobs", "cronjobs/status", "jobs", "jobs/status"]


def kubernetes_roles() -> list[ClusterRole | ClusterRoleBinding]:
    """bootstrappolicy.ClusterRoles/ClusterRoleBindings, the part kuota serves."""
    view = [
        _rule("", _CORE_READ, _RO),
        _rule("", ["namespaces"], _RO),
        _rule("apps", _APPS, _RO),
        _rule("batch", _BATCH, _RO),
        _rule("policy", ["poddisruptionbudgets", "poddisruptionbudgets/status"], _RO),
    ]
    edit = [
        _rule("", ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"], _WRITE),
        _rule(
            "",
            [
                "configmaps",
                "events",
                "persistentvolumeclaims",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "secrets",
                "serviceaccounts",
                "services",
                "services/proxy",
                "endpoints",
            ],
            _WRITE,
        ),
        _rule("", ["secrets"], _RO),
        _rule("apps", [r for r in _APPS if not r.endswith("/status")], _WRITE),
        _rule("batch", ["cronjobs", "jobs"], _WRITE),
        _rule("policy", ["poddisruptionbudgets"], _WRITE),
    ]
    admin = [
        _rule("authorization.k8s.io", ["localsubjectaccessreviews"], ["create"]),
        _rule(GROUP, ["rolebindings", "roles"], _WRITE + _RO),
    ]
    discovery = ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi",
                 "/openapi/*", "/readyz", "/version", "/version/"]  # fmt: skip
    public = ["/healthz", "/livez", "/readyz", "/version", "/version/"]
    return [
        _role("cluster-admin", [_rule("*", ["*"], ["*"]), _urls(["*"], ["*"])], dict(_BOOT)),
        _aggregated("admin", f"{_AGG}admin", dict(_BOOT)),
        _aggregated("edit", f"{_AGG}edit", _to("admin")),
        _aggregated("view", f"{_AGG}view", _to("edit")),
        _role("system:aggregate-to-admin", admin, _to("admin")),
        _role("system:aggregate-to-edit", edit, _to("admin", "edit")),
        _role("system:aggregate-to-view", view, _to("admin", "edit", "view")),
        _role("system:discovery", [_urls(discovery, ["get"])], dict(_BOOT)),
        _role("system:public-info-viewer", [_urls(public, ["get"])], dict(_BOOT)),
        _role(
            "system:basic-user",
            [
                _rule(
                    "authorization.k8s.io",
                    ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                    ["create"],
                ),
                _rule("authentication.k8s.io", ["selfsubjectreviews"], ["create"]),
            ],
            dict(_BOOT),
        ),
        # Delegated authentication and authorization (an extension API server
        # such as Kueue's visibility server binds its ServiceAccount to it).
        _role(
            "system:auth-delegator",
            [
                _rule("authentication.k8s.io", ["tokenreviews"], ["create"]),
                _rule("authorization.k8s.io", ["subjectaccessreviews"], ["create"]),
            ],
            dict(_BOOT),
        ),
        _bind("cluster-admin", "cluster-admin", "system:masters"),
        _bind("system:discovery", "system:discovery", "system:authenticated"),
        _bind("system:basic-user", "system:basic-user", "system:authenticated"),
        _bind(
            "system:public-info-viewer",
            "system:public-info-viewer",
            "system:authenticated",
            "system:unauthenticated",
        ),
    ]


_ADMIN = "rbac.kueue.x-k8s.io/batch-admin"
_USER = "rbac.kueue.x-k8s.io/batch-user"
_KUEUE = "kueue.x-k8s.io"
# Job kinds Kueue ships editor/viewer roles for: (role stem, group, resource).
_JOBS = [
    ("job", "batch", "jobs"),
    ("jobset", "jobset.x-k8s.io", "jobsets"),
    ("mpijob", "kubeflow.org", "mpijobs"),
    ("pytorchjob", "kubeflow.org", "pytorchjobs"),
    ("tfjob", "kubeflow.org", "tfjobs"),
    ("xgboostjob", "kubeflow.org", "xgboostjobs"),
    ("paddlejob", "kubeflow.org", "paddlejobs"),
    ("jaxjob", "kubeflow.org", "jaxjobs"),
    ("trainjob", "trainer.kubeflow.org", "trainjobs"),
    ("rayjob", "ray.io", "rayjobs"),
    ("raycluster", "ray.io", "rayclusters"),
    ("rayservice", "ray.io", "rayservices"),
    ("leaderworkerset", "leaderworkerset.x-k8s.io", "leaderworkersets"),
    ("sparkapplication", "sparkoperator.k8s.io", "sparkapplications"),
]


def _block(stem: str, group: str, res: str, editor: bool, labels: dict[str, str]) -> ClusterRole:
    verbs = _RW if editor else _RO
    kind = "editor" if editor else "viewer"
    return _role(
        f"kueue-{stem}-{kind}-role",
        [_rule(group, [res], verbs), _rule(group, [f"{res}/status"], ["get"])],
        labels,
    )


def kueue_roles() -> list[ClusterRole]:
    """Kueue's user-facing ClusterRoles (cluster-mode spec §6)."""
    admin_only = {_ADMIN: "true"}
    both = {_ADMIN: "true", _USER: "true"}
    everywhere = {f"{_AGG}{r}": "true" for r in ("admin", "edit", "view")}
    out = [
        _aggregated("kueue-batch-admin-role", _ADMIN),
        _aggregated("kueue-batch-user-role", _USER),
    ]
    for stem, res in (
        ("clusterqueue", "clusterqueues"),
        ("cohort", "cohorts"),
        ("resourceflavor", "resourceflavors"),
        ("topology", "topologies"),
    ):
        out.append(_block(stem, _KUEUE, res, True, admin_only))
        out.append(_block(stem, _KUEUE, res, False, admin_only | {f"{_AGG}admin": "true"}))
    for stem, res in (("localqueue", "localqueues"), ("workload", "workloads")):
        out.append(_block(stem, _KUEUE, res, True, admin_only))
        out.append(_block(stem, _KUEUE, res, False, both | everywhere))
    for stem, group, res in _JOBS:
        out.append(_block(stem, group, res, True, both))
        viewer = admin_only if stem in ("raycluster", "rayservice") else both
        out.append(_block(stem, group, res, False, viewer | everywhere))
    vis = "visibility.kueue.x-k8s.io"
    out.append(
        _role(
            "kueue-pending-workloads-cq-viewer-role",
            [_rule(vis, ["clusterqueues/pendingworkloads"], _RO)],
            admin_only | everywhere,
        )
    )
    out.append(
        _role(
            "kueue-pending-workloads-lq-viewer-role",
            [_rule(vis, ["localqueues/pendingworkloads"], _RO)],
            both | everywhere,
        )
    )
    return out


def bootstrap_objects() -> list[ClusterRole | ClusterRoleBinding]:
    return [*kubernetes_roles(), *kueue_roles()]
