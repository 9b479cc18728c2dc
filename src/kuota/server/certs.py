"""The server's PKI in its state directory: a CA, the serving certificate, the
admin's client certificate (CN admin, O system:masters), and the kubeconfig
that names them. Generated on first start and reused, as kubeadm keeps
``/etc/kubernetes/pki``: a client configured once keeps working after a
restart."""

from __future__ import annotations

import base64
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from kuota.webhooks.x509 import issue as _issue
from kuota.webhooks.x509 import key as _key
from kuota.webhooks.x509 import name as _name
from kuota.webhooks.x509 import pem_key as _pem_key

PKI_DIR = "pki"


@dataclass(frozen=True)
class Pki:
    dir: Path
    ca_cert: Path
    server_cert: Path
    server_key: Path
    admin_cert: Path
    admin_key: Path


def _write(path: Path, data: bytes, private: bool = False) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def ensure_pki(state_dir: Path, address: str) -> Pki:
    """The PKI under ``state_dir/pki``, created when absent. The serving
    certificate names localhost, 127.0.0.1, ::1 and ``address``; it is
    re-issued (by the same CA) when ``address`` is not among its names."""
    d = state_dir / PKI_DIR
    d.mkdir(parents=True, exist_ok=True)
    pki = Pki(
        d,
        d / "ca.crt",
        d / "apiserver.crt",
        d / "apiserver.key",
        d / "admin.crt",
        d / "admin.key",
    )
    ca_key_path = d / "ca.key"
    if not pki.ca_cert.exists() or not ca_key_path.exists():
        ca_key = _key()
        ca_name = _name("kuota-ca")
        ca = _issue(ca_name, ca_key, ca_name, ca_key, ca=True)
        _write(ca_key_path, _pem_key(ca_key), private=True)
        _write(pki.ca_cert, ca.public_bytes(serialization.Encoding.PEM))
        for stale in (pki.server_cert, pki.admin_cert):
            stale.unlink(missing_ok=True)
    ca = x509.load_pem_x509_certificate(pki.ca_cert.read_bytes())
    loaded = serialization.load_pem_private_key(ca_key_path.read_bytes(), None)
    assert isinstance(loaded, ec.EllipticCurvePrivateKey)
    ca_key = loaded
    names = tuple(dict.fromkeys(("localhost", "127.0.0.1", "::1", address or "127.0.0.1")))
    if not pki.server_cert.exists() or not _names_ok(pki.server_cert, names):
        key = _key()
        cert = _issue(_name("kuota-apiserver"), key, ca.subject, ca_key, server_names=names)
        _write(pki.server_key, _pem_key(key), private=True)
        _write(pki.server_cert, cert.public_bytes(serialization.Encoding.PEM))
    if not pki.admin_cert.exists() or not pki.admin_key.exists():
        key = _key()
        cert = _issue(_name("admin", ("system:masters",)), key, ca.subject, ca_key, client=True)
        _write(pki.admin_key, _pem_key(key), private=True)
        _write(pki.admin_cert, cert.public_bytes(serialization.Encoding.PEM))
    return pki


def _names_ok(path: Path, names: tuple[str, ...]) -> bool:
    cert = x509.load_pem_x509_certificate(path.read_bytes())
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    have = {str(v) for v in san.get_values_for_type(x509.IPAddress)}
    have |= set(san.get_values_for_type(x509.DNSName))
    return all(str(ipaddress.ip_address(n)) in have if _is_ip(n) else n in have for n in names)


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def write_kubeconfig(state_dir: Path, pki: Pki, server: str) -> Path:
    """``state_dir/kubeconfig``: the cluster (its CA inline), the admin user
    (its client certificate inline) and a current context, written atomically
    so a client never reads half of one."""
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "kuota",
                "cluster": {"server": server, "certificate-authority-data": _b64(pki.ca_cert)},
            }
        ],
        "users": [
            {
                "name": "admin",
                "user": {
                    "client-certificate-data": _b64(pki.admin_cert),
                    "client-key-data": _b64(pki.admin_key),
                },
            }
        ],
        "contexts": [
            {
                "name": "kuota",
                "context": {"cluster": "kuota", "user": "admin", "namespace": "default"},
            }
        ],
        "current-context": "kuota",
        "preferences": {},
    }
    path = state_dir / "kubeconfig"
    _write(path, yaml.safe_dump(doc, sort_keys=False).encode(), private=True)
    return path
