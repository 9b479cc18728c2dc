"""OpenShift's API groups: the Kueue operator's ``Kueue`` resource
(``kueue.openshift.io/v1``: ``kueue_operator``, and what the operator makes of it in
``operator_config``) and the cluster's ``Scheduler`` configuration
(``config.openshift.io/v1``: ``scheduler_config``).

This package exports the public names of ``kueue_operator`` and ``operator_config``.
"""

from __future__ import annotations

from kuota.api.openshift.kueue_operator import (
    API_VERSION,
    DEFAULT_LOCAL_QUEUE,
    FRAMEWORKS,
    GROUP,
    KIND,
    MANAGED_NAMESPACE_LABEL,
    OPERATOR_NAMESPACE,
    ROOT_RULES,
    SINGLETON_NAME,
    AdmissionFairSharing,
    AdmissionFairSharingCustom,
    ByWorkload,
    DeviceClassMapping,
    DeviceClassSourceConfig,
    ExternalFramework,
    GangScheduling,
    Integrations,
    Kueue,
    KueueConfiguration,
    KueueIntegration,
    KueueOperandSpec,
    LabelKeys,
    MultiKueue,
    Preemption,
    RequeuingStrategy,
    Resources,
    ResourceWeight,
    WorkloadManagement,
    is_openshift_kueue,
)
from kuota.api.openshift.operator_config import (
    OpenShiftSettings,
    openshift_settings,
    operator_configuration,
    read_openshift_config,
    to_kueue_config,
    validate_kueue,
)

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
    "OpenShiftSettings",
    "Preemption",
    "RequeuingStrategy",
    "ResourceWeight",
    "Resources",
    "WorkloadManagement",
    "is_openshift_kueue",
    "openshift_settings",
    "operator_configuration",
    "read_openshift_config",
    "to_kueue_config",
    "validate_kueue",
]
