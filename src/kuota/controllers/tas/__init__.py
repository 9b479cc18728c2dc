"""Kueue's TAS controllers (pkg/controller/tas): what the scheduler reads of
the cluster's nodes and pods, and the topology ungater."""
