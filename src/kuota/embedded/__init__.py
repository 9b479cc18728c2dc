"""The embedded control plane: store, runtime, Kueue's controllers, the job
integrations and a simulated cluster, in one process."""

from kuota.embedded.controlplane import ControlPlane

__all__ = ["ControlPlane"]
