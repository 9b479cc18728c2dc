"""apiextensions.k8s.io/v1 CustomResourceDefinition, as far as kuota serves
the kinds one defines: names, scope, versions with their schema, printer
columns and subresources. A version's ``openAPIV3Schema`` is kept as written
(``structural.py`` reads it)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from kuota.api.base import Object
from kuota.api.base import preserve_unknown as _pu
from kuota.api.meta import ObjectMeta

GROUP = "apiextensions.k8s.io"
KIND = "CustomResourceDefinition"

__all__ = [
    "GROUP",
    "KIND",
    "CustomResourceColumnDefinition",
    "CustomResourceDefinition",
    "CustomResourceDefinitionNames",
    "CustomResourceDefinitionSpec",
    "CustomResourceDefinitionVersion",
    "CustomResourceSubresourceScale",
    "CustomResourceSubresources",
]

AnyObject = Annotated[dict[str, Any], _pu()]


class CustomResourceDefinitionNames(Object):
    plural: str
    kind: str
    singular: str | None = None
    short_names: list[str] | None = None
    list_kind: str | None = None
    categories: list[str] | None = None


class CustomResourceColumnDefinition(Object):
    name: str
    type: str
    json_path: str
    format: str | None = None
    description: str | None = None
    priority: int | None = None


class CustomResourceSubresourceScale(Object):
    spec_replicas_path: str
    status_replicas_path: str
    label_selector_path: str | None = None


class CustomResourceSubresources(Object):
    status: AnyObject | None = None
    scale: CustomResourceSubresourceScale | None = None


class CustomResourceValidation(Object):
    open_apiv3_schema: AnyObject | None = msgspec.field(default=None, name="openAPIV3Schema")


class CustomResourceDefinitionVersion(Object):
    name: str
    served: bool
    storage: bool
    deprecated: bool | None = None
    deprecation_warning: str | None = None
    schema: CustomResourceValidation | None = None
    subresources: CustomResourceSubresources | None = None
    additional_printer_columns: list[CustomResourceColumnDefinition] | None = None
    selectable_fields: list[AnyObject] | None = None


class CustomResourceDefinitionSpec(Object):
    group: str
    names: CustomResourceDefinitionNames
    scope: Literal["Namespaced", "Cluster"]
    versions: list[CustomResourceDefinitionVersion]
    conversion: AnyObject | None = None
    preserve_unknown_fields: bool | None = None


class CustomResourceDefinition(Object):
    api_version: str
    kind: str
    spec: CustomResourceDefinitionSpec
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    status: AnyObject | None = None
