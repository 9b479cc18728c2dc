"""The list and patch markers of Kubernetes' built-in types (the
``+listType``/``+listMapKey``/``+patchStrategy``/``+patchMergeKey`` comments of
k8s.io/api v1.32 and apimachinery's ObjectMeta), by struct and field.

kuota's built-in structs carry none of these (msgspec has no place for them and
the simulation never needed them); the API server needs them for strategic
merge and server-side apply. Kueue's kinds declare theirs in their types
(``list_map``/``LIST_SET``), which the CRDs already carry; CRDs have no patch
strategy (strategic merge is refused for them, as by kube-apiserver).
"""

from __future__ import annotations

from typing import Any

_ATOMIC: dict[str, Any] = {"x-kubernetes-list-type": "atomic"}


def _map(*keys: str, strategy: str = "merge", merge_key: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": list(keys),
    }
    if strategy:
        out["x-kubernetes-patch-strategy"] = strategy
        out["x-kubernetes-patch-merge-key"] = merge_key or keys[0]
    return out


def _merge_atomic(merge_key: str) -> dict[str, Any]:
    """Strategic merge by key, but one atomic list for apply (Job conditions, hostIPs)."""
    return {
        "x-kubernetes-list-type": "atomic",
        "x-kubernetes-patch-strategy": "merge",
        "x-kubernetes-patch-merge-key": merge_key,
    }


_CONDITIONS = _map("type")

# (struct name, wire field) -> markers. Struct names are kuota's, which are
# Kubernetes' Go type names. A list's markers go on array schemas only (a
# field kuota keeps as any value gets none); a struct's patch strategy
# (retainKeys) goes on the object.
MARKERS: dict[tuple[str, str], dict[str, Any]] = {
    ("APIServiceStatus", "conditions"): _CONDITIONS,
    # policy/v1
    ("PodDisruptionBudgetSpec", "selector"): {"x-kubernetes-patch-strategy": "replace"},
    ("PodDisruptionBudgetStatus", "conditions"): _CONDITIONS,
    # apimachinery meta/v1
    ("ObjectMeta", "finalizers"): {
        "x-kubernetes-list-type": "set",
        "x-kubernetes-patch-strategy": "merge",
    },
    ("ObjectMeta", "ownerReferences"): _map("uid"),
    ("ObjectMeta", "managedFields"): _ATOMIC,
    ("LabelSelector", "matchExpressions"): _ATOMIC,
    ("LabelSelectorRequirement", "values"): _ATOMIC,
    # core/v1
    ("PodSpec", "volumes"): _map("name", strategy="merge,retainKeys"),
    ("PodSpec", "initContainers"): _map("name"),
    ("PodSpec", "containers"): _map("name"),
    ("PodSpec", "ephemeralContainers"): _map("name"),
    ("PodSpec", "imagePullSecrets"): _map("name"),
    ("PodSpec", "tolerations"): _ATOMIC,
    ("PodSpec", "hostAliases"): _map("ip"),
    ("PodSpec", "readinessGates"): _ATOMIC,
    ("PodSpec", "topologySpreadConstraints"): _map(
        "topologyKey", "whenUnsatisfiable", merge_key="topologyKey"
    ),
    ("PodSpec", "resourceClaims"): _map("name", strategy="merge,retainKeys"),
    ("PodSpec", "schedulingGates"): _map("name"),
    ("Container", "command"): _ATOMIC,
    ("Container", "args"): _ATOMIC,
    ("Container", "ports"): _map("containerPort", "protocol", merge_key="containerPort"),
    ("Container", "envFrom"): _ATOMIC,
    ("Container", "env"): _map("name"),
    ("Container", "resizePolicy"): _ATOMIC,
    ("Container", "volumeMounts"): _map("mountPath"),
    ("Container", "volumeDevices"): _map("devicePath"),
    ("ResourceRequirements", "claims"): _map("name", strategy=""),
    ("TopologySpreadConstraint", "matchLabelKeys"): _ATOMIC,
    ("NodeSelector", "nodeSelectorTerms"): _ATOMIC,
    ("NodeSelectorTerm", "matchExpressions"): _ATOMIC,
    ("NodeSelectorTerm", "matchFields"): _ATOMIC,
    ("NodeSelectorRequirement", "values"): _ATOMIC,
    ("NodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution"): _ATOMIC,
    ("PodAffinity", "requiredDuringSchedulingIgnoredDuringExecution"): _ATOMIC,
    ("PodAffinity", "preferredDuringSchedulingIgnoredDuringExecution"): _ATOMIC,
    ("PodAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution"): _ATOMIC,
    ("PodAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution"): _ATOMIC,
    ("PodAffinityTerm", "namespaces"): _ATOMIC,
    ("PodAffinityTerm", "matchLabelKeys"): _ATOMIC,
    ("PodAffinityTerm", "mismatchLabelKeys"): _ATOMIC,
    ("PodStatus", "conditions"): _CONDITIONS,
    ("PodStatus", "podIPs"): _map("ip"),
    ("PodStatus", "hostIPs"): _merge_atomic("ip"),
    ("PodStatus", "initContainerStatuses"): _ATOMIC,
    ("PodStatus", "containerStatuses"): _ATOMIC,
    ("PodStatus", "ephemeralContainerStatuses"): _ATOMIC,
    ("PodStatus", "resourceClaimStatuses"): _map("name", strategy="merge,retainKeys"),
    ("NodeSpec", "podCIDRs"): {
        "x-kubernetes-list-type": "set",
        "x-kubernetes-patch-strategy": "merge",
    },
    ("NodeSpec", "taints"): _ATOMIC,
    ("NodeStatus", "conditions"): _CONDITIONS,
    ("NodeStatus", "addresses"): _CONDITIONS,
    ("NodeStatus", "images"): _ATOMIC,
    ("NodeStatus", "volumesInUse"): _ATOMIC,
    ("NodeStatus", "volumesAttached"): _ATOMIC,
    ("NodeStatus", "runtimeHandlers"): _ATOMIC,
    ("NamespaceSpec", "finalizers"): _ATOMIC,
    ("NamespaceStatus", "conditions"): _CONDITIONS,
    ("LimitRangeSpec", "limits"): _ATOMIC,
    ("ServiceSpec", "ports"): _map("port", "protocol", merge_key="port"),
    ("ServiceSpec", "clusterIPs"): _ATOMIC,
    ("ServiceSpec", "ipFamilies"): _ATOMIC,
    ("ServiceStatus", "conditions"): _CONDITIONS,
    ("Scheduling", "tolerations"): _ATOMIC,
    ("RuntimeClassScheduling", "tolerations"): _ATOMIC,
    # batch/v1
    ("JobStatus", "conditions"): _merge_atomic("type"),
    ("CronJobStatus", "active"): _ATOMIC,
    # apps/v1
    ("DeploymentStatus", "conditions"): _CONDITIONS,
    ("ReplicaSetStatus", "conditions"): _CONDITIONS,
    ("DaemonSetStatus", "conditions"): _CONDITIONS,
    ("StatefulSetStatus", "conditions"): _CONDITIONS,
    ("HorizontalPodAutoscalerStatus", "conditions"): _CONDITIONS,
    ("StatefulSetSpec", "volumeClaimTemplates"): _ATOMIC,
    ("DeploymentSpec", "strategy"): {"x-kubernetes-patch-strategy": "retainKeys"},
    # rbac.authorization.k8s.io/v1
    ("Role", "rules"): _ATOMIC,
    ("ClusterRole", "rules"): _ATOMIC,
    ("PolicyRule", "verbs"): _ATOMIC,
    ("PolicyRule", "apiGroups"): _ATOMIC,
    ("PolicyRule", "resources"): _ATOMIC,
    ("PolicyRule", "resourceNames"): _ATOMIC,
    ("PolicyRule", "nonResourceURLs"): _ATOMIC,
    ("AggregationRule", "clusterRoleSelectors"): _ATOMIC,
    ("RoleBinding", "subjects"): _ATOMIC,
    ("ClusterRoleBinding", "subjects"): _ATOMIC,
    # admissionregistration.k8s.io/v1
    ("ValidatingWebhookConfiguration", "webhooks"): _map("name"),
    ("MutatingWebhookConfiguration", "webhooks"): _map("name"),
    ("ValidatingWebhook", "rules"): _ATOMIC,
    ("MutatingWebhook", "rules"): _ATOMIC,
    ("ValidatingWebhook", "admissionReviewVersions"): _ATOMIC,
    ("MutatingWebhook", "admissionReviewVersions"): _ATOMIC,
    ("RuleWithOperations", "operations"): _ATOMIC,
    ("RuleWithOperations", "apiGroups"): _ATOMIC,
    ("RuleWithOperations", "apiVersions"): _ATOMIC,
    ("RuleWithOperations", "resources"): _ATOMIC,
    ("MatchResources", "resourceRules"): _ATOMIC,
    ("MatchResources", "excludeResourceRules"): _ATOMIC,
    ("NamedRuleWithOperations", "resourceNames"): _ATOMIC,
    ("NamedRuleWithOperations", "operations"): _ATOMIC,
    ("NamedRuleWithOperations", "apiGroups"): _ATOMIC,
    ("NamedRuleWithOperations", "apiVersions"): _ATOMIC,
    ("NamedRuleWithOperations", "resources"): _ATOMIC,
    ("ValidatingAdmissionPolicySpec", "validations"): _ATOMIC,
    ("ValidatingAdmissionPolicySpec", "auditAnnotations"): _ATOMIC,
    ("ValidatingAdmissionPolicySpec", "matchConditions"): _map("name"),
    ("ValidatingAdmissionPolicySpec", "variables"): _map("name"),
    ("ValidatingAdmissionPolicyStatus", "conditions"): _map("type", strategy=""),
    ("TypeChecking", "expressionWarnings"): _ATOMIC,
    ("ValidatingAdmissionPolicyBindingSpec", "validationActions"): {
        "x-kubernetes-list-type": "set"
    },
}
