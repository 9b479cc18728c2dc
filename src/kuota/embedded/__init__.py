"""The embedded control plane: store, runtime, Kueue's controllers, the job
integrations and a simulated cluster, in one process."""

from __future__ import annotations

from typing import Any

__all__ = ["ControlPlane"]


def __getattr__(name: str) -> Any:
    # imported on first use: the package's light modules (state_meta) must not
    # pull in the whole control plane
    if name == "ControlPlane":
        from kuota.embedded.controlplane import ControlPlane

        return ControlPlane
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
