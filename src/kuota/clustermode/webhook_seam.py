"""Where ``kuota controller`` serves its admission webhooks (issue 28.3):
kuota.webhooks' HTTPS server at Kueue's paths, answered by the admission
functions of Kueue and the enabled integrations, with a CA and serving
certificate from Kueue's internal certificate management, and the
Mutating/ValidatingWebhookConfigurations registered with that CA as
caBundle (``--webhook-url``: outside a cluster, the URL the API server
calls)."""

from __future__ import annotations

import asyncio
import tempfile
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec
from aiohttp import web

from kuota.api.decode import decode_object
from kuota.store.event_loop import new_event_loop
from kuota.store.protocol import AlreadyExists, Conflict, NotFound, StoreError
from kuota.webhooks import certs
from kuota.webhooks.caller import MUTATING, VALIDATING
from kuota.webhooks.endpoints import endpoints
from kuota.webhooks.server import tls_context, webhook_app

# Job kinds' webhooks skip Kueue's own namespaces (config/components/webhook).
_NS_SELECTOR = {
    "matchExpressions": [
        {
            "key": "kubernetes.io/metadata.name",
            "operator": "NotIn",
            "values": ["kube-system", "kueue-system"],
        }
    ]
}


class WebhookServer:
    """The running server (its own thread and event loop: the hooks read the
    store, whose requests run on the store's I/O loop)."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, runner: web.AppRunner, thread: threading.Thread
    ) -> None:
        self.loop, self.runner, self.thread = loop, runner, thread

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def configurations(
    base_url: str = "", ca_bundle: str = "", service: tuple[str, str] | None = None
) -> list[dict[str, Any]]:
    """Kueue's two webhook configurations pointing at ``base_url``, or at
    the ``service`` (namespace, name) on port 443 as Kueue's install does
    (caBundle left for the manager to inject when ``ca_bundle`` is "")."""
    mutating: list[dict[str, Any]] = []
    validating: list[dict[str, Any]] = []
    for ep in endpoints():
        group, _, version = ep.api_version.rpartition("/")
        plural = ep.kind.lower() + "s"
        kueue = group == "kueue.x-k8s.io"
        ops = ["CREATE"] if ep.mutating else ["CREATE", "UPDATE"]
        resources = (
            [plural, f"{plural}/status"] if ep.kind == "Workload" and not ep.mutating else [plural]
        )
        hook: dict[str, Any] = {
            "name": f"{'m' if ep.mutating else 'v'}{ep.kind.lower()}.kb.io",
            "clientConfig": _client_config(base_url, ep.path, service, ca_bundle),
            "rules": [
                {
                    "apiGroups": [group],
                    "apiVersions": [version],
                    "operations": ops,
                    "resources": resources,
                }
            ],
            "failurePolicy": "Fail",
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        }
        if not kueue:
            hook["namespaceSelector"] = _NS_SELECTOR
        (mutating if ep.mutating else validating).append(hook)
    return [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": name},
            "webhooks": hooks,
        }
        for kind, name, hooks in (
            ("MutatingWebhookConfiguration", "kueue-mutating-webhook-configuration", mutating),
            (
                "ValidatingWebhookConfiguration",
                "kueue-validating-webhook-configuration",
                validating,
            ),
        )
    ]


def _client_config(
    base_url: str, path: str, service: tuple[str, str] | None, ca_bundle: str
) -> dict[str, Any]:
    out: dict[str, Any]
    if service is not None:
        out = {"service": {"namespace": service[0], "name": service[1], "path": path, "port": 443}}
    else:
        out = {"url": base_url.rstrip("/") + path}
    if ca_bundle:
        out["caBundle"] = ca_bundle
    return out


def _register(store: Any, conf: dict[str, Any]) -> None:
    doc = decode_object(conf, source="webhook configuration")
    assert not doc.errors, doc.errors
    rtype = MUTATING if conf["kind"].startswith("Mutating") else VALIDATING
    try:
        old = store.get(rtype, "", conf["metadata"]["name"])
    except NotFound:
        store.create(doc.obj)
        return
    doc.obj.metadata.resource_version = old.metadata.resource_version
    store.update(doc.obj)


def _secret_certs(store: Any, namespace: str, name: str) -> certs.ServingCerts:
    """The rotator's certificates, kept in the Secret every replica shares:
    those it holds when complete, else new ones written into it (on a
    conflict another replica wrote first: its certificates are taken)."""
    from kuota.store.resources import SECRET

    names = certs.serving_names(namespace=namespace)
    for _ in range(5):
        try:
            secret = store.get(SECRET, namespace, name)
        except NotFound:  # not installed (kuota manifests makes it): made here
            secret = decode_object(
                {
                    "apiVersion": "v1",
                    "kind": "Secret",
                    "metadata": {"name": name, "namespace": namespace},
                    "type": "Opaque",
                },
                source="webhook certificates",
            ).obj
            try:
                secret = store.create(secret)
            except AlreadyExists:
                continue
        have = certs.from_secret_data(secret.data, names)
        if have.secret_data() == (secret.data or {}):
            return have
        try:
            store.update(msgspec.structs.replace(secret, data=have.secret_data()))
            return have
        except Conflict:
            continue
    raise StoreError(
        f"secret {namespace}/{name}: kept changing while the certificates were written"
    )


def _inject(store: Any, ca_bundle: str) -> None:
    """The caBundle into Kueue's two configurations as installed (kuota
    manifests), as the rotator injects it; a configuration not there yet is
    left for the next start."""
    for rtype, name in (
        (MUTATING, "kueue-mutating-webhook-configuration"),
        (VALIDATING, "kueue-validating-webhook-configuration"),
    ):
        try:
            old = store.get(rtype, "", name)
        except NotFound:
            continue
        hooks = [
            msgspec.structs.replace(
                h, client_config=msgspec.structs.replace(h.client_config, ca_bundle=ca_bundle)
            )
            for h in old.webhooks or ()
        ]
        store.update(msgspec.structs.replace(old, webhooks=hooks))


def start_webhook_server(
    webhook_url: str | None,
    hooks: list[Any],
    config: Any,
    *,
    store: Any,
    log: Any,
    bind: tuple[str, int] | None = None,
) -> WebhookServer | None:
    """Serve ``hooks`` at ``webhook_url`` (https://HOST:PORT) and register
    the webhook configurations pointing there. Without it, with ``bind``
    (in a cluster: the Configuration's webhook port behind the Service),
    serve there with the certificates of the Secret of internal certificate
    management and inject its CA into the installed configurations.
    Returns a handle to stop it, or None when there is nothing to serve."""
    cert_dir = Path(tempfile.mkdtemp(prefix="kuota-webhook-certs-"))
    if webhook_url is None:
        icm = config.source.internal_cert_management
        if bind is None or (icm is not None and icm.enable is False):
            log.info("no --webhook-url: no admission webhooks served")
            return None
        secret_name = (icm and icm.webhook_secret_name) or certs.SECRET
        served = _secret_certs(store, config.namespace, secret_name)
        served.write(cert_dir)
        server = _serve(hooks, config, cert_dir, *bind)
        _inject(store, served.ca_bundle)
        log.info("webhook server started", bind=f"{bind[0]}:{bind[1]}", hooks=len(hooks))
        return server
    url = urlsplit(webhook_url)
    host, port = url.hostname or "127.0.0.1", url.port or 443
    served = certs.generate((host, *certs.serving_names()))
    served.write(cert_dir)
    server = _serve(hooks, config, cert_dir, host, port)
    base = f"{url.scheme}://{url.netloc}{url.path}"
    for conf in configurations(base, served.ca_bundle):
        _register(store, conf)
    log.info("webhook server started", webhook_url=base, hooks=len(hooks))
    return server


def _serve(hooks: list[Any], config: Any, cert_dir: Path, host: str, port: int) -> WebhookServer:
    loop = new_event_loop()  # (uvloop's when installed, as the API server's calls come over TLS)
    runner = web.AppRunner(
        webhook_app(hooks, config.feature_gates), access_log=None, handle_signals=False
    )
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, host, port, ssl_context=tls_context(cert_dir))
    loop.run_until_complete(site.start())
    thread = threading.Thread(target=loop.run_forever, name="webhooks", daemon=True)
    thread.start()
    return WebhookServer(loop, runner, thread)
