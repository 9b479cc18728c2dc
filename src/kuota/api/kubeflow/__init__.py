"""Kubeflow's training jobs (``kubeflow.org/v1``), the kinds Kueue runs
distributed training as."""
