from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from store_testlib import FakeClock, MakeStore

from kuota.store import AdmissionHook, MemoryStore, open_store


@pytest.fixture(params=["memory", "journal"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MakeStore]:
    """Builds stores of the parametrized flavour (closed after the test): the
    plain memory store, or one journaled to a fresh directory each call."""
    opened: list[MemoryStore] = []

    def make(
        admission: Sequence[AdmissionHook] = (),
        history: int = 100_000,
        clock: FakeClock | None = None,
    ) -> MemoryStore:
        clock = clock or FakeClock()
        if request.param == "memory":
            s = MemoryStore(clock, admission, history=history)
        else:
            state = tmp_path / f"state-{len(opened)}"
            s = open_store(state, clock, admission, history=history)
        opened.append(s)
        return s

    yield make
    for s in opened:
        s.close()


@pytest.fixture
def store(make_store: MakeStore) -> MemoryStore:
    return make_store()
