"""Where ``kuota controller`` hands its webhooks to the HTTPS webhook
server (issue 28 item 3, built in another branch: its server, Kueue's
paths, the certificates and the webhook configurations).

NOT BUILT HERE: this branch parses ``--webhook-url`` and passes it, with
the admission functions to serve, to ``start_webhook_server``; until the
webhook server is merged and wired in here, the controller serves no
webhooks and says so in its log. The lead wires it at merge."""

from __future__ import annotations

from typing import Any


def start_webhook_server(
    webhook_url: str | None,
    hooks: list[Any],
    config: Any,
    *,
    store: Any,
    log: Any,
) -> Any:
    """Start serving ``hooks`` (the store admission functions of Kueue and
    the enabled integrations) as admission webhooks at ``webhook_url`` (in
    cluster: behind Kueue's webhook Service). Returns a handle to stop it,
    or None."""
    log.warning(
        "webhook server not wired in this build: no admission webhooks served",
        webhook_url=webhook_url or "",
        hooks=len(hooks),
    )
    return None
