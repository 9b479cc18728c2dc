"""The controllers of kuota's own kinds (``kuota.dev``, declared in
``kuota.api.kuotadev``): each kind's controller package exports one
``Integration`` (its webhooks and reconcilers; no adapter, no framework to
enable) and is listed here, one line each. Unlike Kueue's job integrations they
are always on. None yet: the business-group quota tree's controller is the
first planned (docs/design.md)."""

from __future__ import annotations

from kuota.controllers.integration import Integration

KUOTA_CONTROLLERS: tuple[Integration, ...] = ()
