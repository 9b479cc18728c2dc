"""Kubernetes built-in kinds kuota reads: core/v1 (Pod and its PodSpec, Namespace,
Node, LimitRange), and the one-struct groups scheduling.k8s.io/v1 PriorityClass and
node.k8s.io/v1 RuntimeClass. batch/v1 is in ``batch``, apps/v1 in ``apps``.

Every JSON field of the real Go types (``k8s.io/api`` at 10b39a39, July 2026) is
declared, so the strict decoder refuses only fields Kubernetes itself does not
know, and a Job or Pod written back keeps its meaning. What kuota decides with
(scheduling, quota, Job basics) is typed; the rest is carried as ``Any`` (objects
and lists marked ``preserve_unknown``) or as the plain scalar type.

Defaults:

* Optional fields are ``T | None = None``, also where Go uses a non-pointer
  ``omitempty`` field: these structs are embedded in Kueue's CRDs (Workload pod
  templates, ResourceFlavor taints and tolerations), whose schemas carry no
  defaults, and ``None`` keeps "absent" apart from an explicit zero value.
* A default is declared only where the API server applies one on create *and*
  kuota decides with it (marked "API default" below). ``Toleration.operator`` is
  deliberately not defaulted: Kubernetes stores it as written ("" or absent both
  mean Equal when matching), and Kueue's CEL rules test ``has(x.operator)``.

Enumerations are ``Literal`` with every value of the newest API, including ones
behind alpha feature gates (e.g. toleration operators ``Lt``/``Gt``); whether a
value is allowed is decided by ``kuota.api.k8s.validation`` as the API server with default
feature gates does.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec

from kuota.api.base import LIST_ATOMIC, LIST_SET, MAP_ATOMIC, Object, Quantity, list_map
from kuota.api.base import preserve_unknown as _pu
from kuota.api.meta import ConditionStatus, LabelSelector, ObjectMeta

__all__ = [
    "Affinity",
    "AnyList",
    "AnyObject",
    "Container",
    "ContainerPort",
    "LimitRange",
    "LimitRangeItem",
    "LimitRangeSpec",
    "Namespace",
    "NamespaceSpec",
    "NamespaceStatus",
    "Node",
    "NodeAddress",
    "NodeAffinity",
    "NodeCondition",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "NodeSpec",
    "NodeStatus",
    "Pod",
    "PodAffinity",
    "PodAffinityTerm",
    "PodAntiAffinity",
    "PodCondition",
    "PodSchedulingGate",
    "PodSpec",
    "PodStatus",
    "PodTemplateSpec",
    "PreferredSchedulingTerm",
    "PriorityClass",
    "ResourceList",
    "ResourceRequirements",
    "RuntimeClass",
    "RuntimeClassOverhead",
    "RuntimeClassScheduling",
    "StrList",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "WeightedPodAffinityTerm",
]

ResourceList = dict[str, Quantity]

# Untyped subtrees: carried through unchanged, never interpreted. Lists of them
# carry no list-map keys: a structural schema may only name keys its items declare.
AnyObject = Annotated[dict[str, Any], _pu()]
AnyList = Annotated[list[Any], _pu()]
StrList = Annotated[list[str], LIST_ATOMIC]

TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
# "" is accepted by the API server: empty operator means Equal, empty effect all
# effects. Lt/Gt need the alpha gate TaintTolerationComparisonOperators.
TolerationOperator = Literal["Equal", "Exists", "Lt", "Gt", ""]
TolerationEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute", ""]
RestartPolicy = Literal["Always", "OnFailure", "Never"]
PreemptionPolicy = Literal["PreemptLowerPriority", "Never"]
NodeSelectorOperator = Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
NodeInclusionPolicy = Literal["Honor", "Ignore"]
Protocol = Literal["TCP", "UDP", "SCTP"]


# ------------------------------------------------------------- taints & tolerations
class Toleration(Object):
    """No rules of its own: Kueue's CRDs put their CEL rules on lists of it.
    Operator and effect are plain strings, as in Go: the API server checks them
    in code (``validate_tolerations``) and Kueue's CRDs with CEL rules on the
    list, so a schema enum would report them at the wrong path."""

    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: int | None = None


class Taint(Object):
    key: str
    effect: str  # checked in code and by Kueue's CEL rule on the list, as in Go
    value: str | None = None
    time_added: datetime | None = None


# ------------------------------------------------------------------- node affinity
class NodeSelectorRequirement(Object):
    key: str
    operator: NodeSelectorOperator
    values: StrList | None = None


class NodeSelectorTerm(Object):
    match_expressions: Annotated[list[NodeSelectorRequirement], LIST_ATOMIC] | None = None
    match_fields: Annotated[list[NodeSelectorRequirement], LIST_ATOMIC] | None = None


class NodeSelector(Object):
    node_selector_terms: Annotated[list[NodeSelectorTerm], LIST_ATOMIC]


class PreferredSchedulingTerm(Object):
    weight: int
    preference: NodeSelectorTerm


class NodeAffinity(Object):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: (
        Annotated[list[PreferredSchedulingTerm], LIST_ATOMIC] | None
    ) = None


# -------------------------------------------------------------------- pod affinity
class PodAffinityTerm(Object):
    topology_key: str
    label_selector: LabelSelector | None = None
    namespaces: StrList | None = None
    namespace_selector: LabelSelector | None = None
    match_label_keys: StrList | None = None
    mismatch_label_keys: StrList | None = None


class WeightedPodAffinityTerm(Object):
    weight: int
    pod_affinity_term: PodAffinityTerm


class PodAffinity(Object):
    required_during_scheduling_ignored_during_execution: (
        Annotated[list[PodAffinityTerm], LIST_ATOMIC] | None
    ) = None
    preferred_during_scheduling_ignored_during_execution: (
        Annotated[list[WeightedPodAffinityTerm], LIST_ATOMIC] | None
    ) = None


class PodAntiAffinity(Object):
    required_during_scheduling_ignored_during_execution: (
        Annotated[list[PodAffinityTerm], LIST_ATOMIC] | None
    ) = None
    preferred_during_scheduling_ignored_during_execution: (
        Annotated[list[WeightedPodAffinityTerm], LIST_ATOMIC] | None
    ) = None


class Affinity(Object):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAntiAffinity | None = None


class TopologySpreadConstraint(Object):
    max_skew: int
    topology_key: str
    when_unsatisfiable: Literal["DoNotSchedule", "ScheduleAnyway"]
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: NodeInclusionPolicy | None = None
    node_taints_policy: NodeInclusionPolicy | None = None
    match_label_keys: StrList | None = None


# ---------------------------------------------------------------------- containers
class ResourceRequirements(Object):
    limits: ResourceList | None = None
    requests: ResourceList | None = None
    # DRA claim references ({name, request}); kuota does not account DRA yet.
    claims: AnyList | None = None


class ContainerPort(Object):
    container_port: int
    name: str | None = None
    host_port: int | None = None
    # API default (+default="TCP"); part of the list-map key, so always known.
    protocol: Protocol = "TCP"
    host_ip: str | None = msgspec.field(default=None, name="hostIP")


class Container(Object):
    """Regular, init (``restart_policy: Always`` makes it a sidecar) or the common
    part of an ephemeral container."""

    name: str
    image: str | None = None
    command: StrList | None = None
    args: StrList | None = None
    working_dir: str | None = None
    ports: Annotated[list[ContainerPort], list_map("containerPort", "protocol")] | None = None
    env_from: AnyList | None = None
    env: AnyList | None = None
    resources: ResourceRequirements | None = None
    resize_policy: AnyList | None = None
    restart_policy: RestartPolicy | None = None
    restart_policy_rules: AnyList | None = None
    volume_mounts: AnyList | None = None
    volume_devices: AnyList | None = None
    liveness_probe: AnyObject | None = None
    readiness_probe: AnyObject | None = None
    startup_probe: AnyObject | None = None
    lifecycle: AnyObject | None = None
    termination_message_path: str | None = None
    termination_message_policy: str | None = None
    image_pull_policy: str | None = None
    security_context: AnyObject | None = None
    stdin: bool | None = None
    stdin_once: bool | None = None
    tty: bool | None = None


class PodSchedulingGate(Object):
    name: str


# ------------------------------------------------------------------------- PodSpec
class PodSpec(Object):
    containers: Annotated[list[Container], list_map("name")]
    # Typed: what scheduling, quota and Job handling read.
    init_containers: Annotated[list[Container], list_map("name")] | None = None
    restart_policy: RestartPolicy | None = None  # None means Always
    termination_grace_period_seconds: int | None = None
    active_deadline_seconds: int | None = None
    node_selector: Annotated[dict[str, str], MAP_ATOMIC] | None = None
    node_name: str | None = None
    host_network: bool | None = None
    affinity: Affinity | None = None
    scheduler_name: str | None = None
    tolerations: Annotated[list[Toleration], LIST_ATOMIC] | None = None
    priority_class_name: str | None = None
    priority: int | None = None
    runtime_class_name: str | None = None
    preemption_policy: PreemptionPolicy | None = None
    overhead: ResourceList | None = None
    topology_spread_constraints: (
        Annotated[list[TopologySpreadConstraint], list_map("topologyKey", "whenUnsatisfiable")]
        | None
    ) = None
    scheduling_gates: Annotated[list[PodSchedulingGate], list_map("name")] | None = None
    resources: ResourceRequirements | None = None  # pod-level resources
    # Carried, not interpreted.
    volumes: AnyList | None = None
    ephemeral_containers: AnyList | None = None
    dns_policy: str | None = None
    service_account_name: str | None = None
    service_account: str | None = None  # deprecated alias of serviceAccountName
    automount_service_account_token: bool | None = None
    host_pid: bool | None = msgspec.field(default=None, name="hostPID")
    host_ipc: bool | None = msgspec.field(default=None, name="hostIPC")
    share_process_namespace: bool | None = None
    security_context: AnyObject | None = None
    image_pull_secrets: AnyList | None = None
    hostname: str | None = None
    subdomain: str | None = None
    host_aliases: AnyList | None = None
    dns_config: AnyObject | None = None
    readiness_gates: AnyList | None = None
    enable_service_links: bool | None = None
    set_hostname_as_fqdn: bool | None = msgspec.field(default=None, name="setHostnameAsFQDN")
    os: AnyObject | None = None
    host_users: bool | None = None
    resource_claims: AnyList | None = None
    hostname_override: str | None = None
    scheduling_group: AnyObject | None = None
    eviction_responders: AnyList | None = None


class PodTemplateSpec(Object):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodSpec | None = None


class PodTemplate(Object):
    """core/v1 PodTemplate: a stored pod template (Kueue's provisioning check
    writes one per pod set of a ProvisioningRequest)."""

    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    template: PodTemplateSpec | None = None


# --------------------------------------------------------------------------- Pod
class PodCondition(Object):
    type: str
    status: ConditionStatus
    observed_generation: int | None = None
    # metav1.Time without a pointer: written as null when unset.
    last_probe_time: datetime | None = None
    last_transition_time: datetime | None = None
    reason: str | None = None
    message: str | None = None


class PodStatus(Object):
    observed_generation: int | None = None
    phase: Literal["Pending", "Running", "Succeeded", "Failed", "Unknown"] | None = None
    conditions: Annotated[list[PodCondition], list_map("type")] | None = None
    message: str | None = None
    reason: str | None = None
    nominated_node_name: str | None = None
    host_ip: str | None = msgspec.field(default=None, name="hostIP")
    host_ips: AnyList | None = msgspec.field(default=None, name="hostIPs")
    pod_ip: str | None = msgspec.field(default=None, name="podIP")
    pod_ips: AnyList | None = msgspec.field(default=None, name="podIPs")
    start_time: datetime | None = None
    init_container_statuses: AnyList | None = None
    container_statuses: AnyList | None = None
    qos_class: Literal["Guaranteed", "Burstable", "BestEffort"] | None = None
    ephemeral_container_statuses: AnyList | None = None
    resize: str | None = None
    resource_claim_statuses: AnyList | None = None
    extended_resource_claim_status: AnyObject | None = None
    allocated_resources: ResourceList | None = None
    resources: ResourceRequirements | None = None
    node_allocatable_resource_claim_statuses: AnyList | None = None
    volume_health: AnyList | None = None


class Pod(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodSpec | None = None
    status: PodStatus | None = None


# --------------------------------------------------------------------- Namespace
class NamespaceSpec(Object):
    finalizers: StrList | None = None


class NamespaceStatus(Object):
    phase: Literal["Active", "Terminating"] | None = None
    conditions: AnyList | None = None


class Namespace(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: NamespaceSpec | None = None
    status: NamespaceStatus | None = None


# -------------------------------------------------------------------------- Node
class NodeSpec(Object):
    pod_cidr: str | None = msgspec.field(default=None, name="podCIDR")
    pod_cidrs: Annotated[list[str], LIST_SET] | None = msgspec.field(default=None, name="podCIDRs")
    provider_id: str | None = msgspec.field(default=None, name="providerID")
    unschedulable: bool | None = None
    taints: Annotated[list[Taint], LIST_ATOMIC] | None = None
    config_source: AnyObject | None = None  # deprecated, ignored by kubelets
    external_id: str | None = msgspec.field(default=None, name="externalID")  # deprecated
    pod_preemption_policy: str | None = None


class NodeCondition(Object):
    type: str
    status: ConditionStatus
    last_heartbeat_time: datetime | None = None
    last_transition_time: datetime | None = None
    reason: str | None = None
    message: str | None = None


class NodeAddress(Object):
    type: str
    address: str


class NodeStatus(Object):
    capacity: ResourceList | None = None
    allocatable: ResourceList | None = None
    phase: Literal["Pending", "Running", "Terminated"] | None = None  # deprecated
    conditions: Annotated[list[NodeCondition], list_map("type")] | None = None
    addresses: Annotated[list[NodeAddress], list_map("type")] | None = None
    daemon_endpoints: AnyObject | None = None
    node_info: AnyObject | None = None
    images: AnyList | None = None
    volumes_in_use: StrList | None = None
    volumes_attached: AnyList | None = None
    config: AnyObject | None = None
    runtime_handlers: AnyList | None = None
    features: AnyObject | None = None
    declared_features: StrList | None = None


class Node(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: NodeSpec | None = None
    status: NodeStatus | None = None


# ----------------------------------------------------------------- PriorityClass
class PriorityClass(Object):
    api_version: str
    kind: str
    value: int  # int32
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    global_default: bool | None = None
    description: str | None = None
    # API default: who may be preempted follows from it.
    preemption_policy: PreemptionPolicy = "PreemptLowerPriority"


# -------------------------------------------------------------------- LimitRange
class LimitRangeItem(Object):
    # "Container", "Pod", "PersistentVolumeClaim" or a fully qualified custom type.
    type: str
    max: ResourceList | None = None
    min: ResourceList | None = None
    default: ResourceList | None = None
    default_request: ResourceList | None = None
    max_limit_request_ratio: ResourceList | None = None


class LimitRangeSpec(Object):
    limits: Annotated[list[LimitRangeItem], LIST_ATOMIC]


class LimitRange(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: LimitRangeSpec | None = None


# ------------------------------------------------------------------ RuntimeClass
class RuntimeClassOverhead(Object):
    """``node.k8s.io/v1`` Overhead."""

    pod_fixed: ResourceList | None = None


class RuntimeClassScheduling(Object):
    """``node.k8s.io/v1`` Scheduling: merged into the pods that use the class."""

    node_selector: Annotated[dict[str, str], MAP_ATOMIC] | None = None
    tolerations: Annotated[list[Toleration], LIST_ATOMIC] | None = None


class RuntimeClass(Object):
    api_version: str
    kind: str
    handler: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    overhead: RuntimeClassOverhead | None = None
    scheduling: RuntimeClassScheduling | None = None
