"""admissionregistration.k8s.io/v1 Mutating/ValidatingWebhookConfiguration:
what ``kuota serve`` reads to call admission webhooks as kube-apiserver does
(``kuota.webhooks.caller``). Pure: no I/O."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from kuota.api.base import Meta, Object
from kuota.api.meta import LabelSelector, ObjectMeta

__all__ = [
    "GROUP",
    "MutatingWebhook",
    "MutatingWebhookConfiguration",
    "RuleWithOperations",
    "ServiceReference",
    "ValidatingWebhook",
    "ValidatingWebhookConfiguration",
    "WebhookClientConfig",
]

GROUP = "admissionregistration.k8s.io"
API_VERSION = f"{GROUP}/v1"


class ServiceReference(Object, kw_only=True):
    namespace: str
    name: str
    path: str | None = None
    port: int = 443


class WebhookClientConfig(Object, kw_only=True):
    url: str | None = None
    service: ServiceReference | None = None
    # base64 PEM, as on the wire (Go's []byte: published as format byte)
    ca_bundle: Annotated[str, Meta(extra_json_schema={"format": "byte"})] | None = None


class RuleWithOperations(Object, kw_only=True):
    operations: list[str] | None = None
    api_groups: list[str] | None = None
    api_versions: list[str] | None = None
    resources: list[str] | None = None
    scope: Literal["Cluster", "Namespaced", "*"] = "*"


class ValidatingWebhook(Object, kw_only=True):
    name: str
    client_config: WebhookClientConfig
    rules: list[RuleWithOperations] | None = None
    failure_policy: Literal["Ignore", "Fail"] = "Fail"
    match_policy: Literal["Exact", "Equivalent"] = "Equivalent"
    namespace_selector: LabelSelector = msgspec.field(default_factory=LabelSelector)
    object_selector: LabelSelector = msgspec.field(default_factory=LabelSelector)
    side_effects: Literal["None", "NoneOnDryRun", "Some", "Unknown"] = "None"
    timeout_seconds: int = 10
    admission_review_versions: list[str] = msgspec.field(default_factory=lambda: ["v1"])


class MutatingWebhook(ValidatingWebhook, kw_only=True):
    reinvocation_policy: Literal["Never", "IfNeeded"] = "Never"


class ValidatingWebhookConfiguration(Object, kw_only=True):
    api_version: str = API_VERSION
    kind: str = "ValidatingWebhookConfiguration"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    webhooks: list[ValidatingWebhook] | None = None


class MutatingWebhookConfiguration(Object, kw_only=True):
    api_version: str = API_VERSION
    kind: str = "MutatingWebhookConfiguration"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    webhooks: list[MutatingWebhook] | None = None
