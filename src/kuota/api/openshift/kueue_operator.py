"""OpenShift's ``Kueue`` custom resource (``kueue.openshift.io/v1``), read in place of
Kueue's Configuration file: its wire structs, with the schema markers and CEL rules of
github.com/openshift/kueue-operator ``pkg/apis/kueueoperator/v1/types.go`` (as
generated into ``manifests/kueue.openshift.io_kueues.yaml``), at operator commit
dc3b6577. What the operator makes of it is in ``operator_config``.

The Red Hat build of Kueue is configured through the Kueue Operator's cluster-scoped
singleton ``Kueue`` named ``cluster``; the operator turns its ``spec.config`` into
Kueue's Configuration (a v1beta2 ``controller_manager_config.yaml``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec

from kuota.api.base import (
    LIST_SET,
    Meta,
    Object,
    Rule,
    cel,
    crd_default,
    list_map,
    pattern,
    preserve_unknown,
)
from kuota.api.meta import ObjectMeta
from kuota.api.names import (
    dns1123_label_ok,
    go_pattern,
    is_dns1123_subdomain,
    qualified_name_ok,
)

if TYPE_CHECKING:
    pass


__all__ = [
    "API_VERSION",
    "DEFAULT_LOCAL_QUEUE",
    "FRAMEWORKS",
    "GROUP",
    "KIND",
    "MANAGED_NAMESPACE_LABEL",
    "OPERATOR_NAMESPACE",
    "ROOT_RULES",
    "SINGLETON_NAME",
    "AdmissionFairSharing",
    "AdmissionFairSharingCustom",
    "ByWorkload",
    "DeviceClassMapping",
    "DeviceClassSourceConfig",
    "ExternalFramework",
    "GangScheduling",
    "Integrations",
    "Kueue",
    "KueueConfiguration",
    "KueueIntegration",
    "KueueOperandSpec",
    "LabelKeys",
    "MultiKueue",
    "Preemption",
    "RequeuingStrategy",
    "ResourceWeight",
    "Resources",
    "WorkloadManagement",
    "is_openshift_kueue",
]

GROUP = "kueue.openshift.io"
API_VERSION = f"{GROUP}/v1"
KIND = "Kueue"
SINGLETON_NAME = "cluster"

# pkg/namespace/namespace.go: the namespace Kueue runs in when the operator cannot
# read its own (service-account file, POD_NAMESPACE); it is written into the
# Configuration's ``namespace``.
OPERATOR_NAMESPACE = "openshift-kueue-operator"
# pkg/configmap/configmap.go (managedJobsNamespaceSelector) and pkg/webhook: opt-in label.
MANAGED_NAMESPACE_LABEL = "kueue.openshift.io/managed"
# The LocalQueue that takes jobs created without a queue-name label in a managed namespace.
DEFAULT_LOCAL_QUEUE = "default"

# The operator's defaults for "" (no opinion), from the fields' documentation.
DEFAULT_LABEL_POLICY = "QueueName"
DEFAULT_GANG_SCHEDULING_POLICY = "ByWorkloadDefaults"
DEFAULT_PREEMPTION_POLICY = "Classical"

_SUBDOMAIN_RE = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
_LABEL_RE = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
_LABEL_KEY_RE = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"([a-z0-9]([-a-z0-9]*[a-z0-9])?)$"
)
_WEIGHT_RE = r"^[+]?([0-9]*\.?[0-9]+)([eE][+-]?[0-9]+)?$"


def _matches(go_re: str, message: str = "") -> Rule:
    """CEL ``self.matches(r'...')``; without a message the API server says
    ``failed rule: <rule>``. RE2's match is a search; these patterns are anchored."""
    rule = f"self.matches(r'{go_re}')"
    rx = go_pattern(go_re)
    return Rule(rule, message or f"failed rule: {rule}", lambda s: rx.search(s) is not None)


def _qualified_name(message: str) -> Meta:
    # format.qualifiedName() is apimachinery's IsQualifiedName.
    return cel(
        Rule("!format.qualifiedName().validate(self).hasValue()", message, qualified_name_ok)
    )


# --------------------------------------------------------------------------- integrations
# +kubebuilder:validation:Enum on KueueIntegration (JaxJob is listed in the enum but has no
# entry in the operator's framework conversion, see FRAMEWORKS).
KueueIntegration = Literal[
    "BatchJob",
    "RayJob",
    "RayCluster",
    "RayService",
    "JobSet",
    "MPIJob",
    "PaddleJob",
    "PyTorchJob",
    "TFJob",
    "TrainJob",
    "XGBoostJob",
    "JaxJob",
    "AppWrapper",
    "Pod",
    "Deployment",
    "StatefulSet",
    "LeaderWorkerSet",
    "SparkApplication",
]

# pkg/configmap/configmap.go buildFrameworkList: the operator's name -> Kueue's framework
# name. A name missing here (JaxJob) is written as "" (Go's zero value of a map miss).
FRAMEWORKS: Mapping[str, str] = {
    "BatchJob": "batch/job",
    "MPIJob": "kubeflow.org/mpijob",
    "RayJob": "ray.io/rayjob",
    "RayCluster": "ray.io/raycluster",
    "RayService": "ray.io/rayservice",
    "JobSet": "jobset.x-k8s.io/jobset",
    "PaddleJob": "kubeflow.org/paddlejob",
    "PyTorchJob": "kubeflow.org/pytorchjob",
    "TFJob": "kubeflow.org/tfjob",
    "XGBoostJob": "kubeflow.org/xgboostjob",
    "AppWrapper": "workload.codeflare.dev/appwrapper",
    "Pod": "pod",
    "Deployment": "deployment",
    "LeaderWorkerSet": "leaderworkerset.x-k8s.io/leaderworkerset",
    "StatefulSet": "statefulset",
    "TrainJob": "trainer.kubeflow.org/trainjob",
    "SparkApplication": "sparkoperator.k8s.io/sparkapplication",
}

FRAMEWORKS_UNIQUE = cel(
    Rule(
        "self.all(x, self.exists_one(y, x == y))",
        "each item in frameworks must be unique",
        lambda xs: all(xs.count(x) == 1 for x in xs),
    )
)

_GROUP_RULE = cel(_matches(_SUBDOMAIN_RE))
_LABEL_RULE = cel(_matches(_LABEL_RE))


class ExternalFramework(Object, kw_only=True):
    """A GroupVersionResource managed for Kueue by an external controller."""

    group: Annotated[str, Meta(min_length=1, max_length=253), _GROUP_RULE]
    resource: Annotated[str, Meta(min_length=1, max_length=63), _LABEL_RULE]
    version: Annotated[str, Meta(min_length=1, max_length=63), _LABEL_RULE]


_LABEL_KEY_RULE = cel(_matches(_LABEL_KEY_RE))


class LabelKeys(Object, kw_only=True):
    key: Annotated[str, Meta(min_length=1, max_length=317), _LABEL_KEY_RULE]


class Integrations(Object, kw_only=True):
    frameworks: Annotated[
        list[KueueIntegration], Meta(min_length=1, max_length=18), LIST_SET, FRAMEWORKS_UNIQUE
    ]
    external_frameworks: (
        Annotated[list[ExternalFramework], Meta(max_length=32), list_map("group")] | None
    ) = None
    label_keys_to_copy: Annotated[list[LabelKeys], Meta(max_length=64), list_map("key")] | None = (
        None
    )


# --------------------------------------------------------------------------- workloads
class WorkloadManagement(Object, kw_only=True):
    label_policy: Literal["", "QueueName", "None"]


class RequeuingStrategy(Object, kw_only=True):
    time_reference: Literal["Eviction", "Creation"] | None = None
    retry_limit: Annotated[int, Meta(ge=1, le=200)] | None = None
    backoff_base_seconds: Annotated[int, Meta(ge=30, le=3600)] | None = None
    backoff_max_seconds: Annotated[int, Meta(ge=30, le=7200)] | None = None


_BACKOFF_RULE_TEXT = (
    "self.backoffBaseSeconds == 0 || self.backoffMaxSeconds == 0 || "
    "self.backoffBaseSeconds <= self.backoffMaxSeconds"
)
BACKOFF_MESSAGE = "backoffBaseSeconds must be less than or equal to backoffMaxSeconds"
# The comparison when both are set; an absent field is a CEL evaluation error,
# which ``validate_kueue`` reports (see ``_absent_backoff``).
REQUEUING_RULES = cel(
    Rule(
        _BACKOFF_RULE_TEXT,
        BACKOFF_MESSAGE,
        lambda s: (
            s.backoff_base_seconds is None
            or s.backoff_max_seconds is None
            or s.backoff_base_seconds <= s.backoff_max_seconds
        ),
    )
)
_MIN_PROPERTIES_1 = Meta(extra_json_schema={"minProperties": 1})


class ByWorkload(Object, kw_only=True):
    admission: Literal["", "Parallel", "Sequential"]
    timeout_seconds: Annotated[int, Meta(ge=30, le=86400)] | None = None
    recovery_timeout_seconds: Annotated[int, Meta(ge=0, le=86400)] | None = None
    # Markers outside the union: msgspec drops a struct's schema extras inside one.
    requeuing_strategy: Annotated[RequeuingStrategy | None, REQUEUING_RULES, _MIN_PROPERTIES_1] = (
        None
    )


GANG_SCHEDULING_RULES = cel(
    Rule(
        "has(self.policy) && self.policy == 'ByWorkload' ?  has(self.byWorkload) : "
        "!has(self.byWorkload)",
        "byWorkload is required when policy is byWorkload, and forbidden otherwise",
        lambda g: (g.by_workload is not None) == (g.policy == "ByWorkload"),
    )
)


class GangScheduling(Object, kw_only=True):
    policy: Literal["ByWorkload", "ByWorkloadDefaults", "None", ""]
    by_workload: ByWorkload | None = None


class Preemption(Object, kw_only=True):
    preemption_policy: Literal["", "Classical", "FairSharing"]


# --------------------------------------------------------------------------- admission fair sharing
_RESOURCE_NAME_RULE = _qualified_name("must be a qualified name (e.g., 'nvidia.com/gpu' or 'cpu')")
_WEIGHT_RULE = cel(
    _matches(_WEIGHT_RE, "must be a non-negative number (e.g., '1.0', '0.5', '.5', '+0.5', '1e-3')")
)


class ResourceWeight(Object, kw_only=True):
    name: Annotated[str, Meta(min_length=1, max_length=317), _RESOURCE_NAME_RULE]
    weight: Annotated[str, Meta(min_length=1, max_length=32), _WEIGHT_RULE]


class AdmissionFairSharingCustom(Object, kw_only=True):
    usage_half_life_time_seconds: Annotated[int, Meta(ge=1, le=31536000)]
    usage_sampling_interval_seconds: Annotated[int, Meta(ge=1, le=3600)] | None = None
    resource_weights: (
        Annotated[list[ResourceWeight], Meta(min_length=1, max_length=16), list_map("name")] | None
    ) = None


AFS_RULES = cel(
    Rule(
        "has(self.configuration) && self.configuration == 'Custom' ? has(self.custom) : "
        "!has(self.custom)",
        "custom is required when configuration is Custom, and forbidden otherwise",
        lambda a: (a.custom is not None) == (a.configuration == "Custom"),
    )
)


class AdmissionFairSharing(Object, kw_only=True):
    configuration: Literal["Default", "Custom"]
    custom: AdmissionFairSharingCustom | None = None


# --------------------------------------------------------------------------- DRA resources
class CELDeviceSelector(Object, kw_only=True):
    expression: Annotated[str, Meta(min_length=1, max_length=1024)]


class DeviceSelector(Object, kw_only=True):
    type: Literal["CEL"]
    cel: CELDeviceSelector | None = None


DEVICE_SELECTOR_RULES = cel(
    Rule(
        "has(self.type) && self.type == 'CEL' ? has(self.cel) : !has(self.cel)",
        "cel is required when type is CEL, and forbidden otherwise",
        lambda s: (s.cel is not None) == (s.type == "CEL"),
    )
)


_COUNTER_NAME_RULE = cel(
    Rule(
        "!format.dns1123Label().validate(self).hasValue()",
        "must be a valid DNS label consisting of lowercase alphanumeric characters and "
        "hyphens, of at most 63 characters in length, must start and end with an "
        "alphanumeric character (e.g., 'memory')",
        dns1123_label_ok,
    )
)
_DRIVER_RULE = cel(
    Rule(
        "!format.dns1123Subdomain().validate(self).hasValue()",
        "must be a valid DNS subdomain consisting of lowercase alphanumeric characters, "
        "hyphens and periods, of at most 253 characters in length, each period separated "
        "segment must start and end with an alphanumeric character (e.g., "
        "'gpu.nvidia.com')",
        lambda s: not is_dns1123_subdomain(s),
    )
)


class DeviceClassCounterSource(Object, kw_only=True):
    name: Annotated[str, Meta(min_length=1, max_length=63), _COUNTER_NAME_RULE]
    driver: Annotated[str, Meta(min_length=1, max_length=253), _DRIVER_RULE]
    device_selector: Annotated[DeviceSelector, DEVICE_SELECTOR_RULES]


SOURCE_RULES = cel(
    Rule(
        "has(self.type) && self.type == 'Counter' ? has(self.counter) : !has(self.counter)",
        "counter is required when type is Counter, and forbidden otherwise",
        lambda s: (s.counter is not None) == (s.type == "Counter"),
    )
)


class DeviceClassSourceConfig(Object, kw_only=True):
    type: Literal["Counter"]
    counter: DeviceClassCounterSource | None = None


# Same CEL text as ResourceWeight.name (kuota keys rules by their text, so the
# message reported is one of the two; the check is the same).
DeviceClassName = Annotated[str, Meta(min_length=1, max_length=253), _RESOURCE_NAME_RULE]


class DeviceClassMapping(Object, kw_only=True):
    name: DeviceClassName
    device_class_names: Annotated[list[DeviceClassName], Meta(min_length=1, max_length=8), LIST_SET]
    sources: (
        Annotated[
            list[Annotated[DeviceClassSourceConfig, SOURCE_RULES]],
            Meta(min_length=1, max_length=1),
            list_map("type"),
        ]
        | None
    ) = None


MAPPINGS_RULES = cel(
    Rule(
        "self.all(m1, m1.deviceClassNames.all(d, self.all(m2, m2 == m1 || "
        "!m2.deviceClassNames.exists(e, e == d))))",
        "each DeviceClass name can only appear in one mapping",
        lambda ms: all(
            m2 == m1 or d not in m2.device_class_names
            for m1 in ms
            for d in m1.device_class_names
            for m2 in ms
        ),
    )
)


class Resources(Object, kw_only=True):
    device_class_mappings: (
        Annotated[
            list[DeviceClassMapping],
            Meta(min_length=1, max_length=16),
            list_map("name"),
            MAPPINGS_RULES,
        ]
        | None
    ) = None


class MultiKueue(Object, kw_only=True):
    external_frameworks: (
        Annotated[list[ExternalFramework], Meta(min_length=1, max_length=32), list_map("group")]
        | None
    ) = None


# --------------------------------------------------------------------------- the resource
class KueueConfiguration(Object, kw_only=True):
    integrations: Integrations
    workload_management: WorkloadManagement | None = None
    gang_scheduling: Annotated[GangScheduling | None, GANG_SCHEDULING_RULES] = None
    preemption: Preemption | None = None
    resources: Annotated[Resources | None, _MIN_PROPERTIES_1] = None
    multi_kueue: MultiKueue | None = None
    admission_fair_sharing: Annotated[AdmissionFairSharing | None, AFS_RULES] = None


LogLevel = Literal["", "Normal", "Debug", "Trace", "TraceAll"]


class KueueOperandSpec(Object, kw_only=True):
    """openshift/api ``operatorv1.OperatorSpec`` (inline) and ``config``."""

    management_state: Annotated[str, pattern("^(Managed|Unmanaged|Force|Removed)$")] | None = None
    log_level: Annotated[LogLevel, crd_default("Normal")] = "Normal"
    operator_log_level: Annotated[LogLevel, crd_default("Normal")] = "Normal"
    unsupported_config_overrides: Annotated[dict[str, Any], preserve_unknown()] | None = None
    observed_config: Annotated[dict[str, Any], preserve_unknown()] | None = None
    config: KueueConfiguration


class Kueue(Object, kw_only=True):
    api_version: str = API_VERSION
    kind: str = KIND
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: KueueOperandSpec
    # operatorv1.OperatorStatus: written by the operator, carried through unread.
    status: Annotated[dict[str, Any], preserve_unknown()] | None = None


# +kubebuilder:validation:XValidation on the Kueue type.
ROOT_RULES = cel(
    Rule(
        "self.metadata.name == 'cluster'",
        "Kueue is a singleton, .metadata.name must be 'cluster'",
        lambda k: k.metadata.name == SINGLETON_NAME,
    )
)


def is_openshift_kueue(obj: Any) -> bool:
    """Whether ``obj`` (a decoded object or a raw mapping) is OpenShift's Kueue resource."""
    if isinstance(obj, Kueue):
        return True
    return (
        isinstance(obj, Mapping)
        and obj.get("apiVersion") == API_VERSION
        and obj.get("kind") == KIND
    )
