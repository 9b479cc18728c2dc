"""A deterministic stream of writes, for the crash test.

Run as ``python crash_writer.py STATE_DIR SEED``: opens a journaled store and
writes until killed, printing ``ACK <step> <rv>`` after each acknowledged step.
The test runs the same steps on a plain memory store to know what each
resourceVersion must hold.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path

from store_testlib import JOB, WORKLOAD, FakeClock, job, workload

from kuota.store import MemoryStore, clone, open_store

Ack = Callable[[int, int], None]


def step(store: MemoryStore, rng: random.Random, i: int) -> None:
    jobs = store.list(JOB).items
    r = rng.random()
    if r < 0.3 or len(jobs) < 3:
        owners = [rng.choice(jobs)] if jobs and rng.random() < 0.3 else None
        created = store.create(
            job(
                "" if rng.random() < 0.2 else f"job-{i}-{rng.randrange(10**9)}",
                rng.choice(["team-a", "team-b"]),
                generate_name="gen-",
                labels={"step": str(i)},
                finalizers=["kuota.dev/hold"] if rng.random() < 0.2 else None,
                owners=owners,
            )
        )
        if rng.random() < 0.3:
            store.create(
                workload(
                    f"wl-{created.metadata.name}", created.metadata.namespace, owners=[created]
                )
            )
        return
    target = rng.choice(jobs)
    ns, name = target.metadata.namespace, target.metadata.name
    if r < 0.45:
        changed = clone(target)
        changed.spec.parallelism = rng.randint(1, 9)
        changed.metadata.labels = {"step": str(i)}
        store.update(changed)
    elif r < 0.6:
        store.patch(JOB, ns, name, {"status": {"active": rng.randint(0, 5)}}, status=True)
    elif r < 0.7:
        store.patch(JOB, ns, name, {"metadata": {"annotations": {"at": str(i)}}})
    elif r < 0.85:
        store.delete(JOB, ns, name)
    else:
        store.patch(JOB, ns, name, {"metadata": {"finalizers": None}})
    if rng.random() < 0.05:
        for wl in store.list(WORKLOAD).items[:2]:
            store.delete(WORKLOAD, wl.metadata.namespace, wl.metadata.name)


def run(store: MemoryStore, seed: int, steps: int, ack: Ack) -> None:
    """Each step is one or more writes plus ``meta["step"] = i``, in one batch."""
    rng = random.Random(seed)
    for i in range(steps):
        with store.batch():
            for _ in range(rng.choice([1, 1, 1, 4])):
                step(store, rng, i)
            store.set_meta("step", i)
        ack(i, store.resource_version)


def main() -> None:
    state, seed = Path(sys.argv[1]), int(sys.argv[2])
    store = open_store(state, FakeClock(), snapshot_every=int(sys.argv[3]))

    def ack(i: int, rv: int) -> None:
        sys.stdout.write(f"ACK {i} {rv}\n")
        sys.stdout.flush()

    run(store, seed, 10**9, ack)


if __name__ == "__main__":
    main()
