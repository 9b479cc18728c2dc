"""A PodSpec, a pod template and a Pod (``pkg/apis/core/validation``)."""

from __future__ import annotations

from kuota.api import names
from kuota.api.errors import (
    child,
    duplicate,
    forbidden,
    index,
    invalid,
    not_supported,
    required,
)
from kuota.api.k8s.corev1 import Pod, PodSpec, PodTemplate, PodTemplateSpec
from kuota.api.k8s.validation.affinity import (
    validate_affinity,
    validate_tolerations,
    validate_topology_spread_constraints,
)
from kuota.api.k8s.validation.containers import validate_containers, validate_init_containers
from kuota.api.k8s.validation.objectmeta import (
    MAX_INT32,
    Errors,
    inclusive_range,
    name_errors,
    validate_annotations,
    validate_labels,
    validate_object_meta,
)
from kuota.api.k8s.validation.resource_requirements import (
    validate_overhead,
    validate_pod_resource_name,
    validate_resource_requirements,
)

# ------------------------------------------------------------------------ PodSpec
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")


def _validate_scheduling_gates(spec: PodSpec, path: str) -> Errors:
    errs: Errors = []
    seen: set[str] = set()
    for i, gate in enumerate(spec.scheduling_gates or []):
        p = index(path, i)
        errs += [invalid(p, gate.name, msg) for msg in names.is_qualified_name(gate.name)]
        if gate.name in seen:
            errs.append(duplicate(p, gate.name))
        seen.add(gate.name)
    return errs


def _validate_host_network_ports(spec: PodSpec, path: str, is_pod: bool) -> Errors:
    # With hostNetwork a pod's host port is its container port. A template may
    # leave it 0: it is defaulted when the pod is created.
    if not spec.host_network:
        return []
    errs: Errors = []
    for i, ctr in enumerate(spec.containers):
        for j, port in enumerate(ctr.ports or []):
            hp = port.host_port or 0
            if (is_pod or hp != 0) and hp != port.container_port:
                p = child(index(child(index(child(path, "containers"), i), "ports"), j), "hostPort")
                errs.append(invalid(p, hp, "must match `containerPort` when `hostNetwork` is true"))
    return errs


def validate_pod_spec(spec: PodSpec | None, path: str, *, is_pod: bool = False) -> Errors:
    """``ValidatePodSpec`` (the parts listed in the module docstring). ``is_pod`` is
    True for a Pod's own spec, False for a template."""
    spec = spec if spec is not None else PodSpec(containers=[])
    errs: Errors = []
    errs += validate_containers(spec.containers, child(path, "containers"))
    errs += validate_init_containers(
        spec.init_containers, spec.containers, child(path, "initContainers")
    )
    if spec.resources is not None:
        res_path = child(path, "resources")
        if spec.resources.claims is not None:
            errs.append(
                forbidden(
                    child(res_path, "claims"), "claims cannot be set for Resources at pod-level"
                )
            )
        errs += validate_resource_requirements(spec.resources, res_path, validate_pod_resource_name)
    errs += _validate_host_network_ports(spec, path, is_pod)
    if spec.restart_policy is not None and spec.restart_policy not in _RESTART_POLICIES:
        errs.append(
            not_supported(child(path, "restartPolicy"), spec.restart_policy, _RESTART_POLICIES)
        )
    if spec.dns_policy and spec.dns_policy not in _DNS_POLICIES:
        errs.append(not_supported(child(path, "dnsPolicy"), spec.dns_policy, _DNS_POLICIES))
    errs += validate_labels(spec.node_selector, child(path, "nodeSelector"))
    errs += validate_affinity(spec.affinity, child(path, "affinity"))
    errs += _validate_scheduling_gates(spec, child(path, "schedulingGates"))
    errs += validate_topology_spread_constraints(
        spec.topology_spread_constraints, child(path, "topologySpreadConstraints")
    )
    if spec.service_account_name:
        errs += name_errors(
            names.is_dns1123_subdomain, spec.service_account_name, child(path, "serviceAccountName")
        )
    if spec.node_name:
        errs += name_errors(names.is_dns1123_subdomain, spec.node_name, child(path, "nodeName"))
    if spec.active_deadline_seconds is not None:
        ads = spec.active_deadline_seconds
        if not 1 <= ads <= MAX_INT32:
            errs.append(
                invalid(child(path, "activeDeadlineSeconds"), ads, inclusive_range(1, MAX_INT32))
            )
    if spec.hostname:
        errs += [
            invalid(child(path, "hostname"), spec.hostname, m)
            for m in names.is_dns1123_label(spec.hostname)
        ]
    if spec.subdomain:
        errs += [
            invalid(child(path, "subdomain"), spec.subdomain, m)
            for m in names.is_dns1123_label(spec.subdomain)
        ]
    errs += validate_tolerations(spec.tolerations, child(path, "tolerations"))
    if spec.priority_class_name:
        errs += name_errors(
            names.is_dns1123_subdomain, spec.priority_class_name, child(path, "priorityClassName")
        )
    if spec.runtime_class_name is not None:
        errs += name_errors(
            names.is_dns1123_subdomain, spec.runtime_class_name, child(path, "runtimeClassName")
        )
    if spec.preemption_policy is not None and spec.preemption_policy not in PREEMPTION_POLICIES:
        errs.append(
            not_supported(
                child(path, "preemptionPolicy"), spec.preemption_policy, PREEMPTION_POLICIES
            )
        )
    errs += validate_overhead(spec.overhead, child(path, "overhead"))
    return errs


def validate_pod_template_spec(tmpl: PodTemplateSpec, path: str) -> Errors:
    # Kubernetes checks a template's labels at "<path>.labels" (no "metadata").
    errs = validate_labels(tmpl.metadata.labels, child(path, "labels"))
    errs += validate_annotations(tmpl.metadata.annotations, child(path, "annotations"))
    errs += validate_pod_spec(tmpl.spec, child(path, "spec"))
    if tmpl.spec is not None and tmpl.spec.ephemeral_containers:
        errs.append(
            forbidden(
                child(child(path, "spec"), "ephemeralContainers"),
                "ephemeral containers not allowed in pod template",
            )
        )
    return errs


# ---------------------------------------------------------------------- kinds
def validate_pod_template(pt: PodTemplate) -> Errors:
    """``ValidatePodTemplate``: the object's metadata and its template."""
    errs = validate_object_meta(pt.metadata, True, names.is_dns1123_subdomain)
    if pt.template is None:
        return [*errs, required("template", "")]
    return errs + validate_pod_template_spec(pt.template, "template")


def validate_pod(pod: Pod) -> Errors:
    errs = validate_object_meta(pod.metadata, True, names.is_dns1123_subdomain)
    errs += validate_pod_spec(pod.spec, "spec", is_pod=True)
    if pod.spec is not None:
        for field_name, ctrs in (
            ("containers", pod.spec.containers),
            ("initContainers", pod.spec.init_containers or []),
        ):
            for i, ctr in enumerate(ctrs):
                if ctr.image and ctr.image != ctr.image.strip():
                    errs.append(
                        invalid(
                            child(index(child("spec", field_name), i), "image"),
                            ctr.image,
                            "must not have leading or trailing whitespace",
                        )
                    )
    return errs
