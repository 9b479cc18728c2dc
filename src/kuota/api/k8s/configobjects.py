"""core/v1 ConfigMap, Secret and ServiceAccount: what a deployment applies
beside its controller (``kuota manifests``: the Configuration's ConfigMap,
the webhook certificates' Secret, the manager's ServiceAccount) and what
Kueue's internal certificate management reads and writes.

kuota interprets none of them; a Secret's ``stringData`` is folded into
``data`` as the API server's registry strategy does, so it is never stored.

Pure: no I/O.
"""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Final

import msgspec
from msgspec import Meta

from kuota.api.base import LIST_ATOMIC, MAP_ATOMIC, Object, list_map
from kuota.api.errors import FieldError, invalid
from kuota.api.meta import ObjectMeta

__all__ = [
    "ConfigMap",
    "LocalObjectReference",
    "Secret",
    "SecretReference",
    "ServiceAccount",
    "default_secret",
    "validate_secret",
]

_BYTES: Final = Meta(extra_json_schema={"format": "byte"})
_MAX_SIZE: Final = 1024 * 1024  # validation.MaxSecretSize, also ConfigMaps'


class LocalObjectReference(Object, omit_defaults=False):
    name: str = ""


class SecretReference(Object):
    """core/v1 ObjectReference as a ServiceAccount's ``secrets`` use it."""

    kind: str | None = None
    namespace: str | None = None
    name: str | None = None
    uid: str | None = None
    api_version: str | None = None
    resource_version: str | None = None
    field_path: str | None = None


LocalRef = Annotated[LocalObjectReference, MAP_ATOMIC]
ObjectRef = Annotated[SecretReference, MAP_ATOMIC]


class ConfigMap(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    data: dict[str, str] | None = None
    binary_data: dict[str, Annotated[str, _BYTES]] | None = None
    immutable: bool | None = None


class Secret(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    data: dict[str, Annotated[str, _BYTES]] | None = None
    string_data: dict[str, str] | None = None
    type: str | None = None
    immutable: bool | None = None


class ServiceAccount(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    secrets: (
        Annotated[
            list[ObjectRef],
            list_map("name"),
            Meta(
                extra_json_schema={
                    "x-kubernetes-patch-merge-key": "name",
                    "x-kubernetes-patch-strategy": "merge",
                }
            ),
        ]
        | None
    ) = None
    image_pull_secrets: Annotated[list[LocalRef], LIST_ATOMIC] | None = None
    automount_service_account_token: bool | None = None


def validate_secret(secret: Secret) -> list[FieldError]:
    """The Secret's data is base64 and, with stringData folded in, at most
    1 MiB (ValidateSecret)."""
    errs: list[FieldError] = []
    size = 0
    for key, value in (secret.data or {}).items():
        try:
            size += len(base64.b64decode(value, validate=True))
        except (binascii.Error, ValueError):
            errs.append(invalid(f"data[{key}]", "<value>", "not valid base64"))
    size += sum(len(v.encode()) for v in (secret.string_data or {}).values())
    if size > _MAX_SIZE:
        errs.append(invalid("data", "<data>", f"Too long: may not be more than {_MAX_SIZE} bytes"))
    return errs


def default_secret(secret: Secret, _gates: object = None) -> None:
    """stringData is write-only: its entries replace data's, base64-encoded
    (the secret registry strategy's PrepareForCreate/Update); ``type``
    defaults to Opaque (SetDefaults_Secret)."""
    if secret.type is None:
        secret.type = "Opaque"
    if secret.string_data:
        data = dict(secret.data or {})
        for k, v in secret.string_data.items():
            data[k] = base64.b64encode(v.encode()).decode()
        secret.data = data
        secret.string_data = None
