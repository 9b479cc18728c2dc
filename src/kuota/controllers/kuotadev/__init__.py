"""The controllers of kuota's own kinds (``kuota.dev``, declared in
``kuota.api.kuotadev``): each kind's controller package exports one
``Integration`` (its webhooks and reconcilers; no adapter, no framework to
enable) and is listed here, one line each. Unlike Kueue's job integrations they
are always on."""

from __future__ import annotations

from kuota.controllers.integration import Integration
from kuota.controllers.kuotadev import bizrq

KUOTA_CONTROLLERS: tuple[Integration, ...] = (bizrq.INTEGRATION,)
