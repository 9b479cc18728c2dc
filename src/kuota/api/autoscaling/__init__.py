"""``autoscaling.x-k8s.io``: cluster-autoscaler's ProvisioningRequest."""
