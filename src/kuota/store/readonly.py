"""A kept state opened for reading: the CLI's view of a state directory.

It answers the ObjectStore protocol's reads (get, list, watch) from the state
as the journal holds it, and refuses every write: a reader must never change
what a run kept (no torn tail cut, no snapshot written, no object touched).
The journal's format stays the store's business: readers see objects only.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

from kuota.api.meta import LabelSelector
from kuota.store.journal import Journal
from kuota.store.memory import MemoryStore
from kuota.store.protocol import ListResult, MethodNotAllowed, ResourceType, Watch


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
    """The state kept in ``state_dir``, read as it is, for reading only.
    Raises JournalError (JournalLocked while a run has it open for writing,
    JournalCorrupt), as opening it for writing would."""
    journal = Journal(state_dir, readonly=True)
    try:
        state = journal.recover()
    finally:
        journal.close()
    store = MemoryStore(lambda: datetime.now(UTC))
    store.adopt(state)
    return ReadOnlyStore(store, f"the state {state_dir}")
