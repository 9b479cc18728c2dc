"""The embedded control plane: store, runtime, Kueue's controllers, the job
integrations and a simulated cluster, in one process."""

from __future__ import annotations

from kuota.lazy_exports import lazy_getattr

__all__ = ["ControlPlane"]

# Imported on first use: the package's light modules (state_meta) must not
# pull in the whole control plane.
__getattr__ = lazy_getattr(__name__, {"ControlPlane": "kuota.embedded.controlplane"})
