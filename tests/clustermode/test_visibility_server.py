"""``kuota controller --visibility-bind-address``: Kueue's visibility API on
the controller's own HTTPS port, as Kueue's manager serves it behind its
APIServices. Queue order from the controller's queues; delegated
authentication (a bearer token by TokenReview; the aggregator's request
headers over a client certificate of the requestheader CA published in
kube-system/extension-apiserver-authentication) and authorization
(SubjectAccessReview on ``*/pendingworkloads``): a batch user reads her
LocalQueue, not another namespace's nor the ClusterQueue."""

from __future__ import annotations

import datetime as dt
import json
import ssl
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from tests.clustermode.test_controller_dashboard import JOB, QUEUES
from tests.clustermode.twoproc import start_controller
from tests.server.conftest import EXAMPLES, needs_kubectl, start_server
from tests.server.ui.conftest import SETUP

VIS = "/apis/visibility.kueue.x-k8s.io/v1beta2"


def _cert(cn: str, issuer: tuple[Any, Any] | None) -> tuple[Any, Any]:
    """(key, certificate): a CA when ``issuer`` is None, else a client cert."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    now = dt.datetime.now(dt.UTC)
    signer_key, signer = issuer if issuer else (key, None)
    b = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(signer.subject if signer else name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=1))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=issuer is None, path_length=None), critical=True)
    )
    return key, b.sign(signer_key, hashes.SHA256())


def _pem(cert: Any) -> str:
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def _client_ctx(key: Any, cert: Any, tmp: Path) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # (Kueue's APIServices skip it too: self-signed)
    (tmp / "c.crt").write_text(_pem(cert))
    (tmp / "c.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    ctx.load_cert_chain(str(tmp / "c.crt"), str(tmp / "c.key"))
    return ctx


def _get(url: str, ctx: ssl.SSLContext, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


@needs_kubectl
def test_controller_serves_kueues_visibility_api(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text('alice-token,alice,1,"team-a-users"\nroot-token,root,0,"system:masters"\n')
    served = start_server(
        tmp_path / "state",
        str(EXAMPLES / "quickstart" / "world.yaml"),
        "--without-kueue",
        "--token-auth-file",
        str(tokens),
        home=tmp_path / "home",
    )
    ca_key, ca = _cert("front-proxy-ca", None)
    proxy_client = _cert("front-proxy-client", (ca_key, ca))
    other_ca = _cert("someone-else", None)
    stranger = _cert("front-proxy-client", other_ca)
    auth_cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "extension-apiserver-authentication", "namespace": "kube-system"},
        "data": {
            "requestheader-client-ca-file": _pem(ca),
            "requestheader-allowed-names": '["front-proxy-client"]',
            "requestheader-username-headers": '["X-Remote-User"]',
            "requestheader-group-headers": '["X-Remote-Group"]',
        },
    }
    ctl = None
    try:
        served.ok("apply", "-f", "-", input=SETUP)
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}}
        served.ok("apply", "-f", "-", input=yaml.safe_dump_all([ns, auth_cm]))
        served.ok("apply", "-f", "-", input=QUEUES)
        ctl = start_controller(served, "--visibility-bind-address", "127.0.0.1:0")
        ctl.wait_line("leading", 120)
        base = f"https://127.0.0.1:{ctl.port('visibility server')}"
        jobs = [("a1", "team-a"), ("b1", "team-b"), ("a2", "team-a"), ("b2", "team-b")]
        for name, ns in jobs:  # one by one: the held queue orders them by creation
            served.ok("apply", "-f", "-", input=JOB.replace("NAME", name).replace("NS", ns))
            time.sleep(1.1)  # (creationTimestamp has one-second resolution)
        plain = ssl.create_default_context()
        plain.check_hostname, plain.verify_mode = False, ssl.CERT_NONE
        root = {"Authorization": "Bearer root-token"}
        alice = {"Authorization": "Bearer alice-token"}
        cq = f"{base}{VIS}/clusterqueues/mixed/pendingworkloads"
        deadline = time.monotonic() + 60
        while True:
            code, body = _get(cq, plain, root)
            if (code == 200 and len(body["items"]) == 4) or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert code == 200, body
        got = [
            (i["metadata"]["namespace"], i["positionInClusterQueue"], i["positionInLocalQueue"])
            for i in body["items"]
        ]
        assert got == [("team-a", 0, 0), ("team-b", 1, 0), ("team-a", 2, 1), ("team-b", 3, 1)]
        assert all(i["localQueueName"] == "mixed" and i["reason"] for i in body["items"])
        # The batch user: her LocalQueue yes; the ClusterQueue and team-b no.
        lq = f"{base}{VIS}/namespaces/team-a/localqueues/mixed/pendingworkloads"
        code, body = _get(lq, plain, alice)
        assert code == 200 and [i["positionInClusterQueue"] for i in body["items"]] == [0, 2]
        code, body = _get(cq, plain, alice)
        assert code == 403 and body["reason"] == "Forbidden", body
        code, _ = _get(lq.replace("team-a", "team-b"), plain, alice)
        assert code == 403
        code, body = _get(cq, plain)
        assert code == 401, body
        code, body = _get(cq, plain, {"Authorization": "Bearer nope"})
        assert code == 401
        # As the aggregator forwards: the user in headers, over its client cert.
        tmp = Path(tempfile.mkdtemp(dir=tmp_path))
        as_alice = {"X-Remote-User": "alice", "X-Remote-Group": "team-a-users"}
        code, body = _get(lq, _client_ctx(*proxy_client, tmp), as_alice)
        assert code == 200 and len(body["items"]) == 2, body
        code, _ = _get(cq, _client_ctx(*proxy_client, tmp), as_alice)
        assert code == 403
        # Another CA's certificate is refused at the handshake (as Go's
        # VerifyClientCertIfGiven does); its headers are never read.
        with pytest.raises((ssl.SSLError, urllib.error.URLError, ConnectionError)):
            _get(lq, _client_ctx(*stranger, tmp), as_alice)
        # Discovery, as the aggregator reads it.
        code, body = _get(f"{base}{VIS}", plain, root)
        assert code == 200 and body["groupVersion"] == "visibility.kueue.x-k8s.io/v1beta2"
        # The controller's dashboard answers the page's visibility calls too.
    finally:
        if ctl is not None:
            assert ctl.stop() == 0
        served.stop()
