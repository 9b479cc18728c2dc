"""Kueue's internal certificate management (cert-controller's rotator as
``pkg/util/cert/cert.go`` configures it): a CA (CN ``kueue-ca``, O ``kueue``)
and a serving certificate for ``<service>.<namespace>.svc``, kept as a
Secret's data (``ca.crt``, ``ca.key``, ``tls.crt``, ``tls.key``) and written
into the webhook server's certDir; the CA is the caBundle injected into the
webhook configurations."""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from kuota.webhooks.x509 import issue, key, name, pem_key

SERVICE = "kueue-webhook-service"
SECRET = "kueue-webhook-server-cert"
NAMESPACE = "kueue-system"
CERT_DIR = "/tmp/k8s-webhook-server/serving-certs"


@dataclass(frozen=True)
class ServingCerts:
    ca_crt: bytes
    ca_key: bytes
    tls_crt: bytes
    tls_key: bytes

    def secret_data(self) -> dict[str, str]:
        """The Secret's ``data`` (base64), keyed as the rotator keys it."""
        return {
            k: base64.b64encode(v).decode()
            for k, v in (
                ("ca.crt", self.ca_crt),
                ("ca.key", self.ca_key),
                ("tls.crt", self.tls_crt),
                ("tls.key", self.tls_key),
            )
        }

    @property
    def ca_bundle(self) -> str:
        return base64.b64encode(self.ca_crt).decode()

    def write(self, cert_dir: Path) -> None:
        """``tls.crt`` and ``tls.key`` (0600) where the webhook server reads them."""
        cert_dir.mkdir(parents=True, exist_ok=True)
        (cert_dir / "tls.crt").write_bytes(self.tls_crt)
        fd = os.open(cert_dir / "tls.key", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(self.tls_key)


def serving_names(service: str = SERVICE, namespace: str = NAMESPACE) -> tuple[str, ...]:
    return (f"{service}.{namespace}.svc", f"{service}.{namespace}.svc.cluster.local")


def generate(names: tuple[str, ...]) -> ServingCerts:
    """A new CA and a serving certificate for ``names`` (DNS names or IPs)."""
    ca_key = key()
    ca_name = name("kueue-ca", ("kueue",))
    ca = issue(ca_name, ca_key, ca_name, ca_key, ca=True)
    tls_key = key()
    tls = issue(name(names[0], ("kueue",)), tls_key, ca_name, ca_key, server_names=names)
    pem = serialization.Encoding.PEM
    return ServingCerts(
        ca.public_bytes(pem), pem_key(ca_key), tls.public_bytes(pem), pem_key(tls_key)
    )


def from_secret_data(data: dict[str, str] | None, names: tuple[str, ...]) -> ServingCerts:
    """The certificates a Secret holds when complete and naming ``names``,
    else new ones (the rotator's refresh: an empty Secret at install)."""
    try:
        raw = {
            k: base64.b64decode((data or {})[k]) for k in ("ca.crt", "ca.key", "tls.crt", "tls.key")
        }
        tls = x509.load_pem_x509_certificate(raw["tls.crt"])
        alt = tls.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        have = {str(n.value) for n in alt}
        loaded = serialization.load_pem_private_key(raw["tls.key"], None)
        if set(names) <= have and isinstance(loaded, ec.EllipticCurvePrivateKey):
            return ServingCerts(raw["ca.crt"], raw["ca.key"], raw["tls.crt"], raw["tls.key"])
    except (KeyError, ValueError, x509.ExtensionNotFound):
        pass
    return generate(names)


def inject_ca_bundle(configuration: dict[str, Any], ca_bundle: str) -> dict[str, Any]:
    """A Mutating/ValidatingWebhookConfiguration (wire form) with every
    webhook's ``clientConfig.caBundle`` set, as the rotator injects it."""
    out = dict(configuration)
    out["webhooks"] = [
        {**w, "clientConfig": {**w.get("clientConfig", {}), "caBundle": ca_bundle}}
        for w in configuration.get("webhooks", [])
    ]
    return out
