"""``kuota run`` that kills itself with SIGKILL at its Nth clock tick, for the
crash test: the clock has just moved to a new instant and nothing of that
instant has happened yet (timers due, arrivals, cycles), the point where a
resumed run is most likely to take another turn. (The clock's record is part
of the instant's group commit: the resumed run starts at the instant before.)

    python crash_run.py WORLD STATE N
"""

from __future__ import annotations

import os
import signal
import sys

from kuota.cli.main import main as kuota_main
from kuota.embedded.controlplane import ControlPlane


def main() -> None:
    world, state, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    save_clock = ControlPlane.save_clock
    ticks = [0]

    def save_and_maybe_die(self: ControlPlane) -> None:
        save_clock(self)
        ticks[0] += 1
        if ticks[0] >= n:
            os.kill(os.getpid(), signal.SIGKILL)

    ControlPlane.save_clock = save_and_maybe_die  # type: ignore[method-assign]
    sys.argv = ["kuota", "run", world, "--state", state, "--no-live"]
    kuota_main()


if __name__ == "__main__":
    main()
