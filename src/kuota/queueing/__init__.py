"""Pending workloads per ClusterQueue: ordering, parking, wake-ups, backoff."""
