"""Serve's admission chain: the registered admission webhooks
(``kuota.webhooks.caller``) on every client write, their refusals as the
API server's Status.

The calls leave the event loop: a webhook may read from this server while
it decides (Kueue's job webhook looks up the Job's namespace), so a write
that webhooks match is answered in two passes. The first (on the loop)
finds the webhooks and raises NeedsWebhooks; the handler awaits the calls
in a worker thread and runs the write again, which takes their result.
Writes no webhook matches keep their one synchronous pass."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from kuota.server import status as st
from kuota.server.rest import Request
from kuota.store.protocol import ObjectStore
from kuota.webhooks.caller import Attributes, Rejected, WebhookCaller


class NeedsWebhooks(Exception):
    """Raised by the first pass of a write that webhooks must admit."""

    def __init__(self, owner: ServeWebhooks, key: str, plan: Any) -> None:
        super().__init__("admission webhooks to call")
        self.owner, self.key, self.plan = owner, key, plan

    async def run(self) -> None:
        owner, key, plan = self.owner, self.key, self.plan
        try:
            result: Any = await asyncio.to_thread(owner.caller.run, *plan)
        except Rejected as err:
            result = err
        owner.done[key] = result


class ServeWebhooks:
    def __init__(self, store: ObjectStore) -> None:
        self.caller = WebhookCaller(store)
        self.done: dict[str, Any] = {}  # a write's key -> its admitted object or Rejected

    def admit_request(
        self,
        req: Request,
        operation: str,
        raw: Any,
        old_of: Callable[[], dict[str, Any] | None] | None,
    ) -> Any:
        """``old_of``: the stored object as the request's version sees it
        (read only when a webhook is registered: most writes need none)."""
        if not isinstance(raw, dict) or self.caller.none_registered():
            return raw  # (not an object: decode_body names what is wrong with it)
        old = old_of() if old_of is not None else None
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
        plan = self.caller.plan(attrs, raw, old)
        if plan is None:
            return raw
        key = json.dumps([operation, s.group, s.resource, raw, old], sort_keys=True, default=str)
        if key not in self.done:
            raise NeedsWebhooks(self, key, plan)
        result = self.done.pop(key)
        if isinstance(result, Rejected):
            raise st.ApiError(result.code, result.reason, result.message)
        return result
