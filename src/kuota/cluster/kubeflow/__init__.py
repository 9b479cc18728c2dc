"""Kubeflow's training operator (v1) in the embedded cluster: its defaulting
and validating webhooks and the controller that runs a training job's pods."""
