"""Kill a writing process at random points: every acknowledged write survives."""

from __future__ import annotations

import contextlib
import random
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from crash_writer import run
from store_testlib import FakeClock, job, state_of, uid_seq, wire

from kuota.store import MemoryStore, open_store
from kuota.store.events import revision
from kuota.store.resources import JOB, WORKLOAD

WRITER = Path(__file__).with_name("crash_writer.py")


class _Enough(Exception):
    pass


def crash(
    state: Path, seed: int, snapshot_every: int, acks_before_kill: int
) -> list[tuple[int, int]]:
    """Run the writer, SIGKILL it after some acknowledgements; every ACK it printed."""
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), str(state), str(seed), str(snapshot_every)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    acks: list[tuple[int, int]] = []
    for line in proc.stdout:
        _, i, rv = line.split()
        acks.append((int(i), int(rv)))
        if len(acks) >= acks_before_kill:
            break
    proc.send_signal(signal.SIGKILL)
    out, err = proc.communicate()
    assert proc.returncode == -signal.SIGKILL, err.decode()
    for line in out.splitlines():  # printed before it died: acknowledged too
        _, i, rv = line.split()
        acks.append((int(i), int(rv)))
    return acks


def model_up_to(seed: int, rv: int, step: int) -> tuple[dict[Any, bytes], dict[int, int], int]:
    """Replay the writer's steps in memory: the objects at resourceVersion ``rv``,
    the rv after each step, and the uid counter at ``rv``."""
    model = MemoryStore(FakeClock(), history=10**7)
    watch = model.watch(None, 0)
    rv_after: dict[int, int] = {-1: 0}

    def ack(i: int, at: int) -> None:
        rv_after[i] = at
        if i > step and at >= rv:
            raise _Enough

    with contextlib.suppress(_Enough):
        run(model, seed, step + 10_000, ack)
    objects: dict[Any, bytes] = {}
    seq = 0
    for ev in watch.poll():
        if revision(ev.resource_version) > rv:  # (the memory store's own reading)
            break
        m = ev.object.metadata
        key = (
            JOB if ev.object.kind == "Job" else WORKLOAD,
            m.namespace,
            m.name,
        )
        if ev.type == "DELETED":
            del objects[key]
        else:
            objects[key] = wire(ev.object)
        if ev.type == "ADDED":
            seq = max(seq, uid_seq(m.uid))
    return objects, rv_after, seq


def test_crash_keeps_every_acknowledged_write(tmp_path: Path) -> None:
    rng = random.Random(6)
    for it in range(6):
        state = tmp_path / f"state-{it}"
        seed = rng.randrange(10**6)
        snapshot_every = rng.choice([7, 40, 50_000])
        acks = crash(state, seed, snapshot_every, rng.randint(1, 300))
        last_step, last_rv = acks[-1]

        with open_store(state, FakeClock()) as recovered:
            got = state_of(recovered)
        with open_store(state, FakeClock()) as again:
            assert state_of(again) == got  # reopening is stable (now from a snapshot)
            probe_uid = again.create(job("probe", "team-z")).metadata.uid
        objects, rv, meta = got
        step = meta.get("step", -1)

        assert rv >= last_rv, "an acknowledged write was lost"
        assert step >= last_step, "an acknowledged meta write was lost"
        expected, rv_after, seq = model_up_to(seed, rv, step)
        # Step ``step`` is complete on disk; the next one at most in part.
        assert rv_after[step] <= rv <= rv_after.get(step + 1, rv)
        assert objects == expected
        assert uid_seq(probe_uid) == seq + 1
