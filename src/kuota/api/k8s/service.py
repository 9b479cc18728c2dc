"""A minimal core/v1 Service: what the headless Services of a LeaderWorkerSet
carry (§5.2 of integrations.md) and what a world's own Services commonly say.

kuota routes no traffic: a Service is stored, listed and garbage-collected
with its owner, never interpreted. Fields of ``k8s.io/api`` ServiceSpec that
kuota does not declare are pruned with a warning by the decoder.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Annotated, Any, Final

import msgspec

from kuota.api.base import LIST_ATOMIC, MAP_ATOMIC, Object, list_map
from kuota.api.base import preserve_unknown as _pu
from kuota.api.errors import FieldError, index, invalid, not_supported, required
from kuota.api.meta import ObjectMeta

__all__ = [
    "API_VERSION",
    "KIND",
    "Service",
    "ServicePort",
    "ServiceSpec",
    "ServiceStatus",
    "validate_service",
]

API_VERSION: Final = "v1"
KIND: Final = "Service"
SERVICE_TYPES: Final = ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")
PROTOCOLS: Final = ("TCP", "UDP", "SCTP")

StrList = Annotated[list[str], LIST_ATOMIC]


class ServicePort(Object):
    port: int
    name: str | None = None
    protocol: str = "TCP"  # API default; part of the list-map key
    app_protocol: str | None = None
    target_port: int | str | None = None
    node_port: int | None = None


class ServiceSpec(Object):
    # "None" makes the Service headless (DNS records per pod, no virtual IP).
    cluster_ip: str | None = msgspec.field(default=None, name="clusterIP")
    cluster_ips: StrList | None = msgspec.field(default=None, name="clusterIPs")
    selector: Annotated[dict[str, str], MAP_ATOMIC] | None = None
    publish_not_ready_addresses: bool | None = None
    ports: Annotated[list[ServicePort], list_map("port", "protocol")] | None = None
    type: str = "ClusterIP"  # API default; checked in code, as in Go
    session_affinity: str | None = None
    external_name: str | None = None
    ip_families: StrList | None = None
    ip_family_policy: str | None = None
    internal_traffic_policy: str | None = None


class ServiceStatus(Object):
    load_balancer: Annotated[dict[str, Any], _pu()] | None = None
    conditions: Annotated[list[Any], _pu()] | None = None


class Service(Object):
    api_version: str = API_VERSION
    kind: str = KIND
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ServiceSpec = msgspec.field(default_factory=ServiceSpec)
    status: ServiceStatus | None = None


def validate_service(svc: Service) -> list[FieldError]:
    """The parts of ``ValidateService`` that concern what kuota declares:
    type, ports, a headless Service's type. (The name, a DNS-1035 label, is
    checked with the metadata.)"""
    spec = svc.spec
    errs: list[FieldError] = []
    if spec.type not in SERVICE_TYPES:
        errs.append(not_supported("spec.type", spec.type, SERVICE_TYPES))
    if spec.type == "ExternalName":
        if not spec.external_name:
            errs.append(required("spec.externalName", ""))
    elif not spec.ports and spec.cluster_ip != "None":
        errs.append(required("spec.ports", ""))
    if spec.cluster_ip == "None" and spec.type != "ClusterIP":
        errs.append(
            invalid(
                "spec.clusterIPs[0]", "None", "may only be set to 'None' for ClusterIP services"
            )
        )
    for i, p in enumerate(spec.ports or ()):
        path = index("spec.ports", i)
        if not 1 <= p.port <= 65535:
            errs.append(invalid(f"{path}.port", p.port, "must be between 1 and 65535, inclusive"))
        if p.protocol not in PROTOCOLS:
            errs.append(not_supported(f"{path}.protocol", p.protocol, PROTOCOLS))
        if len(spec.ports or ()) > 1 and not p.name:
            errs.append(required(f"{path}.name", ""))
    return errs
