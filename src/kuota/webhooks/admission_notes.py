"""What an admission plugin tells the client and the audit log besides
admit or deny: kube-apiserver's warnings (``k8s.io/apiserver/pkg/warning``,
sent as ``Warning: 299 - "<text>"`` response headers that kubectl prints) and
a request's audit annotations (``admission.Attributes.AddAnnotation``).

A writer that wants them (``kuota serve`` for each API request, ``kuota run``
for the world's objects) collects them around its store write; a write with
no collector (a controller's) drops them, as client-go's default handler
only logs a controller's warnings."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

__all__ = ["AdmissionNotes", "add_annotation", "add_warning", "collect", "warning_header"]


@dataclass
class AdmissionNotes:
    """One request's warnings (in order, without repeats, as kube-apiserver's
    recorder keeps them) and audit annotations (key to value)."""

    warnings: list[str] = field(default_factory=list)
    annotations: dict[str, str] = field(default_factory=dict)


_current: ContextVar[AdmissionNotes | None] = ContextVar("admission_notes", default=None)


@contextmanager
def collect() -> Iterator[AdmissionNotes]:
    notes = AdmissionNotes()
    token = _current.set(notes)
    try:
        yield notes
    finally:
        _current.reset(token)


def add_warning(text: str) -> None:
    notes = _current.get()
    if notes is not None and text and text not in notes.warnings:
        notes.warnings.append(text)


def add_annotation(key: str, value: str) -> None:
    """An audit annotation; a key already set keeps its first value
    (Attributes.AddAnnotation refuses to overwrite one)."""
    notes = _current.get()
    if notes is not None:
        notes.annotations.setdefault(key, value)


def warning_header(text: str) -> str:
    """The ``Warning`` header value (net.NewWarningHeader: code 299, agent
    ``-``, the text quoted with ``"`` and ``\\`` escaped)."""
    quoted = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{quoted}"'
