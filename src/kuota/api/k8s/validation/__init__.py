"""Validation of the built-in kinds, as the API server validates them on create:
one module per concept (``objectmeta``, ``affinity``, ``resources``, ``containers``,
``podspec``, ``corev1_kinds``, ``jobs``); apps/v1 rules are in ``kuota.api.k8s.apps``.

Rules, field paths and messages follow ``pkg/apis/core/validation``,
``pkg/apis/batch/validation``, ``pkg/apis/scheduling/validation``,
``pkg/apis/node/validation`` (kubernetes/kubernetes) and apimachinery's
``api/validation`` and ``apis/meta/v1/validation``, with the default feature
gates. Every function collects all errors. Kubernetes' own path quirks are kept on
purpose, so errors read exactly as ``kubectl`` prints them (e.g. a Node's taints
are reported under ``metadata.taints``, an overhead under ``overhead.limits[cpu]``,
a label error at ``metadata.labels`` without the key, a request above its limit at
``resources.requests`` without the key).

The API server validates *after* defaulting; these functions see manifests as
written, so a value that defaulting fills in is never reported missing:
``terminationGracePeriodSeconds``, ``dnsPolicy``, ``restartPolicy`` (absent means
Always), ``imagePullPolicy``, ``terminationMessagePolicy``, a port's
``protocol``, the Job selector (generated) and, for namespaced kinds, the
namespace (taken from the request, as ``kubectl apply`` does). A name may be
absent when ``generateName`` is given (the server generates it).

Covered: object metadata (name / generateName, namespace, generation, labels,
annotations, owner references, finalizers); everything in a PodSpec that affects
scheduling or quota: containers and init containers (names, images, sidecar
restartPolicy, probes/lifecycle only on sidecars, ports and host-port
conflicts), resource requirements (names, non-negative, integers for extended
resources, request ≤ limit, request = limit for non-overcommittable resources,
hugepages need cpu/memory), pod-level resources (names), overhead, nodeSelector,
node and pod (anti-)affinity, tolerations, topology spread constraints,
scheduling gates, priorityClassName, preemptionPolicy, runtimeClassName,
nodeName, activeDeadlineSeconds, hostNetwork ports; Job spec (counts, limits,
completion mode and the Indexed rules, restartPolicy, successPolicy mode,
podReplacementPolicy, managedBy, selector against template labels); Node taints
and capacity; Namespace finalizers; PriorityClass values and system names;
LimitRange items; RuntimeClass handler, overhead and scheduling.

Deliberately not covered (kuota carries these fields without interpreting them):
volumes and volume mounts/devices, env/envFrom, probe and lifecycle handler
contents, security contexts, DNS config, host aliases, readiness gates, OS,
image pull secrets, DRA resource claims and ``resources.claims``, a pod affinity
term's matchLabelKeys repeated in its labelSelector (Kubernetes only catches it
after merging the keys into the selector), pod-level vs container aggregate
resource consistency, hugepage size divisibility, pod annotations with special meaning (mirror pod, seccomp, AppArmor, deletion cost),
Job podFailurePolicy / successPolicy rule contents, the generated-selector
(controller-uid) checks, managedBy path characters, Node podCIDRs and config
source, all status validation and all update-only (immutability) rules. Node
affinity ``Gt``/``Lt`` values must be single, as Kubernetes checks; that the
value parses as an integer is not checked at admission by Kubernetes either (a
non-integer simply never matches).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kuota.api.k8s.batch import CronJob, Job
from kuota.api.k8s.corev1 import (
    LimitRange,
    Namespace,
    Node,
    Pod,
    PodTemplate,
    PriorityClass,
    RuntimeClass,
)
from kuota.api.k8s.validation.affinity import (
    validate_affinity,
    validate_node_selector,
    validate_node_selector_requirement,
    validate_taints,
    validate_tolerations,
    validate_topology_spread_constraints,
)
from kuota.api.k8s.validation.corev1_kinds import (
    validate_limit_range,
    validate_namespace,
    validate_node,
    validate_priority_class,
    validate_runtime_class,
)
from kuota.api.k8s.validation.jobs import validate_cron_job, validate_job
from kuota.api.k8s.validation.objectmeta import (
    IS_NEGATIVE,
    Errors,
    NameFn,
    validate_annotations,
    validate_label_name,
    validate_label_selector,
    validate_labels,
    validate_object_meta,
)
from kuota.api.k8s.validation.podspec import (
    validate_pod,
    validate_pod_spec,
    validate_pod_template,
    validate_pod_template_spec,
)
from kuota.api.k8s.validation.resource_requirements import (
    validate_resource_quantity_value,
    validate_resource_requirements,
)
from kuota.api.meta import selector_matches

__all__ = [
    "IS_NEGATIVE",
    "VALIDATORS",
    "Errors",
    "NameFn",
    "selector_matches",
    "validate_affinity",
    "validate_annotations",
    "validate_cron_job",
    "validate_job",
    "validate_label_name",
    "validate_label_selector",
    "validate_labels",
    "validate_limit_range",
    "validate_namespace",
    "validate_node",
    "validate_node_selector",
    "validate_node_selector_requirement",
    "validate_object_meta",
    "validate_pod",
    "validate_pod_spec",
    "validate_pod_template",
    "validate_pod_template_spec",
    "validate_priority_class",
    "validate_resource_quantity_value",
    "validate_resource_requirements",
    "validate_runtime_class",
    "validate_taints",
    "validate_tolerations",
    "validate_topology_spread_constraints",
]

# The create rules of the core/v1, scheduling, node and batch kinds, by struct.
VALIDATORS: dict[type, Callable[[Any], Errors]] = {
    Pod: validate_pod,
    PodTemplate: validate_pod_template,
    Namespace: validate_namespace,
    Node: validate_node,
    PriorityClass: validate_priority_class,
    LimitRange: validate_limit_range,
    RuntimeClass: validate_runtime_class,
    Job: validate_job,
    CronJob: validate_cron_job,
}
