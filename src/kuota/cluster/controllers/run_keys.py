"""kuota's annotations that tell the simulated kubelet how a pod runs: named
apart from the kubelet so that reading a world (``kuota validate``) need not
import the kubelet and the cluster under it."""

from __future__ import annotations

from typing import Final

DURATION_ANNOTATION: Final = "kuota.dev/duration"
FAIL_ANNOTATION: Final = "kuota.dev/fail"
