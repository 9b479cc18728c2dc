"""The keys of what a run keeps in its state besides the objects (the store's
meta entries): named here, apart from the control plane, so that readers of a
kept state (``kuota get``, ``kuota node``) need not import the control plane."""

from __future__ import annotations

from typing import Final

CLOCK_META: Final = "clock"  # the run's time (virtual or real), persisted so a restart resumes it
CONFIG_META: Final = "config"  # the Kueue Configuration the run used, for get/describe
