"""Topology-aware scheduling in the pure core (Kueue pkg/cache/scheduler/tas_*)."""
