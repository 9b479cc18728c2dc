"""A kept state opened for reading: the CLI's view of a state directory.

It answers the ObjectStore protocol's reads (get, list, watch) from the state
as the journal holds it, and refuses every write: a reader must never change
what a run kept (no torn tail cut, no snapshot written, no object touched).
The journal's format stays the store's business: readers see objects only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

from kuota.api.meta import LabelSelector
from kuota.store.journal_errors import JournalCorrupt, JournalError
from kuota.store.journal_replay import Recovered, replay
from kuota.store.memory import MemoryStore
from kuota.store.protocol import ListResult, MethodNotAllowed, ResourceType, Watch
from kuota.store.state_dir import check_format


class ReadOnlyStore:
    """An ObjectStore over a kept state whose writes raise MethodNotAllowed."""

    def __init__(self, store: MemoryStore, where: str) -> None:
        self._store = store
        self._where = where

    # ------------------------------------------------------------ reading
    def get(self, rtype: ResourceType, namespace: str, name: str) -> Any:
        return self._store.get(rtype, namespace, name)

    def list(
        self,
        rtype: ResourceType,
        namespace: str | None = None,
        label_selector: LabelSelector | str | None = None,
    ) -> ListResult:
        return self._store.list(rtype, namespace, label_selector)

    def watch(
        self,
        rtype: ResourceType,
        since: str,
        *,
        namespace: str | None = None,
        bookmarks: bool = False,
    ) -> Watch:
        return self._store.watch(rtype, since, namespace=namespace, bookmarks=bookmarks)

    def get_meta(self, key: str, default: Any = None) -> Any:
        """A value the run kept beside its objects (its clock, its
        configuration), or ``default``."""
        return self._store.get_meta(key, default)

    # ------------------------------------------------------------ writing
    def _refuse(self, what: str) -> NoReturn:
        raise MethodNotAllowed(f"{self._where} is open read-only: {what} refused")

    def create(self, obj: Any) -> Any:
        self._refuse(f"create of {obj.kind} {obj.metadata.name!r}")

    def update(self, obj: Any) -> Any:
        self._refuse(f"update of {obj.kind} {obj.metadata.name!r}")

    def update_status(self, obj: Any) -> Any:
        self._refuse(f"status update of {obj.kind} {obj.metadata.name!r}")

    def patch(
        self,
        rtype: ResourceType,
        namespace: str,
        name: str,
        patch: Mapping[str, Any],
        *,
        status: bool = False,
    ) -> Any:
        self._refuse(f"patch of {rtype[2]} {name!r}")

    def delete(
        self,
        rtype: ResourceType,
        namespace: str,
        name: str,
        *,
        resource_version: str | None = None,
    ) -> Any | None:
        self._refuse(f"delete of {rtype[2]} {name!r}")

    def close(self) -> None:
        """Nothing to release: the state was read whole at the open."""

    def __enter__(self) -> ReadOnlyStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_readonly(state_dir: str | Path) -> ReadOnlyStore:
    """The state kept in ``state_dir``, read as it is, for reading only: no
    lock taken, nothing written. A state a live run writes reads as what it
    has written so far (its writes are appended after what was read).
    Raises JournalError (JournalCorrupt) for a directory that is no kuota
    state or a damaged one."""
    if not str(state_dir):  # (Path("") would be the working directory)
        raise JournalError("an empty state path: give a state directory")
    state = _read(Path(state_dir))
    store = MemoryStore(lambda: datetime.now(UTC))
    store.adopt(state)
    return ReadOnlyStore(store, f"the state {state_dir}")


def read_state(state_dir: str | Path) -> Recovered:
    """The objects and meta a state keeps, read as open_readonly reads them
    (no lock, nothing written): a fork's starting point."""
    if not str(state_dir):
        raise JournalError("an empty state path: give a state directory")
    return _read(Path(state_dir))


# A live writer may snapshot while we read: files we listed go, and a listing
# taken during a rename may miss one. Each retry starts over from what the
# directory holds then; a writer snapshots at most once per snapshot_every
# records, so a few tries find a quiet moment.
_TRIES = 20


def _read(directory: Path) -> Recovered:
    if not directory.is_dir():
        raise JournalError(f"{directory}: no such state directory")
    for attempt in range(_TRIES):
        names = sorted(os.listdir(directory))
        check_format(directory, names)
        try:
            return replay(directory, names).state
        except (FileNotFoundError, JournalCorrupt):
            if attempt == _TRIES - 1 or sorted(os.listdir(directory)) == names:
                raise  # the same files as we read: not a race, the state is so
    raise AssertionError("unreachable")
