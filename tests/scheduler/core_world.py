"""An AdmissionCore built from manifests, for tests that drive the core
directly: a Configuration (Kueue's defaults plus what a test sets) and YAML
documents added in order, each checked to decode."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kuota.api.decode import decode_yaml
from kuota.api.kueue.config import load_config
from kuota.scheduler.admission.admission_core import AdmissionCore

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def make_core(config: dict[str, Any] | None = None, now: datetime = T0) -> AdmissionCore:
    """A core at ``now`` with Kueue's Configuration and ``config``'s fields."""
    raw: dict[str, Any] = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        **(config or {}),
    }
    cfg, errs = load_config(raw)
    assert cfg is not None, errs
    return AdmissionCore(cfg, now)


def add(core: AdmissionCore, text: str) -> None:
    """Decode ``text`` (YAML documents) and add each object to ``core``."""
    for d in decode_yaml(text):
        assert d.ok, [str(e) for e in d.errors]
        core.add(d.obj)
