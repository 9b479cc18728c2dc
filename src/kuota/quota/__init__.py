"""Quota: what workloads request and how ClusterQueues and cohorts account for it."""
