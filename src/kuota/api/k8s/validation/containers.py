"""Containers and init containers: names, images, sidecars, ports and host-port
conflicts (``pkg/apis/core/validation``)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from kuota.api import names
from kuota.api.errors import (
    child,
    duplicate,
    forbidden,
    index,
    invalid,
    not_supported,
    required,
)
from kuota.api.k8s.corev1 import Container, ContainerPort
from kuota.api.k8s.validation.objectmeta import Errors, inclusive_range
from kuota.api.k8s.validation.resource_requirements import validate_resource_requirements


# ------------------------------------------------------------------ containers
def _is_valid_port_name(port: str) -> list[str]:
    errs: list[str] = []
    if len(port) > 15:
        errs.append("must be no more than 15 characters")
    if not re.fullmatch(r"[-a-z0-9]+", port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search(r"[a-z]", port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def _is_valid_port_num(port: int) -> list[str]:
    return [] if 1 <= port <= 65535 else [inclusive_range(1, 65535)]


def _validate_container_ports(ports: list[ContainerPort] | None, path: str) -> Errors:
    errs: Errors = []
    seen: set[str] = set()
    for i, port in enumerate(ports or []):
        p = index(path, i)
        if port.name:
            reasons = _is_valid_port_name(port.name)
            if reasons:
                errs += [invalid(child(p, "name"), port.name, r) for r in reasons]
            elif port.name in seen:
                errs.append(duplicate(child(p, "name"), port.name))
            else:
                seen.add(port.name)
        if port.container_port == 0:
            errs.append(required(child(p, "containerPort"), ""))
        else:
            errs += [
                invalid(child(p, "containerPort"), port.container_port, r)
                for r in _is_valid_port_num(port.container_port)
            ]
        if port.host_port:
            errs += [
                invalid(child(p, "hostPort"), port.host_port, r)
                for r in _is_valid_port_num(port.host_port)
            ]
    return errs


def _check_host_port_conflicts(containers: Iterable[Container], path: str) -> Errors:
    errs: Errors = []
    seen: set[str] = set()
    for ci, ctr in enumerate(containers):
        for pi, port in enumerate(ctr.ports or []):
            if not port.host_port:
                continue
            ident = f"{port.protocol}/{port.host_ip or ''}/{port.host_port}"
            if ident in seen:
                hp = child(index(child(index(path, ci), "ports"), pi), "hostPort")
                errs.append(duplicate(hp, ident))
            else:
                seen.add(ident)
    return errs


_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")


def _validate_container_common(ctr: Container, path: str) -> Errors:
    errs: Errors = []
    if not ctr.name:
        errs.append(required(child(path, "name"), ""))
    else:
        errs += [
            invalid(child(path, "name"), ctr.name, m) for m in names.is_dns1123_label(ctr.name)
        ]
    if not ctr.image:
        errs.append(required(child(path, "image"), ""))
    tmp = ctr.termination_message_policy
    if tmp and tmp not in _TERMINATION_MESSAGE_POLICIES:
        errs.append(
            not_supported(
                child(path, "terminationMessagePolicy"), tmp, _TERMINATION_MESSAGE_POLICIES
            )
        )
    errs += _validate_container_ports(ctr.ports, child(path, "ports"))
    if ctr.image_pull_policy and ctr.image_pull_policy not in _PULL_POLICIES:
        errs.append(
            not_supported(child(path, "imagePullPolicy"), ctr.image_pull_policy, _PULL_POLICIES)
        )
    errs += validate_resource_requirements(ctr.resources, child(path, "resources"))
    return errs


def validate_containers(containers: list[Container], path: str) -> Errors:
    if not containers:
        return [required(path, "")]
    errs: Errors = []
    seen: set[str] = set()
    for i, ctr in enumerate(containers):
        p = index(path, i)
        errs += _validate_container_common(ctr, p)
        if ctr.name in seen:
            errs.append(duplicate(child(p, "name"), ctr.name))
        else:
            seen.add(ctr.name)
        if ctr.restart_policy is not None:
            errs.append(
                forbidden(child(p, "restartPolicy"), "may not be set for non-init containers")
            )
    errs += _check_host_port_conflicts(containers, path)
    return errs


def validate_init_containers(
    init_containers: list[Container] | None, containers: list[Container], path: str
) -> Errors:
    errs: Errors = []
    seen = {c.name for c in containers}
    for i, ctr in enumerate(init_containers or []):
        p = index(path, i)
        errs += _validate_container_common(ctr, p)
        sidecar = ctr.restart_policy == "Always"
        if ctr.restart_policy is not None and not sidecar:
            errs.append(not_supported(child(p, "restartPolicy"), ctr.restart_policy, ["Always"]))
        if ctr.name in seen:
            errs.append(duplicate(child(p, "name"), ctr.name))
        elif ctr.name:
            seen.add(ctr.name)
        # Init containers run one by one, so only a container's own ports can
        # conflict; Kubernetes reports them at index 0 of the list (sic).
        errs += _check_host_port_conflicts([ctr], path)
        if not sidecar:
            for field_name, value in (
                ("lifecycle", ctr.lifecycle),
                ("livenessProbe", ctr.liveness_probe),
                ("readinessProbe", ctr.readiness_probe),
                ("startupProbe", ctr.startup_probe),
            ):
                if value is not None:
                    errs.append(
                        forbidden(
                            child(p, field_name),
                            "may not be set for init containers without restartPolicy=Always",
                        )
                    )
    return errs
