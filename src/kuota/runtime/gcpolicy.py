"""The garbage collector's pace for a kuota process.

A run keeps hundreds of thousands of API structs alive and makes few
reference cycles. At CPython's default pace (a young collection every 700
allocations, a full one every 100 of those) the collector rescans the live
objects over and over and frees almost nothing: 5 of 13 s of CPU in the
baseline bench. Collecting a hundred times less often frees the same cycles,
later, at no measurable cost.

A replay process (``kuota bench``, ``kuota simulate`` and their workers) runs
one bounded world and exits, and makes no cyclic garbage at all: a whole
large-scale bench world or openb replay frees about 1,400 objects by
collection, all from start-up. Yet every young collection walks the objects
made since the last one, and nearly all of them live on (0.6 s of the
large-scale world's 13 s). Such a process collects only once its count of
container objects made passes ``REPLAY_YOUNG``, which a shipped world never
reaches; a replay that did make cycles still has them freed.
"""

from __future__ import annotations

import gc

THRESHOLDS = (100_000, 50, 100)
REPLAY_YOUNG = 50_000_000


def tune(*, replay: bool = False) -> None:
    """Set the pace for this process (idempotent); ``replay``: a process
    that runs bounded replays and exits."""
    gc.set_threshold(REPLAY_YOUNG if replay else THRESHOLDS[0], *THRESHOLDS[1:])
