"""``pkg/config/validation.go``: every rule Kueue checks a v1beta2 Configuration with,
in Kueue's order (``validate``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kuota.api import errors as e
from kuota.api.cel import CelError, compile_expr
from kuota.api.errors import FieldError, child, index, key
from kuota.api.features import (
    FEATURE_GATE_DEFAULTS,
)
from kuota.api.kueue.config.conversion import to_builtins
from kuota.api.kueue.config.decoding import duration_errors, optional_duration_ns
from kuota.api.kueue.config.defaults import (
    DISPATCHER_INCREMENTAL,
    LESS_THAN_INITIAL_SHARE,
    LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
    NAMESPACE_NAME_LABEL,
)
from kuota.api.kueue.config.durations import format_duration_ns
from kuota.api.kueue.config.frameworks import BUILTIN_FRAMEWORKS, parse_kind_arg
from kuota.api.kueue.config.server_checks import (
    validate_custom_labels,
    validate_quota_check_strategy,
    validate_tls,
    validate_visibility_server,
)
from kuota.api.kueue.config.wire import (
    ClusterProfileAccessProvider,
    ConfigurationV1Beta2,
    DeviceClassMappingV1Beta2,
    DeviceClassSourceConfig,
    DeviceSelector,
    ExecConfig,
)
from kuota.api.meta import LabelSelector, selector_matches
from kuota.api.names import (
    is_c_identifier,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_key,
    is_label_value,
)


# ---------------------------------------------------------------------------- label selectors
def _validate_label_selector(sel: LabelSelector | None, path: str) -> list[FieldError]:
    """metav1validation.ValidateLabelSelector with default options."""
    if sel is None:
        return []
    errs: list[FieldError] = []
    ml = child(path, "matchLabels")
    for k, v in sorted((sel.match_labels or {}).items()):
        errs += [e.invalid(ml, k, m) for m in is_label_key(k)]
        errs += [e.invalid(ml, v, m) for m in is_label_value(v, "bytes")]
    for i, req in enumerate(sel.match_expressions or ()):
        rp = index(child(path, "matchExpressions"), i)
        if req.operator in ("In", "NotIn"):
            if not req.values:
                errs.append(
                    e.required(
                        child(rp, "values"), "must be specified when `operator` is 'In' or 'NotIn'"
                    )
                )
        elif req.operator in ("Exists", "DoesNotExist"):
            if req.values:
                errs.append(
                    e.forbidden(
                        child(rp, "values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            errs.append(
                e.invalid(child(rp, "operator"), req.operator, "not a valid selector operator")
            )
        errs += [e.invalid(child(rp, "key"), req.key, m) for m in is_label_key(req.key)]
        for j, v in enumerate(req.values or ()):
            errs += [
                e.invalid(index(child(rp, "values"), j), v, m) for m in is_label_value(v, "bytes")
            ]
    return errs


def _selector_data(sel: LabelSelector | None) -> Any:
    return None if sel is None else to_builtins(sel)


# ============================================================================ frameworks

_NEGATIVE = "must be greater than or equal to 0"  # apimachinery IsNegativeErrorMsg
_VALID_STRATEGY_SETS = (
    (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,),
    (LESS_THAN_INITIAL_SHARE,),
    (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE),
)

_Gates = Mapping[str, bool]


def validate(cfg: ConfigurationV1Beta2, gates: _Gates | None = None) -> list[FieldError]:
    """``pkg/config/validation.go`` Validate: every rule, in Kueue's order.

    ``cfg`` is a v1beta2 Configuration (normally defaulted, as Kueue validates it);
    ``gates`` the feature gates in force (default: Kueue's defaults).
    """
    g = {**FEATURE_GATE_DEFAULTS, **(gates or {})}
    errs = duration_errors(cfg)
    if errs:
        return errs
    for rule in _RULES:
        errs += rule(cfg, g)
    return errs


def _validate_wait_for_pods_ready(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    w = c.wait_for_pods_ready
    if w is None or g["DisableWaitForPodsReady"]:
        return []
    errs: list[FieldError] = []
    p = "waitForPodsReady"
    timeout = optional_duration_ns(w.timeout)
    if timeout == 0:
        errs.append(e.required(child(p, "timeout"), "must be specified"))
    if timeout < 0:
        errs.append(e.invalid(child(p, "timeout"), format_duration_ns(timeout), _NEGATIVE))
    if w.recovery_timeout is not None and optional_duration_ns(w.recovery_timeout) < 0:
        errs.append(
            e.invalid(
                child(p, "recoveryTimeout"),
                format_duration_ns(optional_duration_ns(w.recovery_timeout)),
                _NEGATIVE,
            )
        )
    s = w.requeuing_strategy
    if s is not None:
        rp = child(p, "requeuingStrategy")
        if s.timestamp is not None and s.timestamp not in ("Creation", "Eviction"):
            errs.append(
                e.not_supported(child(rp, "timestamp"), s.timestamp, ["Creation", "Eviction"])
            )
        for attr, wire in (
            ("backoff_limit_count", "backoffLimitCount"),
            ("backoff_base_seconds", "backoffBaseSeconds"),
            ("backoff_max_seconds", "backoffMaxSeconds"),
        ):
            v = getattr(s, attr)
            if v is not None and v < 0:
                errs.append(e.invalid(child(rp, wire), v, _NEGATIVE))
    return errs


def _validate_integrations(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    if c.integrations is None:
        return [e.required("integrations", "cannot be empty")]
    if c.integrations.frameworks is None:
        return [e.required("integrations.frameworks", "cannot be empty")]
    errs: list[FieldError] = []
    managed: set[str] = set()
    available = sorted(BUILTIN_FRAMEWORKS)
    for i, name in enumerate(c.integrations.frameworks):
        p = index("integrations.frameworks", i)
        fw = BUILTIN_FRAMEWORKS.get(name)
        if fw is None:
            errs.append(e.not_supported(p, name, available))
        elif fw.gvk in managed:
            errs.append(e.duplicate(p, name))
        else:
            managed.add(fw.gvk)
    for i, name in enumerate(c.integrations.external_frameworks or ()):
        p = index("integrations.externalFrameworks", i)
        gvk = parse_kind_arg(name)
        if gvk is None:
            errs.append(e.invalid(p, name, "must be format, 'Kind.version.group.com'"))
        elif gvk in managed:
            errs.append(e.duplicate(p, name))
        else:
            managed.add(gvk)
    # validatePodIntegrationOptions
    if "pod" in c.integrations.frameworks:
        if c.managed_jobs_namespace_selector is not None:
            errs += _namespace_selector_errors(c)
        else:
            errs.append(
                e.required(
                    "managedJobsNamespaceSelector",
                    "cannot be empty when pod integration is enabled",
                )
            )
    return errs


def _namespace_selector_errors(c: ConfigurationV1Beta2) -> list[FieldError]:
    """The selector must be valid and exempt kube-system and Kueue's own namespace."""
    p = "managedJobsNamespaceSelector"
    sel = c.managed_jobs_namespace_selector
    errs = _validate_label_selector(sel, p)
    if errs:
        return errs  # LabelSelectorAsSelector fails on what validation rejects
    prohibited = ["kube-system"]
    if c.namespace:
        prohibited.append(c.namespace)
    for ns in prohibited:
        if selector_matches(sel, {NAMESPACE_NAME_LABEL: ns}):
            errs.append(e.invalid(p, _selector_data(sel), f'should not match the "{ns}" namespace'))
    return errs


def _validate_multikueue(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    mk = c.multi_kueue
    if mk is None:
        return []
    errs: list[FieldError] = []
    p = "multiKueue"
    for attr, wire in (("gc_interval", "gcInterval"), ("worker_lost_timeout", "workerLostTimeout")):
        v = getattr(mk, attr)
        if v is not None and optional_duration_ns(v) < 0:
            errs.append(
                e.invalid(child(p, wire), format_duration_ns(optional_duration_ns(v)), _NEGATIVE)
            )
    if mk.origin is not None:
        msgs = is_label_value(mk.origin, "bytes")
        if msgs:
            errs.append(e.invalid(child(p, "origin"), mk.origin, ",".join(msgs)))
    if mk.external_frameworks:
        enabled = set((c.integrations.frameworks or []) if c.integrations else [])
        builtin = {
            fw.gvk for name, fw in BUILTIN_FRAMEWORKS.items() if fw.multikueue and name in enabled
        }
        seen: set[str] = set()
        for i, f in enumerate(mk.external_frameworks):
            fp = child(index(child(p, "externalFrameworks"), i), "name")
            gvk = parse_kind_arg(f.name)
            if gvk is None:
                errs.append(e.invalid(fp, f.name, "must be in 'kind.version.group' format"))
                continue
            if gvk in seen:
                errs.append(e.duplicate(fp, f.name))
            else:
                seen.add(gvk)
            if gvk in builtin:
                errs.append(e.invalid(fp, f.name, "conflicts with a built-in MultiKueue adapter"))
    cp = mk.cluster_profile
    if cp is not None:
        cpp = child(p, "clusterProfile")
        if cp.access_providers and cp.credentials_providers:
            errs.append(
                e.forbidden(
                    child(cpp, "credentialsProviders"),
                    "must not be specified when accessProviders is specified",
                )
            )
        if cp.access_providers:
            errs += _validate_access_providers(cp.access_providers, child(cpp, "accessProviders"))
        else:
            errs += _validate_access_providers(
                cp.credentials_providers or [], child(cpp, "credentialsProviders")
            )
    idc = mk.incremental_dispatcher_config
    if idc is not None:
        ip = child(p, "incrementalDispatcherConfig")
        if mk.dispatcher_name != DISPATCHER_INCREMENTAL:
            errs.append(
                e.invalid(
                    ip,
                    to_builtins(idc),
                    "incrementalDispatcherConfig is only valid when dispatcherName is set to the "
                    "incremental dispatcher",
                )
            )
        if idc.step_size is not None and idc.step_size < 1:
            errs.append(
                e.invalid(
                    child(ip, "stepSize"), idc.step_size, "must be greater than or equal to 1"
                )
            )
    return errs


def _validate_access_providers(
    providers: list[ClusterProfileAccessProvider], path: str
) -> list[FieldError]:
    # Kueue reports these without the list index (``accessProviders.name``).
    errs: list[FieldError] = []
    ep = child(path, "execConfig")
    for prov in providers:
        ex = prov.exec_config or ExecConfig()
        if not prov.name:
            errs.append(e.required(child(path, "name"), "must be specified"))
        if not ex.command:
            errs.append(e.required(child(ep, "command"), "must be specified"))
        if not ex.api_version:
            errs.append(e.required(child(ep, "apiVersion"), "must be specified"))
        for env in ex.env or ():
            if not env.name:
                errs.append(e.required(child(child(ep, "env"), "name"), "must be specified"))
        mode = ex.interactive_mode
        if mode == "":
            errs.append(e.required(child(ep, "interactiveMode"), "must be specified"))
        elif mode not in ("Never", "IfAvailable", "Always"):
            errs.append(
                e.not_supported(
                    child(ep, "interactiveMode"), mode, ["Never", "IfAvailable", "Always"]
                )
            )
    return errs


def _validate_fair_sharing(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    fs = c.fair_sharing
    if fs is None:
        return []
    p = "fairSharing.preemptionStrategies"
    if not fs.preemption_strategies:
        return [e.required(p, "must be specified")]
    if tuple(fs.preemption_strategies) not in _VALID_STRATEGY_SETS:
        return [
            e.not_supported(
                p, fs.preemption_strategies, [",".join(s) for s in _VALID_STRATEGY_SETS]
            )
        ]
    return []


def _validate_admission_fair_sharing(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    afs = c.admission_fair_sharing
    if afs is None:
        return []
    errs: list[FieldError] = []
    half_life = optional_duration_ns(afs.usage_half_life_time)
    if half_life < 0:
        errs.append(
            e.invalid(
                "admissionFairSharing.usageHalfLifeTime", format_duration_ns(half_life), _NEGATIVE
            )
        )
    if optional_duration_ns(afs.usage_sampling_interval) <= 0:
        # Kueue shows usageHalfLifeTime as the bad value here; the detail is what matters.
        errs.append(
            e.invalid(
                "admissionFairSharing.usageSamplingInterval",
                format_duration_ns(optional_duration_ns(afs.usage_sampling_interval)),
                "must be greater than 0",
            )
        )
    for name, weight in sorted((afs.resource_weights or {}).items()):
        if weight < 0:
            errs.append(
                e.invalid(key("admissionFairSharing.resourceWeights", name), weight, _NEGATIVE)
            )
    return errs


def _validate_internal_cert_management(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    icm = c.internal_cert_management
    if icm is None or not icm.enable:
        return []
    errs: list[FieldError] = []
    if icm.webhook_service_name is not None:
        msgs = is_dns1035_label(icm.webhook_service_name)
        if msgs:
            errs.append(
                e.invalid(
                    "internalCertManagement.webhookServiceName",
                    icm.webhook_service_name,
                    ",".join(msgs),
                )
            )
    if icm.webhook_secret_name is not None:
        msgs = is_dns1123_subdomain(icm.webhook_secret_name)
        if msgs:
            errs.append(
                e.invalid(
                    "internalCertManagement.webhookSecretName",
                    icm.webhook_secret_name,
                    ",".join(msgs),
                )
            )
    return errs


def _validate_resource_transformations(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    if c.resources is None:
        return []
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, t in enumerate(c.resources.transformations or ()):
        p = index("resources.transformations", i)
        if (t.strategy or "") not in ("Retain", "Replace"):
            errs.append(e.not_supported(child(p, "strategy"), t.strategy, ["Retain", "Replace"]))
        if t.input in seen:
            errs.append(e.duplicate(child(p, "input"), t.input))
        else:
            seen.add(t.input)
    return errs


def _validate_device_class_mappings(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    if c.resources is None or not c.resources.device_class_mappings:
        return []
    mappings = c.resources.device_class_mappings
    base = "resources.deviceClassMappings"
    errs: list[FieldError] = []
    if len(mappings) > 16:
        errs.append(e.too_many(base, len(mappings), 16))
    seen_names: set[str] = set()
    class_to_resource: dict[str, str] = {}
    class_counters: dict[str, set[str]] = {}
    for i, m in enumerate(mappings):
        mp = index(base, i)
        names = m.device_class_names or []
        msgs = is_label_key(m.name)
        if msgs:
            errs.append(e.invalid(child(mp, "name"), m.name, "; ".join(msgs)))
        if len(m.name) > 253:
            errs.append(e.invalid(child(mp, "name"), m.name, "must not exceed 253 characters"))
        if m.name in seen_names:
            errs.append(e.duplicate(child(mp, "name"), m.name))
        else:
            seen_names.add(m.name)
        if not names:
            errs.append(
                e.required(
                    child(mp, "deviceClassNames"), "at least one device class name is required"
                )
            )
        if len(names) > 8:
            errs.append(e.too_many(child(mp, "deviceClassNames"), len(names), 8))
        counter = _counter_name(m)
        seen_classes: set[str] = set()
        for j, dc in enumerate(names):
            dp = index(child(mp, "deviceClassNames"), j)
            msgs = is_label_key(dc)
            if msgs:
                errs.append(e.invalid(dp, dc, "; ".join(msgs)))
            if len(dc) > 253:
                errs.append(e.invalid(dp, dc, "must not exceed 253 characters"))
            if dc in seen_classes:
                errs.append(e.duplicate(dp, dc))
            else:
                seen_classes.add(dc)
            if dc in class_to_resource:
                existing = class_to_resource[dc]
                if existing != m.name:
                    # One DeviceClass may back several mappings only when each tracks a
                    # different counter of it (e.g. gpu memory and gpu compute).
                    counters = class_counters[dc]
                    if not counter or not counters:
                        errs.append(
                            e.invalid(dp, dc, f"device class already mapped to resource {existing}")
                        )
                    elif counter in counters:
                        errs.append(
                            e.invalid(
                                dp,
                                dc,
                                f'device class already has a counter source for counter "{counter}"',
                            )
                        )
                    else:
                        counters.add(counter)
            else:
                class_to_resource[dc] = m.name
                class_counters[dc] = {counter} if counter else set()
        if m.sources:
            errs += _validate_sources(m.sources, child(mp, "sources"), g)
    return errs


def _counter_name(m: DeviceClassMappingV1Beta2) -> str:
    if m.sources and m.sources[0].counter is not None:
        return m.sources[0].counter.name
    return ""


def _validate_sources(
    sources: list[DeviceClassSourceConfig], path: str, g: _Gates
) -> list[FieldError]:
    errs: list[FieldError] = []
    counters, has_capacity = 0, False
    for i, s in enumerate(sources):
        sp = index(path, i)
        if s.counter is None and s.capacity is None:
            errs.append(e.required(sp, "exactly one source type must be set per entry"))
            continue
        if s.counter is not None and s.capacity is not None:
            errs.append(
                e.invalid(sp, "counter+capacity", "exactly one source type must be set per entry")
            )
            continue
        if s.counter is not None:
            counters += 1
            cp = child(sp, "counter")
            if not g["KueueDRAIntegrationPartitionableDevices"]:
                errs.append(
                    e.invalid(
                        cp,
                        True,
                        "counter sources require KueueDRAIntegrationPartitionableDevices to be enabled",
                    )
                )
                continue
            if not s.counter.name:
                errs.append(e.required(child(cp, "name")))
            else:
                msgs = is_dns1123_label(s.counter.name)
                if msgs:
                    errs.append(e.invalid(child(cp, "name"), s.counter.name, ",".join(msgs)))
            errs += _validate_source_driver(s.counter.driver, s.counter.device_selector, cp)
        if s.capacity is not None:
            has_capacity = True
            cp = child(sp, "capacity")
            if not g["KueueDRAIntegrationConsumableCapacity"]:
                errs.append(
                    e.invalid(
                        cp,
                        True,
                        "capacity sources require KueueDRAIntegrationConsumableCapacity to be enabled",
                    )
                )
                continue
            errs += _validate_qualified_name(s.capacity.name, child(cp, "name"))
            errs += _validate_source_driver(s.capacity.driver, s.capacity.device_selector, cp)
    if counters and has_capacity:
        errs.append(
            e.invalid(
                path, len(sources), "cannot mix counter and capacity sources in the same mapping"
            )
        )
    return errs


def _validate_source_driver(
    driver: str, selector: DeviceSelector | None, path: str
) -> list[FieldError]:
    errs: list[FieldError] = []
    dp = child(path, "driver")
    if not driver:
        errs.append(e.required(dp))
    elif len(driver) > 63:  # resourcev1.DriverNameMaxLength
        errs.append(e.invalid(dp, driver, "must not exceed 63 characters"))
    else:
        msgs = is_dns1123_subdomain(driver)
        if msgs:
            errs.append(e.invalid(dp, driver, ",".join(msgs)))
    sp = child(path, "deviceSelector.cel.expression")
    if selector is None or selector.cel is None or not selector.cel.expression:
        errs.append(e.required(sp))
    else:
        # Compiled in the DRA device environment (its one variable, ``device``).
        try:
            compile_expr(selector.cel.expression, ("device",))
        except CelError as err:
            errs.append(e.invalid(sp, selector.cel.expression, f"CEL compilation failed: {err}"))
    return errs


def _validate_qualified_name(name: str, path: str) -> list[FieldError]:
    """Kubernetes' DRA validateQualifiedName (``domain/cIdentifier`` or ``cIdentifier``)."""
    parts = name.split("/")
    if len(parts) == 1:
        return _validate_c_identifier(parts[0], path)
    if len(parts) != 2:
        return []  # Kubernetes' own TODO: names with several slashes pass
    errs: list[FieldError] = []
    domain, ident = parts
    if not domain:
        errs.append(e.invalid(path, "", "the domain must not be empty"))
    else:
        if len(domain) > 63:  # DeviceMaxDomainLength
            errs.append(e.too_long(path, 63))
        errs += [e.invalid(path, domain, m) for m in is_dns1123_subdomain(domain.lower())]
    if not ident:
        errs.append(e.invalid(path, "", "the name must not be empty"))
    else:
        errs += _validate_c_identifier(ident, path)
    return errs


def _validate_c_identifier(ident: str, path: str) -> list[FieldError]:
    errs = [e.too_long(path, 32)] if len(ident) > 32 else []  # DeviceMaxIDLength
    return errs + [e.invalid(path, ident, m) for m in is_c_identifier(ident)]


def _validate_managed_jobs_namespace_selector(
    c: ConfigurationV1Beta2, g: _Gates
) -> list[FieldError]:
    return _namespace_selector_errors(c)


def _validate_object_retention(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    rp = c.object_retention_policies
    if rp is None or rp.workloads is None:
        return []
    errs: list[FieldError] = []
    base = "objectRetentionPolicies.workloads"
    for attr, wire in (
        ("after_finished", "afterFinished"),
        ("after_deactivated_by_kueue", "afterDeactivatedByKueue"),
    ):
        v = getattr(rp.workloads, attr)
        if v is not None and optional_duration_ns(v) < 0:
            errs.append(
                e.invalid(child(base, wire), format_duration_ns(optional_duration_ns(v)), _NEGATIVE)
            )
    return errs


_Rule = Callable[[ConfigurationV1Beta2, _Gates], list[FieldError]]
_RULES: tuple[_Rule, ...] = (
    _validate_wait_for_pods_ready,
    _validate_integrations,
    _validate_multikueue,
    _validate_fair_sharing,
    _validate_admission_fair_sharing,
    _validate_internal_cert_management,
    _validate_resource_transformations,
    _validate_device_class_mappings,
    _validate_managed_jobs_namespace_selector,
    _validate_object_retention,
    validate_tls,
    validate_visibility_server,
    validate_custom_labels,
    validate_quota_check_strategy,
)
