"""Kueue's API group ``kueue.x-k8s.io``: one internal model (v1beta2-shaped) in
``types``, the v1beta1 wire shapes in ``v1beta1``, Kueue's webhook rules in
``webhooks``."""
