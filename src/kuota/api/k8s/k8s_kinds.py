"""The Kubernetes built-in kinds kuota serves, declared once: resource names,
short names and categories as the API server's discovery gives them, the columns of
``kubectl get`` (the server's table convertors: the cells are computed, so no JSON
path; ``priority`` 1 is ``-o wide``), subresources, structs and create rules."""

from __future__ import annotations

from kuota.api.k8s import admission_policy as ap
from kuota.api.k8s import admissionregistration as ar
from kuota.api.k8s import (
    apiregistration,
    apps,
    autoscaling,
    batch,
    configobjects,
    coordination,
    corev1,
    networking,
    policy,
    rbac,
    resource,
    resourcequota,
    service,
)
from kuota.api.k8s import autoscaling_v1 as hpa_v1
from kuota.api.k8s import validation as cv
from kuota.api.k8s.event import Event
from kuota.api.k8s.validation import resource_kinds
from kuota.api.k8s.validation.apiservice import validate_apiservice
from kuota.api.kindspec import KindSpec, PrinterColumn, VersionSpec, gateless
from kuota.api.names import is_dns1035_label, is_dns1123_label

__all__ = ["K8S_KINDS", "RESOURCE_KINDS"]

_ALL = ("all",)  # the category ``kubectl get all`` lists


def _cols(*names: str, wide: tuple[str, ...] = ()) -> tuple[PrinterColumn, ...]:
    """Table columns after Name; "Age" is a date, the rest strings."""
    return tuple(PrinterColumn(n, "date" if n == "Age" else "string") for n in names) + tuple(
        PrinterColumn(n, "string", priority=1) for n in wide
    )


def _v1(wire: type, columns: tuple[PrinterColumn, ...], decoded: bool = True) -> tuple[VersionSpec]:
    return (VersionSpec("v1", wire, storage=True, columns=columns, decoded=decoded),)


def _path_segment(name: str) -> list[str]:
    """apimachinery's ValidatePathSegmentName (RBAC's name rule)."""
    if name in (".", ".."):
        return [f'may not be "{name}"']
    return [f"may not contain '{c}'" for c in "/%" if c in name]


_HPA = _cols("Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age")

K8S_KINDS: tuple[KindSpec, ...] = (
    KindSpec(
        group="",
        kind="Pod",
        plural="pods",
        namespaced=True,
        internal=corev1.Pod,
        versions=_v1(
            corev1.Pod,
            _cols(
                "Ready",
                "Status",
                "Restarts",
                "Age",
                wide=("IP", "Node", "Nominated Node", "Readiness Gates"),
            ),
        ),
        short_names=("po",),
        categories=_ALL,
        status_subresource=True,
        validate=gateless(cv.validate_pod),
    ),
    KindSpec(
        group="",
        kind="Namespace",
        plural="namespaces",
        namespaced=False,
        internal=corev1.Namespace,
        versions=_v1(corev1.Namespace, _cols("Status", "Age")),
        short_names=("ns",),
        status_subresource=True,
        validate=gateless(cv.validate_namespace),
        name_fn=is_dns1123_label,
    ),
    KindSpec(
        group="",
        kind="Node",
        plural="nodes",
        namespaced=False,
        internal=corev1.Node,
        versions=_v1(
            corev1.Node,
            _cols(
                "Status",
                "Roles",
                "Age",
                "Version",
                wide=("Internal-IP", "External-IP", "OS-Image", "Kernel-Version"),
            ),
        ),
        short_names=("no",),
        status_subresource=True,
        validate=gateless(cv.validate_node),
    ),
    KindSpec(
        group="",
        kind="LimitRange",
        plural="limitranges",
        namespaced=True,
        internal=corev1.LimitRange,
        versions=_v1(corev1.LimitRange, _cols("Created At")),
        short_names=("limits",),
        validate=gateless(cv.validate_limit_range),
    ),
    KindSpec(
        group="scheduling.k8s.io",
        kind="PriorityClass",
        plural="priorityclasses",
        namespaced=False,
        internal=corev1.PriorityClass,
        versions=_v1(corev1.PriorityClass, _cols("Value", "Global-Default", "Age")),
        short_names=("pc",),
        validate=gateless(cv.validate_priority_class),
    ),
    KindSpec(
        group="node.k8s.io",
        kind="RuntimeClass",
        plural="runtimeclasses",
        namespaced=False,
        internal=corev1.RuntimeClass,
        versions=_v1(corev1.RuntimeClass, _cols("Handler", "Age")),
        validate=gateless(cv.validate_runtime_class),
    ),
    KindSpec(
        group="batch",
        kind="Job",
        plural="jobs",
        namespaced=True,
        internal=batch.Job,
        versions=_v1(
            batch.Job,
            _cols(
                "Status",
                "Completions",
                "Duration",
                "Age",
                wide=("Containers", "Images", "Selector"),
            ),
        ),
        categories=_ALL,
        status_subresource=True,
        validate=gateless(cv.validate_job),
    ),
    KindSpec(
        group="batch",
        kind="CronJob",
        plural="cronjobs",
        namespaced=True,
        internal=batch.CronJob,
        versions=_v1(
            batch.CronJob,
            _cols(
                "Schedule",
                "Timezone",
                "Suspend",
                "Active",
                "Last Schedule",
                "Age",
                wide=("Containers", "Images", "Selector"),
            ),
        ),
        short_names=("cj",),
        categories=_ALL,
        status_subresource=True,
        validate=gateless(cv.validate_cron_job),
    ),
    KindSpec(
        group="apps",
        kind="DaemonSet",
        plural="daemonsets",
        namespaced=True,
        internal=apps.DaemonSet,
        versions=_v1(
            apps.DaemonSet,
            _cols(
                "Desired",
                "Current",
                "Ready",
                "Up-to-date",
                "Available",
                "Node Selector",
                "Age",
                wide=("Containers", "Images", "Selector"),
            ),
        ),
        short_names=("ds",),
        categories=_ALL,
        status_subresource=True,
        validate=gateless(apps.validate_daemon_set),
    ),
    KindSpec(
        group="apps",
        kind="ReplicaSet",
        plural="replicasets",
        namespaced=True,
        internal=apps.ReplicaSet,
        versions=_v1(
            apps.ReplicaSet,
            _cols("Desired", "Current", "Ready", "Age", wide=("Containers", "Images", "Selector")),
        ),
        short_names=("rs",),
        categories=_ALL,
        status_subresource=True,
        scale_subresource=True,
        validate=gateless(apps.validate_replica_set),
    ),
    KindSpec(
        group="apps",
        kind="Deployment",
        plural="deployments",
        namespaced=True,
        internal=apps.Deployment,
        versions=_v1(
            apps.Deployment,
            _cols(
                "Ready", "Up-to-date", "Available", "Age", wide=("Containers", "Images", "Selector")
            ),
        ),
        short_names=("deploy",),
        categories=_ALL,
        status_subresource=True,
        scale_subresource=True,
        validate=gateless(apps.validate_deployment),
    ),
    KindSpec(
        group="apps",
        kind="StatefulSet",
        plural="statefulsets",
        namespaced=True,
        internal=apps.StatefulSet,
        versions=_v1(apps.StatefulSet, _cols("Ready", "Age", wide=("Containers", "Images"))),
        short_names=("sts",),
        categories=_ALL,
        status_subresource=True,
        scale_subresource=True,
        validate=gateless(apps.validate_stateful_set),
    ),
    KindSpec(
        group="apps",
        kind="ControllerRevision",
        plural="controllerrevisions",
        namespaced=True,
        internal=apps.ControllerRevision,
        versions=_v1(apps.ControllerRevision, _cols("Controller", "Revision", "Age")),
        validate=gateless(apps.validate_controller_revision),
    ),
    # A Service names DNS records: a DNS-1035 label.
    KindSpec(
        group="",
        kind="Service",
        plural="services",
        namespaced=True,
        internal=service.Service,
        versions=_v1(
            service.Service,
            _cols("Type", "Cluster-IP", "External-IP", "Port(s)", "Age", wide=("Selector",)),
        ),
        short_names=("svc",),
        categories=_ALL,
        status_subresource=True,
        validate=gateless(service.validate_service),
        name_fn=is_dns1035_label,
    ),
    # What a deployment applies beside its controller (kuota manifests) and
    # what Kueue's internal certificate management keeps its certificates in.
    KindSpec(
        group="",
        kind="ConfigMap",
        plural="configmaps",
        namespaced=True,
        internal=configobjects.ConfigMap,
        versions=_v1(
            configobjects.ConfigMap, (PrinterColumn("Age", "date", ".metadata.creationTimestamp"),)
        ),
        short_names=("cm",),
    ),
    KindSpec(
        group="",
        kind="Secret",
        plural="secrets",
        namespaced=True,
        internal=configobjects.Secret,
        versions=_v1(
            configobjects.Secret,
            (
                PrinterColumn("Type", "string", ".type"),
                PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
            ),
        ),
        validate=gateless(configobjects.validate_secret),
        default=configobjects.default_secret,
    ),
    KindSpec(
        group="",
        kind="ServiceAccount",
        plural="serviceaccounts",
        namespaced=True,
        internal=configobjects.ServiceAccount,
        versions=_v1(
            configobjects.ServiceAccount,
            (PrinterColumn("Age", "date", ".metadata.creationTimestamp"),),
        ),
        short_names=("sa",),
    ),
    KindSpec(
        group="",
        kind="PodTemplate",
        plural="podtemplates",
        namespaced=True,
        internal=corev1.PodTemplate,
        versions=_v1(corev1.PodTemplate, _cols("Containers", "Images", "Pod Labels")),
        validate=gateless(cv.validate_pod_template),
    ),
    # Leader election's lock (kuota controller's replicas, as Kueue's).
    KindSpec(
        group=coordination.GROUP,
        kind="Lease",
        plural="leases",
        namespaced=True,
        internal=coordination.Lease,
        versions=_v1(
            coordination.Lease,
            (
                PrinterColumn("Holder", "string", ".spec.holderIdentity"),
                PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
            ),
        ),
    ),
    # Stored, not acted on (kuota runs no autoscaler and no metrics pipeline):
    # a business-group quota tree charges its target's maxReplicas. v2 is
    # stored; v1 (``kubectl autoscale``) is converted to and from it.
    KindSpec(
        group=autoscaling.GROUP,
        kind="HorizontalPodAutoscaler",
        plural="horizontalpodautoscalers",
        namespaced=True,
        internal=autoscaling.HorizontalPodAutoscaler,
        versions=(
            VersionSpec("v2", autoscaling.HorizontalPodAutoscaler, storage=True, columns=_HPA),
            VersionSpec(
                "v1",
                hpa_v1.HorizontalPodAutoscalerV1,
                to_internal=hpa_v1.hpa_to_v2,
                from_internal=hpa_v1.hpa_from_v2,
                columns=_HPA,
            ),
        ),
        short_names=("hpa",),
        categories=_ALL,
        status_subresource=True,
        validate=gateless(hpa_v1.validate_hpa),
        default=hpa_v1.default_hpa,
    ),
    # Namespaced quotas beside Kueue's: the embedded API server's admission
    # refuses creates over ``hard`` and its controller keeps ``status.used``
    # (kuota.cluster.apiserver.resourcequota).
    KindSpec(
        group="",
        kind="ResourceQuota",
        plural="resourcequotas",
        namespaced=True,
        internal=resourcequota.ResourceQuota,
        versions=_v1(resourcequota.ResourceQuota, _cols("Age", "Request", "Limit")),
        short_names=("quota",),
        status_subresource=True,
        validate=gateless(resourcequota.validate_resource_quota),
    ),
    # Stored and served; status by the embedded disruption controller (no
    # eviction API in kuota).
    KindSpec(
        group=policy.GROUP,
        kind="PodDisruptionBudget",
        plural="poddisruptionbudgets",
        namespaced=True,
        internal=policy.PodDisruptionBudget,
        versions=_v1(
            policy.PodDisruptionBudget,
            _cols("Min Available", "Max Unavailable", "Allowed Disruptions", "Age"),
        ),
        short_names=("pdb",),
        status_subresource=True,
        validate=gateless(policy.validate_pdb),
    ),
    # Stored and served (no ingress controller in kuota).
    KindSpec(
        group=networking.GROUP,
        kind="Ingress",
        plural="ingresses",
        namespaced=True,
        internal=networking.Ingress,
        versions=_v1(networking.Ingress, _cols("Class", "Hosts", "Address", "Ports", "Age")),
        short_names=("ing",),
        status_subresource=True,
        validate=gateless(networking.validate_ingress),
    ),
    # Written by the recorders: the control plane's, and over the API those
    # of controllers in other processes (kuota controller).
    KindSpec(
        group="",
        kind="Event",
        plural="events",
        namespaced=True,
        internal=Event,
        versions=_v1(Event, _cols("Last Seen", "Type", "Reason", "Object", "Message")),
        short_names=("ev",),
    ),
    *(
        KindSpec(
            group=rbac.GROUP,
            kind=typ.__name__,
            plural=plural,
            namespaced=namespaced,
            internal=typ,
            versions=_v1(typ, ()),
            name_fn=_path_segment,  # "system:basic-user": RBAC names are path segments
        )
        for typ, plural, namespaced in (
            (rbac.Role, "roles", True),
            (rbac.ClusterRole, "clusterroles", False),
            (rbac.RoleBinding, "rolebindings", True),
            (rbac.ClusterRoleBinding, "clusterrolebindings", False),
        )
    ),
    # Extension API servers' registrations (Kueue's visibility server): stored.
    KindSpec(
        group=apiregistration.GROUP,
        kind="APIService",
        plural="apiservices",
        namespaced=False,
        internal=apiregistration.APIService,
        versions=_v1(
            apiregistration.APIService,
            (
                PrinterColumn("Service", "string", ".spec.service.name"),
                PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
            ),
        ),
        validate=gateless(validate_apiservice),
    ),
    # Read by serve's webhook caller (kuota.webhooks.caller), as kube-apiserver's.
    *(
        KindSpec(
            group=ar.GROUP,
            kind=typ.__name__,
            plural=typ.__name__.lower() + "s",
            namespaced=False,
            internal=typ,
            versions=_v1(typ, ()),
        )
        for typ in (ar.MutatingWebhookConfiguration, ar.ValidatingWebhookConfiguration)
    ),
    # Enforced on writes by kuota.webhooks.policy, as kube-apiserver's
    # ValidatingAdmissionPolicy plugin.
    KindSpec(
        group=ar.GROUP,
        kind="ValidatingAdmissionPolicy",
        plural="validatingadmissionpolicies",
        namespaced=False,
        internal=ap.ValidatingAdmissionPolicy,
        versions=_v1(ap.ValidatingAdmissionPolicy, _cols("Validations", "ParamKind", "Age")),
        categories=("api-extensions",),
        validate=gateless(ap.validate_policy),
    ),
    KindSpec(
        group=ar.GROUP,
        kind="ValidatingAdmissionPolicyBinding",
        plural="validatingadmissionpolicybindings",
        namespaced=False,
        internal=ap.ValidatingAdmissionPolicyBinding,
        versions=_v1(ap.ValidatingAdmissionPolicyBinding, _cols("PolicyName", "ParamRef", "Age")),
        categories=("api-extensions",),
        validate=gateless(ap.validate_binding),
    ),
)

# Dynamic Resource Allocation (resource.k8s.io): what Kueue's DRA quota reads.
RESOURCE_KINDS: tuple[KindSpec, ...] = (
    KindSpec(
        group=resource.GROUP,
        kind="DeviceClass",
        plural="deviceclasses",
        namespaced=False,
        internal=resource.DeviceClass,
        versions=_v1(resource.DeviceClass, _cols("Age")),
        validate=gateless(resource_kinds.validate_device_class),
    ),
    KindSpec(
        group=resource.GROUP,
        kind="ResourceClaimTemplate",
        plural="resourceclaimtemplates",
        namespaced=True,
        internal=resource.ResourceClaimTemplate,
        versions=_v1(resource.ResourceClaimTemplate, _cols("Age")),
        validate=gateless(resource_kinds.validate_resource_claim_template),
        default=resource.default_claim_template,
    ),
    KindSpec(
        group=resource.GROUP,
        kind="ResourceSlice",
        plural="resourceslices",
        namespaced=False,
        internal=resource.ResourceSlice,
        versions=_v1(resource.ResourceSlice, _cols("Node", "Driver", "Pool", "Age")),
        validate=gateless(resource_kinds.validate_resource_slice),
    ),
)
