"""The embedded cluster's cluster-autoscaler (ProvisioningRequests, node groups)."""

from kuota.cluster.autoscaler.cluster_autoscaler import ClusterAutoscaler

__all__ = ["ClusterAutoscaler"]
