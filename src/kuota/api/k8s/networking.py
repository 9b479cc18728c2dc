"""networking.k8s.io/v1 Ingress (``k8s.io/api/networking/v1``): every JSON
field, and kube-apiserver's validation of it (``pkg/apis/networking/validation``,
``ValidateIngressCreate`` with v1's options). Stored and served; kuota runs no
ingress controller, so ``status.loadBalancer`` stays as written."""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Final

import msgspec

from kuota.api import names
from kuota.api.base import LIST_ATOMIC, Object
from kuota.api.errors import FieldError, child, index, invalid, not_supported, required
from kuota.api.k8s.validation.containers import _is_valid_port_name, _is_valid_port_num
from kuota.api.meta import ObjectMeta

__all__ = ["GROUP", "Ingress", "IngressSpec", "IngressStatus", "validate_ingress"]

GROUP: Final = "networking.k8s.io"


class TypedLocalObjectReference(Object):
    kind: str
    name: str
    api_group: str | None = None


class ServiceBackendPort(Object):
    name: str | None = None
    number: int | None = None


class IngressServiceBackend(Object):
    name: str
    port: ServiceBackendPort = msgspec.field(default_factory=ServiceBackendPort)


class IngressBackend(Object):
    service: IngressServiceBackend | None = None
    resource: TypedLocalObjectReference | None = None


class HTTPIngressPath(Object):
    path: str | None = None
    path_type: str | None = None  # required: checked with the API server's message
    backend: IngressBackend = msgspec.field(default_factory=IngressBackend)


class HTTPIngressRuleValue(Object):
    paths: Annotated[list[HTTPIngressPath], LIST_ATOMIC] = msgspec.field(default_factory=list)


class IngressRule(Object):
    host: str | None = None
    http: HTTPIngressRuleValue | None = None


class IngressTLS(Object):
    hosts: Annotated[list[str], LIST_ATOMIC] | None = None
    secret_name: str | None = None


class IngressSpec(Object):
    ingress_class_name: str | None = None
    default_backend: IngressBackend | None = None
    tls: Annotated[list[IngressTLS], LIST_ATOMIC] | None = None
    rules: Annotated[list[IngressRule], LIST_ATOMIC] | None = None


class IngressPortStatus(Object):
    port: int
    protocol: str
    error: str | None = None


class IngressLoadBalancerIngress(Object):
    ip: str | None = None
    hostname: str | None = None
    ports: Annotated[list[IngressPortStatus], LIST_ATOMIC] | None = None


class IngressLoadBalancerStatus(Object):
    ingress: Annotated[list[IngressLoadBalancerIngress], LIST_ATOMIC] | None = None


class IngressStatus(Object):
    load_balancer: IngressLoadBalancerStatus | None = None


class Ingress(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: IngressSpec = msgspec.field(default_factory=IngressSpec)
    status: IngressStatus | None = None


# ------------------------------------------------------------------ validation
Errors = list[FieldError]
PATH_TYPES: Final = ("Exact", "ImplementationSpecific", "Prefix")
_INVALID_SEQUENCES: Final = ("//", "/./", "/../", "%2f", "%2F")
_INVALID_SUFFIXES: Final = ("/..", "/.")
_WILDCARD_FMT: Final = r"\*\." + names.DNS1123_SUBDOMAIN_FMT
_WILDCARD: Final = re.compile(_WILDCARD_FMT)
_WILDCARD_MSG: Final = (
    "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, "
    "which must consist of lower case alphanumeric characters, '-' or '.' and end with an "
    "alphanumeric character"
)


def is_wildcard_dns1123_subdomain(value: str) -> list[str]:
    """apimachinery's IsWildcardDNS1123Subdomain."""
    errs = []
    if len(value) > names.DNS1123_SUBDOMAIN_MAX:
        errs.append(f"must be no more than {names.DNS1123_SUBDOMAIN_MAX} characters")
    if not _WILDCARD.fullmatch(value):
        errs.append(names._regex_error(_WILDCARD_MSG, _WILDCARD_FMT, "*.example.com"))
    return errs


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _host_errors(host: str, path: str) -> Errors:
    check = is_wildcard_dns1123_subdomain if "*" in host else names.is_dns1123_subdomain
    return [invalid(path, host, m) for m in check(host)]


def validate_ingress(ing: Ingress) -> Errors:
    """``validateIngressSpec`` (the metadata is checked on decoding)."""
    spec, path = ing.spec, "spec"
    errs: Errors = []
    if not spec.rules and spec.default_backend is None:
        errs.append(
            invalid(
                path,
                msgspec.to_builtins(spec.rules) if spec.rules is not None else None,
                "either `defaultBackend` or `rules` must be specified",
            )
        )
    if spec.default_backend is not None:
        errs += _backend_errors(spec.default_backend, child(path, "defaultBackend"))
    for i, rule in enumerate(spec.rules or ()):
        p = index(child(path, "rules"), i)
        if rule.host:
            if _is_ip(rule.host):
                errs.append(
                    invalid(child(p, "host"), rule.host, "must be a DNS name, not an IP address")
                )
            errs += _host_errors(rule.host, child(p, "host"))
        if rule.http is not None:
            errs += _http_errors(rule.http, child(p, "http"))
    for i, tls in enumerate(spec.tls or ()):
        p = index(child(path, "tls"), i)
        for j, host in enumerate(tls.hosts or ()):
            errs += _host_errors(host, index(child(p, "hosts"), j))
        if tls.secret_name:
            errs += [
                invalid(child(p, "secretName"), tls.secret_name, m)
                for m in names.is_dns1123_subdomain(tls.secret_name)
            ]
    if spec.ingress_class_name is not None:
        errs += [
            invalid(child(path, "ingressClassName"), spec.ingress_class_name, m)
            for m in names.is_dns1123_subdomain(spec.ingress_class_name)
        ]
    return errs


def _http_errors(http: HTTPIngressRuleValue, path: str) -> Errors:
    errs: Errors = []
    if not http.paths:
        errs.append(required(child(path, "paths"), ""))
    for i, p in enumerate(http.paths):
        errs += _path_errors(p, index(child(path, "paths"), i))
    return errs


def _path_errors(p: HTTPIngressPath, path: str) -> Errors:
    if p.path_type is None:
        return [required(child(path, "pathType"), "pathType must be specified")]
    errs: Errors = []
    value = p.path or ""
    at = child(path, "path")
    if p.path_type in ("Exact", "Prefix"):
        if not value.startswith("/"):
            errs.append(invalid(at, value, "must be an absolute path"))
        if value:
            errs += [
                invalid(at, value, f"must not contain '{s}'")
                for s in _INVALID_SEQUENCES
                if s in value
            ]
            errs += [
                invalid(at, value, f"cannot end with '{s}'")
                for s in _INVALID_SUFFIXES
                if value.endswith(s)
            ]
    elif p.path_type == "ImplementationSpecific":
        if value and not value.startswith("/"):
            errs.append(invalid(at, value, "must be an absolute path"))
    else:
        errs.append(not_supported(child(path, "pathType"), p.path_type, PATH_TYPES))
    return errs + _backend_errors(p.backend, child(path, "backend"))


def _backend_errors(b: IngressBackend, path: str) -> Errors:
    if b.resource is not None and b.service is not None:
        return [invalid(path, "", "cannot set both resource and service backends")]
    errs: Errors = []
    if b.resource is not None:
        r, p = b.resource, child(path, "resource")
        if not r.kind:
            errs.append(required(child(p, "kind"), ""))
        if not r.name:
            errs.append(required(child(p, "name"), ""))
        return errs
    if b.service is None:
        return [invalid(path, "", "resource or service backend is required")]
    svc, p = b.service, child(path, "service")
    if not svc.name:
        errs.append(required(child(p, "name"), ""))
    else:
        errs += [invalid(child(p, "name"), svc.name, m) for m in names.is_dns1035_label(svc.name)]
    port_name, port_number = svc.port.name or "", svc.port.number or 0
    port = child(p, "port")
    if port_name and port_number:
        errs.append(invalid(path, "", "cannot set both port name & port number"))
    elif port_name:
        errs += [invalid(child(port, "name"), port_name, m) for m in _is_valid_port_name(port_name)]
    elif port_number:
        errs += [
            invalid(child(port, "number"), port_number, m) for m in _is_valid_port_num(port_number)
        ]
    else:
        errs.append(required(path, "port name or number is required"))
    return errs
