"""The garbage collector's pace for a kuota process.

A run keeps hundreds of thousands of API structs alive and makes few
reference cycles. At CPython's default pace (a young collection every 700
allocations, a full one every 100 of those) the collector rescans the live
objects over and over and frees almost nothing: 5 of 13 s of CPU in the
baseline bench. Collecting a hundred times less often frees the same cycles,
later, at no measurable cost.
"""

from __future__ import annotations

import gc

THRESHOLDS = (100_000, 50, 100)


def tune() -> None:
    """Set the pace for this process (idempotent)."""
    gc.set_threshold(*THRESHOLDS)
