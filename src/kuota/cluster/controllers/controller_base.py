"""The one base of the embedded cluster's controllers: the manager that runs a
controller (known from :meth:`ClusterController.setup` on) and the Events
it records."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["ClusterController"]


class ClusterController:
    """A :class:`~kuota.runtime.manager.Controller` of the embedded cluster.

    Subclasses name their work queue (``name``) and the component their
    Events come from (``component``), extend :meth:`setup` to ask for their
    informers and register their handlers, and implement ``reconcile``.
    """

    name: str
    component: str = ""

    def __init__(self) -> None:
        self._mgr: Manager | None = None

    @property
    def mgr(self) -> Manager:
        """The manager that runs this controller (from :meth:`setup` on)."""
        assert self._mgr is not None, f"{self.name}: not set up"
        return self._mgr

    def setup(self, mgr: Manager) -> None:
        """Remember ``mgr``; a subclass then asks for its informers."""
        self._mgr = mgr

    def event(self, obj: Any, type_: str, reason: str, message: str) -> None:
        """An Event about ``obj`` from :attr:`component` (when the manager
        keeps events)."""
        recorder = getattr(self.mgr, "recorder", None)
        if recorder is not None:
            recorder.event(obj, type_, reason, message, self.component)
