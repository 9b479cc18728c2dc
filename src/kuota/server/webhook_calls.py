"""Serve's admission chain: the registered admission webhooks
(``kuota.webhooks.caller``) on every client write, their refusals as the
API server's Status."""

from __future__ import annotations

from typing import Any

from kuota.server import status as st
from kuota.server.rest import Request
from kuota.store.protocol import ObjectStore
from kuota.webhooks.caller import Attributes, Rejected, WebhookCaller


class ServeWebhooks:
    def __init__(self, store: ObjectStore) -> None:
        self.caller = WebhookCaller(store)

    def admit_request(
        self, req: Request, operation: str, raw: Any, old: dict[str, Any] | None
    ) -> Any:
        if not isinstance(raw, dict):
            return raw  # decode_body names what is wrong with it
        s = req.served
        meta: dict[str, Any] = raw["metadata"] if isinstance(raw.get("metadata"), dict) else {}
        user = req.user
        attrs = Attributes(
            operation=operation,
            group=s.group,
            version=s.version.name,
            kind=s.kind,
            resource=s.resource,
            subresource=req.subresource,
            namespace=req.namespace,
            name=req.name or str(meta.get("name") or ""),
            user={
                "username": getattr(user, "name", ""),
                "uid": getattr(user, "uid", ""),
                "groups": list(getattr(user, "groups", ())),
            },
            dry_run=req.dry_run,
        )
        try:
            return self.caller.admit(attrs, raw, old)
        except Rejected as err:
            raise st.ApiError(err.code, err.reason, err.message) from None
