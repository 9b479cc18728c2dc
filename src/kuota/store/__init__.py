"""The object store: the protocol, the in-memory store, its durable journal and
the read-only open of a kept state."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kuota.store.codec import clone
from kuota.store.events import MemoryWatch
from kuota.store.journal import (
    Journal,
    JournalCorrupt,
    JournalError,
    JournalLocked,
    JournalWriteError,
)
from kuota.store.kinds import KindInfo, kind_info, register_kind, resource_of, rtype_of
from kuota.store.memory import MemoryStore
from kuota.store.merge import merge_patch
from kuota.store.protocol import (
    AdmissionHook,
    AlreadyExists,
    BadRequest,
    Clock,
    Conflict,
    Event,
    EventType,
    Gone,
    Invalid,
    ListResult,
    MethodNotAllowed,
    NotFound,
    ObjectStore,
    Operation,
    ResourceType,
    StoreError,
    Watch,
    group_of,
)
from kuota.store.readonly import ReadOnlyStore, open_readonly
from kuota.store.selectors import parse_selector, selector_matcher

__all__ = [
    "AdmissionHook",
    "AlreadyExists",
    "BadRequest",
    "Clock",
    "Conflict",
    "Event",
    "EventType",
    "Gone",
    "Invalid",
    "Journal",
    "JournalCorrupt",
    "JournalError",
    "JournalLocked",
    "JournalWriteError",
    "KindInfo",
    "ListResult",
    "MemoryStore",
    "MemoryWatch",
    "MethodNotAllowed",
    "NotFound",
    "ObjectStore",
    "Operation",
    "ReadOnlyStore",
    "ResourceType",
    "StoreError",
    "Watch",
    "clone",
    "group_of",
    "kind_info",
    "merge_patch",
    "open_readonly",
    "open_store",
    "parse_selector",
    "register_kind",
    "resource_of",
    "rtype_of",
    "selector_matcher",
]


def open_store(
    state_dir: str | Path | None,
    clock: Clock,
    admission: Sequence[AdmissionHook] = (),
    *,
    history: int = 100_000,
    snapshot_every: int = 50_000,
) -> MemoryStore:
    """An in-memory store; journaled to ``state_dir`` (and recovered from it)
    when one is given. Raises JournalLocked if another process has it open,
    JournalError if the directory is not a kuota state (nor new, nor empty)."""
    journal = Journal(state_dir, snapshot_every) if state_dir is not None else None
    try:
        return MemoryStore(clock, admission, history=history, journal=journal)
    except BaseException:
        if journal is not None:
            journal.close()
        raise
