"""Cluster mode: ``kuota controller``, Kueue's controllers and the admission
core over a real Kubernetes API server (the kube store), with leader
election, health probes, metrics and JSON logs. The controllers are the
embedded control plane's own; only the store behind them differs."""
