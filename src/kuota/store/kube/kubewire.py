"""What crosses the wire: lightkube's generic resource per stored kind,
kuota's structs to and from the API server's JSON, and the API server's
refusals as the store protocol's errors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import aiohttp
import httpx2 as httpx
import msgspec
from lightkube import ApiError
from lightkube.generic_resource import create_global_resource, create_namespaced_resource

from kuota.api.errors import FieldError
from kuota.api.hooks import dec_hook
from kuota.store.codec import from_wire, to_wire
from kuota.store.kinds import KindInfo, kind_info
from kuota.store.protocol import (
    AlreadyExists,
    BadRequest,
    Conflict,
    Gone,
    Invalid,
    MethodNotAllowed,
    NotFound,
    ResourceType,
    StoreError,
)

_RESOURCES: dict[ResourceType, Any] = {}


class Forbidden(StoreError):
    """Authorization or a validating webhook refused the request."""

    code, reason = 403, "Forbidden"


class Unavailable(StoreError):
    """The API server could not be reached, or failed (5xx, 429): the request
    may be tried again."""

    code, reason = 503, "ServiceUnavailable"


def lk_resource(rtype: ResourceType) -> Any:
    """lightkube's generic resource class of a stored kind, at its storage
    version (the version kuota's structs have)."""
    info = kind_info(rtype)
    res = _RESOURCES.get(info.rtype)
    if res is None:
        group, version, plural = info.rtype
        make = create_namespaced_resource if info.namespaced else create_global_resource
        res = _RESOURCES[info.rtype] = make(group, version, info.kind, plural)
    return res


def api_version(info: KindInfo) -> str:
    group, version, _ = info.rtype
    return f"{group}/{version}" if group else version


def encode(obj: Any) -> dict[str, Any]:
    """The struct as the JSON body of a request."""
    return to_wire(obj)


def decode(data: Any, info: KindInfo) -> Any:
    """An object of a response or a watch event as kuota's struct (list
    items carry no apiVersion and kind: they are the list's). The fast
    lane's answers come decoded already."""
    if type(data) is info.type:
        return data
    raw = dict(data)
    raw.setdefault("apiVersion", api_version(info))
    raw.setdefault("kind", info.kind)
    try:
        return from_wire(raw, info.type)
    except msgspec.ValidationError as err:
        m = raw.get("metadata") or {}
        raise StoreError(
            f"{info.kind} {m.get('namespace', '')}/{m.get('name', '')} from the API server "
            f"does not decode: {err}"
        ) from None


_DECODERS: dict[Any, msgspec.json.Decoder[Any]] = {}


def decode_json(data: bytes, info: KindInfo) -> Any:
    """An object's JSON (a response's body, a watch event's object) as
    kuota's struct, in one pass: ``decode`` of its parse, without the dicts
    between. (The API server sends an object's apiVersion and kind; were
    they missing, the struct's defaults are the stored kind's.)"""
    dec = _DECODERS.get(info.type)
    if dec is None:
        dec = _DECODERS[info.type] = msgspec.json.Decoder(info.type, dec_hook=dec_hook)
    try:
        return dec.decode(data)
    except msgspec.ValidationError as err:
        return _undecodable(data, info, err)
    except msgspec.DecodeError as err:
        raise StoreError(f"{info.kind} from the API server is not JSON: {err}") from None


def _undecodable(data: bytes, info: KindInfo, err: Exception) -> Any:
    """The error ``decode`` raises, naming the object (parsed again, on this rare path)."""
    try:
        raw = msgspec.json.decode(data)
    except msgspec.DecodeError:
        raw = {}
    m = (raw.get("metadata") if isinstance(raw, dict) else None) or {}
    raise StoreError(
        f"{info.kind} {m.get('namespace', '')}/{m.get('name', '')} from the API server "
        f"does not decode: {err}"
    ) from None


def store_error(err: Exception, ref: str) -> StoreError:
    """An API server's answer (or a transport failure) as the store's error."""
    if isinstance(err, ApiError):
        status = err.status
        return status_error(
            status.code or 500,
            {"reason": status.reason or "", "message": status.message or str(err)},
            ref,
        )
    if isinstance(err, httpx.HTTPError | OSError | aiohttp.ClientError | TimeoutError):
        return Unavailable(f"{ref}: the API server did not answer: {err!r}")
    return StoreError(f"{ref}: {err!r}")


def status_error(code: int, status: Mapping[str, Any], ref: str) -> StoreError:
    """An error answer (its HTTP code and Status object) as the store's error."""
    reason = status.get("reason") or ""
    msg = status.get("message") or f"{ref}: HTTP {code}"
    if code == 404:
        return NotFound(msg)
    if code == 409:
        return AlreadyExists(msg) if reason == "AlreadyExists" else Conflict(msg)
    if code == 410:
        return Gone(msg)
    if code == 422:
        return Invalid(ref, [FieldError("", "Invalid value", msg)])
    if code == 400:
        return BadRequest(msg)
    if code == 403:
        return Forbidden(msg)
    if code == 405:
        return MethodNotAllowed(msg)
    if code == 429 or code >= 500:
        out = Unavailable(msg)
        out.code = code
        return out
    plain = StoreError(msg)
    plain.code, plain.reason = code, reason or plain.reason
    return plain


def retryable(err: StoreError) -> bool:
    return isinstance(err, Unavailable)
