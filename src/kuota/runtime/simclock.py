"""The simulated cluster's clock, published for a Kueue in another process.

``kuota serve`` runs its world on a clock of its own (the world's start,
sped up by ``--speed``); a ``kuota controller`` run against it must read
the same time, or its timestamps (eviction times that order the queues,
backoff deadlines) would not be the cluster's. A real cluster's nodes
share the wall clock; this file is that for a simulated one:
``STATE/sim-clock.json`` maps a wall-clock instant to the simulated one,
with the speed. ``paced``: the cluster steps its clock on the controller's
acknowledgements (runtime/pacing.py); the controller's clock is then a
``PacedClock`` that the cluster's clock Lease holds at each instant."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timedelta
from pathlib import Path

from kuota.runtime.clock import RealClock
from kuota.runtime.pacing import PacedClock

FILE = "sim-clock.json"


def write_sim_clock(state_dir: Path, now: datetime, speed: float, paced: bool = False) -> Path:
    path = state_dir / FILE
    tmp = path.with_suffix(".tmp")
    data = {"at": now.isoformat(), "wall": time.time(), "speed": speed, "paced": paced}
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)
    return path


class SimClockError(ValueError):
    """The file is missing or not a simulated clock."""


def read_sim_clock(path: Path) -> RealClock | PacedClock:
    """A real clock reading what the ``kuota serve`` that wrote ``path`` reads."""
    try:
        data = json.loads(path.read_text())
        at = datetime.fromisoformat(data["at"])
        wall, speed = float(data["wall"]), float(data["speed"])
        paced = bool(data.get("paced", False))
    except OSError as err:
        raise SimClockError(f"{path}: {err.strerror or err}") from None
    except (ValueError, KeyError, TypeError) as err:
        raise SimClockError(f"{path}: not a kuota serve clock ({err})") from None
    if speed <= 0:
        raise SimClockError(f"{path}: speed: must be positive, got {speed}")
    if paced:
        # Held where the cluster last was: a paced cluster waits for its
        # controller, so wall time since says nothing of its instant (a clock
        # run on from it would stamp the first decisions ahead of the world).
        return PacedClock(at, speed, held=True)
    return RealClock(at + timedelta(seconds=(time.time() - wall) * speed), speed)
