"""Kueue's feature gates: defaults, stages and dependencies.

Apart from the Configuration module so that reading manifests, which only
needs the defaults, does not load the Configuration machinery.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "FEATURE_GATE_DEFAULTS",
    "FEATURE_GATE_DEPENDENCIES",
    "FEATURE_GATE_STAGES",
    "GATES",
    "Gate",
]


@dataclass(frozen=True, slots=True)
class Gate:
    default: bool
    stage: Literal["Alpha", "Beta", "GA", "Deprecated"]
    locked: bool = False


# pkg/features/kube_features.go at Kueue ff69552e: the last VersionedSpec of each gate
# (Kueue's binary emulates a Kubernetes version above every Kueue version, so the
# newest spec is the one in force).
GATES: dict[str, Gate] = {
    "PartialAdmission": Gate(True, "Beta"),
    "FlavorFungibility": Gate(True, "Beta"),
    "VisibilityOnDemand": Gate(True, "Beta"),
    "DisableWaitForPodsReady": Gate(False, "Alpha"),
    "PrioritySortingWithinCohort": Gate(True, "Beta"),
    "FairSharingPreemptWithinNominal": Gate(True, "Beta"),
    "FairSharingPrioritizeNonBorrowing": Gate(True, "Beta"),
    "MultiKueue": Gate(True, "Beta"),
    "TopologyAwareScheduling": Gate(True, "Beta"),
    "LocalQueueMetrics": Gate(True, "Beta"),
    "TASProfileMixed": Gate(True, "Beta"),
    "AdmissionFairSharing": Gate(True, "Beta"),
    "TASFailedNodeReplacement": Gate(True, "Beta"),
    "ElasticJobsViaWorkloadSlices": Gate(True, "Beta"),
    "ElasticJobsViaWorkloadSlicesWithTAS": Gate(False, "Alpha"),
    "TASFailedNodeReplacementFailFast": Gate(True, "Beta"),
    "TASReplaceNodeOnPodTermination": Gate(True, "Beta"),
    "SkipReassignmentForPodOwnedWorkloads": Gate(True, "Beta"),
    "TASReplaceNodeDueToNotReadyOverFixedTime": Gate(False, "Deprecated"),
    "ManagedJobsNamespaceSelectorAlwaysRespected": Gate(True, "GA", locked=True),
    "TASBalancedPlacement": Gate(False, "Alpha"),
    "TASAssignmentsEncodingByHostnamePrefix": Gate(True, "Beta"),
    "KueueDRAIntegration": Gate(True, "Beta"),
    "KueueDRAIntegrationExtendedResource": Gate(True, "Beta"),
    "KueueDRARejectWorkloadsWhenDRADisabled": Gate(True, "Beta"),
    "KueueDRAIntegrationPartitionableDevices": Gate(True, "Beta"),
    "KueueDRAIntegrationConsumableCapacity": Gate(False, "Alpha"),
    "MultiKueueAdaptersForCustomJobs": Gate(True, "Beta"),
    "WorkloadRequestUseMergePatch": Gate(False, "Alpha"),
    "MultiKueueKubeConfigPathValidation": Gate(True, "Beta"),
    "ReclaimablePods": Gate(True, "Beta"),
    "MultiKueueClusterProfile": Gate(False, "Alpha"),
    "FailureRecoveryPolicy": Gate(False, "Alpha"),
    "TLSOptions": Gate(True, "GA", locked=True),
    "RemoveFinalizersWithStrictPatch": Gate(True, "Beta"),
    "TASReplaceNodeOnNodeTaints": Gate(True, "Beta"),
    "AssignQueueLabelsForPods": Gate(True, "Beta"),
    "TASMultiLayerTopology": Gate(True, "Beta"),
    "SchedulingEquivalenceHashing": Gate(True, "Beta"),
    "CustomMetricLabels": Gate(False, "Alpha"),
    "SparkApplicationIntegration": Gate(False, "Alpha"),
    "MultiKueueOrchestratedPreemption": Gate(False, "Alpha"),
    "PriorityBoost": Gate(False, "Alpha"),
    "AdmissionGatedBy": Gate(True, "Beta"),
    "ShortWorkloadNames": Gate(False, "Alpha"),
    "FastQuotaReleaseInPodIntegration": Gate(False, "Alpha"),
    "RejectUpdatesToCQWithInvalidOnFlavors": Gate(False, "Alpha"),
    "FinishOrphanedWorkloads": Gate(True, "Beta"),
    "MultiKueueIncrementalDispatcherConfig": Gate(True, "Beta"),
    "MultiKueueIncrementalDispatcherRespectConfigOrder": Gate(True, "Beta"),
    "ConcurrentAdmission": Gate(False, "Alpha"),
    "QuotaCheckStrategy": Gate(True, "Beta"),
    "MetricForWorkloadCreationLatency": Gate(True, "Beta"),
    "TASRespectNodeAffinityPreferred": Gate(False, "Alpha"),
    "MultiKueueManagerQuotaAutomation": Gate(False, "Alpha"),
    "WorkloadIdentifierAnnotations": Gate(True, "Beta"),
    "WorkloadPriorityClassDefaulting": Gate(True, "Beta"),
    "MetricsForCohorts": Gate(True, "Beta"),
    "CleanupProvisioningRequestsOnEviction": Gate(True, "Beta"),
    "TASHandleOverlappingFlavors": Gate(True, "Beta"),
    "UnadmittedWorkloadsObservability": Gate(True, "Beta"),
    "TASRecomputeAssignmentWithinSchedulingCycle": Gate(True, "Beta"),
    "UnadmittedWorkloadsExplicitStatus": Gate(False, "Beta"),
    "DeferRayServiceFinalizationForRedisCleanup": Gate(True, "Beta"),
    "TASCacheNodeMatchResults": Gate(True, "Beta"),
    "TASCachingRemainingResources": Gate(True, "Beta"),
    "TASCacheTopologyTree": Gate(True, "Beta"),
    "SchedulerLibraryIntegration": Gate(False, "Alpha"),
    "VectorizedResourceRequests": Gate(True, "Beta"),
    "WorkloadValidateResourcesAreNonNegative": Gate(True, "Beta"),
    "TASValidateWorkloadSliceSize": Gate(True, "Beta"),
    "WorkloadValidationForPodSetMetadata": Gate(True, "Beta"),
    "PrioritizePreemptorWorkloads": Gate(False, "Alpha"),
    "LWSImmutableGroupSize": Gate(True, "Beta"),
    "FlavorFungibilityPreserveScanProgress": Gate(True, "Beta"),
    "SkipAncestorCheckForDeletedWorkloads": Gate(True, "Beta"),
    "MultiKueueRemoteSpecSync": Gate(True, "Beta"),
    "RecomputeAssignmentUponPreemptionTargetsOverlap": Gate(True, "Beta"),
    "PodIntegrationValidateGroupOwner": Gate(True, "Beta"),
    "ValidateRayAndSparkJobUpdates": Gate(True, "Beta"),
}

# Read-only by convention: KueueConfig.feature_gates and validate_feature_gates copy it.
FEATURE_GATE_DEFAULTS: dict[str, bool] = {n: g.default for n, g in GATES.items()}
FEATURE_GATE_STAGES: dict[str, str] = {n: g.stage for n, g in GATES.items()}

# defaultFeatureGateDependencies: a gate may be on only while all of these are on.
FEATURE_GATE_DEPENDENCIES: Mapping[str, tuple[str, ...]] = {
    "TASFailedNodeReplacement": ("TopologyAwareScheduling",),
    "TASFailedNodeReplacementFailFast": ("TopologyAwareScheduling", "TASFailedNodeReplacement"),
    "TASReplaceNodeOnPodTermination": ("TopologyAwareScheduling", "TASFailedNodeReplacement"),
    "TASReplaceNodeDueToNotReadyOverFixedTime": (
        "TopologyAwareScheduling",
        "TASFailedNodeReplacement",
    ),
    "TASBalancedPlacement": ("TopologyAwareScheduling",),
    "TASReplaceNodeOnNodeTaints": ("TopologyAwareScheduling",),
    "TASMultiLayerTopology": ("TopologyAwareScheduling",),
    "TASRespectNodeAffinityPreferred": ("TopologyAwareScheduling",),
    "UnadmittedWorkloadsExplicitStatus": ("UnadmittedWorkloadsObservability",),
    "TASHandleOverlappingFlavors": ("TopologyAwareScheduling",),
    "TASProfileMixed": ("TopologyAwareScheduling",),
    "TASRecomputeAssignmentWithinSchedulingCycle": ("TopologyAwareScheduling",),
    "ElasticJobsViaWorkloadSlicesWithTAS": (
        "ElasticJobsViaWorkloadSlices",
        "TopologyAwareScheduling",
    ),
    "KueueDRAIntegrationExtendedResource": ("KueueDRAIntegration",),
    "KueueDRAIntegrationPartitionableDevices": ("KueueDRAIntegration",),
    "KueueDRAIntegrationConsumableCapacity": ("KueueDRAIntegration",),
    "FlavorFungibilityPreserveScanProgress": ("FlavorFungibility",),
}
