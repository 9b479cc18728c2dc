"""The job integrations kuota simulates: one line each, the package under
``kuota.controllers.jobs`` that exports its ``INTEGRATION``.

The order is the wiring order: the control plane adds their controllers and
webhooks in it (the pod integration before those built on it)."""

from __future__ import annotations

from importlib import import_module
from typing import Final

from kuota.controllers.integration import Integration

_PACKAGES: Final = (
    "batchjob",
    "pod",
    "deployment",
    "statefulset",
    "leaderworkerset",
    "jobset",
    "pytorchjob",
    "tfjob",
    "paddlejob",
    "xgboostjob",
    "jaxjob",
    "mpijob",
    "raycluster",
    "rayjob",
    "rayservice",
    "appwrapper",
    "trainjob",
    "sparkapplication",
)


def _load(package: str) -> Integration:
    integration = import_module(f"{__package__}.{package}").INTEGRATION
    assert isinstance(integration, Integration), package
    return integration


INTEGRATIONS: Final[tuple[Integration, ...]] = tuple(_load(p) for p in _PACKAGES)
