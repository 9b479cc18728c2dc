"""APIService validation (kube-aggregator's
``pkg/apis/apiregistration/validation``): the name is ``<version>.<group>``,
the group a DNS subdomain and the version a DNS label, priorities in range, a
service's port valid, and a caBundle never beside insecureSkipTLSVerify."""

from __future__ import annotations

from kuota.api import names
from kuota.api.errors import invalid, required
from kuota.api.k8s.apiregistration import APIService
from kuota.api.k8s.validation.objectmeta import Errors, name_errors, validate_object_meta


def _name_rule(name: str) -> list[str]:
    # (a path segment: the aggregator's name is "<version>.<group>")
    return [f"may not contain '{c}'" for c in "/%" if c in name]


def validate_apiservice(api: APIService) -> Errors:
    errs = validate_object_meta(api.metadata, False, _name_rule)
    spec = api.spec
    if spec is None:
        return [*errs, required("spec.groupPriorityMinimum"), required("spec.versionPriority")]
    version, group = spec.version or "", spec.group or ""
    expected = f"{version}.{group}" if group else version
    name = api.metadata.name or ""
    if name and name != expected:
        errs.append(invalid("metadata.name", name, f'must be "{expected}"'))
    if group:
        errs += name_errors(names.is_dns1123_subdomain, group, "spec.group")
    if not version:
        errs.append(required("spec.version"))
    else:
        errs += name_errors(names.is_dns1035_label, version, "spec.version")
    if not 0 < spec.group_priority_minimum <= 20000:
        errs.append(
            invalid(
                "spec.groupPriorityMinimum",
                spec.group_priority_minimum,
                "must be positive and less than 20000",
            )
        )
    if not 0 < spec.version_priority <= 1000:
        errs.append(
            invalid(
                "spec.versionPriority",
                spec.version_priority,
                "must be positive and less than 1000",
            )
        )
    if spec.service is None:
        if spec.ca_bundle:
            errs.append(invalid("spec.caBundle", "", "local APIServices may not have a caBundle"))
        if spec.insecure_skip_tls_verify:
            errs.append(
                invalid(
                    "spec.insecureSkipTLSVerify",
                    True,
                    "local APIServices may not have insecureSkipTLSVerify",
                )
            )
        return errs
    svc = spec.service
    if not svc.namespace:
        errs.append(required("spec.service.namespace"))
    if not svc.name:
        errs.append(required("spec.service.name"))
    if svc.port is not None and not 0 < svc.port <= 65535:
        errs.append(invalid("spec.service.port", svc.port, "port is not valid: must be 1-65535"))
    if spec.insecure_skip_tls_verify and spec.ca_bundle:
        errs.append(
            invalid(
                "spec.insecureSkipTLSVerify",
                True,
                "may not be true if caBundle is present",
            )
        )
    return errs
