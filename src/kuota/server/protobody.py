"""Request bodies in Kubernetes' protobuf encoding, for the kinds kubectl's
imperative ``create`` subcommands send that way (``kubectl create namespace``,
``configmap``, ``secret``, ``serviceaccount``): read into the JSON form every
other request has. Field numbers are k8s.io/api core/v1's and apimachinery's
ObjectMeta's ``generated.proto``. Any other kind in protobuf is refused with
415 and a way round it."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from kuota.server.auth import protowire as pw

Fields = dict[int, list[bytes | int]]


class UnsupportedProtobuf(ValueError):
    """A kind kuota does not read in protobuf (the message says which)."""


def _strings(f: Fields, number: int) -> list[str]:
    return [v.decode() for v in f.get(number, []) if isinstance(v, bytes)]


def _map(f: Fields, number: int, as_bytes: bool = False) -> dict[str, str] | None:
    out: dict[str, str] = {}
    for entry in f.get(number, []):
        if not isinstance(entry, bytes):
            continue
        kv = pw.fields(entry)
        raw = kv.get(2, [b""])[-1]
        value = raw if isinstance(raw, bytes) else b""
        out[pw.string(kv, 1)] = (
            base64.b64encode(value).decode() if as_bytes else value.decode("utf-8", "replace")
        )
    return out or None


def _bool(f: Fields, number: int) -> bool | None:
    values = f.get(number)
    return bool(values[-1]) if values else None


def _meta(f: Fields) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, number in (("name", 1), ("generateName", 2), ("namespace", 3)):
        if value := pw.string(f, number):
            out[key] = value
    for key, number in (("labels", 11), ("annotations", 12)):
        if (m := _map(f, number)) is not None:
            out[key] = m
    if finalizers := _strings(f, 14):
        out["finalizers"] = finalizers
    return out


def _namespace(f: Fields) -> dict[str, Any]:
    spec = pw.message(f, 2) or {}
    finalizers = _strings(spec, 1)
    return {"spec": {"finalizers": finalizers}} if finalizers else {}


def _config_map(f: Fields) -> dict[str, Any]:
    out: dict[str, Any] = {"data": _map(f, 2), "binaryData": _map(f, 3, as_bytes=True)}
    out["immutable"] = _bool(f, 4)
    return {k: v for k, v in out.items() if v is not None}


def _secret(f: Fields) -> dict[str, Any]:
    out: dict[str, Any] = {"data": _map(f, 2, as_bytes=True), "stringData": _map(f, 4)}
    out["type"] = pw.string(f, 3) or None
    out["immutable"] = _bool(f, 5)
    return {k: v for k, v in out.items() if v is not None}


def _service_account(f: Fields) -> dict[str, Any]:
    out: dict[str, Any] = {}
    pulls = [pw.string(pw.fields(v), 1) for v in f.get(3, []) if isinstance(v, bytes)]
    if pulls:
        out["imagePullSecrets"] = [{"name": n} for n in pulls]
    if (auto := _bool(f, 4)) is not None:
        out["automountServiceAccountToken"] = auto
    return out


_KINDS: dict[tuple[str, str], Callable[[Fields], dict[str, Any]]] = {
    ("v1", "Namespace"): _namespace,
    ("v1", "ConfigMap"): _config_map,
    ("v1", "Secret"): _secret,
    ("v1", "ServiceAccount"): _service_account,
}


def decode(body: bytes) -> dict[str, Any]:
    """The object a protobuf body holds, as JSON would give it. Raises
    pw.ProtoError (a malformed body) or UnsupportedProtobuf."""
    api_version, kind, raw = pw.unwrap(body)
    read = _KINDS.get((api_version, kind))
    if read is None:
        raise UnsupportedProtobuf(
            f"kuota reads {kind or 'this kind'} ({api_version or '?'}) only as JSON or YAML, "
            "not in protobuf: write it to a file (kubectl create ... --dry-run=client -o yaml) "
            "and kubectl apply -f it"
        )
    f = pw.fields(raw)
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": _meta(pw.message(f, 1) or {}),
        **read(f),
    }
