"""What OpenShift's Kueue operator makes of its ``Kueue`` resource:

* ``validate_kueue``: the checks msgspec cannot make, and Kueue's own on the result;
* ``operator_configuration``: the Configuration the operator writes for a resource,
  built as ``pkg/configmap/configmap.go`` (``defaultKueueConfigurationTemplate``)
  builds it;
* ``to_kueue_config``: that Configuration read by ``config.load_config`` as Kueue reads
  it, with Kueue's complaints reported at the resource's own field paths;
* ``OpenShiftSettings`` / ``openshift_settings``: what an embedded control plane needs
  besides the Configuration (the managed-namespace label, the label policy, ...).

Pure: no I/O. ``kuota.api.kueue.config`` is imported only when a resource is converted, so
reading manifests does not load the Configuration machinery.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

from kuota.api import errors as e
from kuota.api.errors import FieldError, child, index

if TYPE_CHECKING:
    from kuota.api.kueue.config import KueueConfig

from kuota.api.openshift.kueue_operator import (
    API_VERSION,
    BACKOFF_MESSAGE,
    DEFAULT_GANG_SCHEDULING_POLICY,
    DEFAULT_LABEL_POLICY,
    DEFAULT_LOCAL_QUEUE,
    DEFAULT_PREEMPTION_POLICY,
    FRAMEWORKS,
    KIND,
    MANAGED_NAMESPACE_LABEL,
    OPERATOR_NAMESPACE,
    AdmissionFairSharing,
    GangScheduling,
    Kueue,
    KueueConfiguration,
    RequeuingStrategy,
    Resources,
    is_openshift_kueue,
)

__all__ = [
    "OpenShiftSettings",
    "openshift_settings",
    "operator_configuration",
    "read_openshift_config",
    "to_kueue_config",
    "validate_kueue",
]

# --------------------------------------------------------------------------- checks msgspec cannot make
_REQUEUING = "spec.config.gangScheduling.byWorkload.requeuingStrategy"


def _absent_backoff(s: RequeuingStrategy) -> str | None:
    """The field CEL fails on first in the backoff rule, which reads both backoff
    fields without ``has()``: unset, either is a ``no such key`` evaluation error
    (``||`` absorbs an error only next to a true operand, and neither of the
    others can be true without both fields)."""
    if s.backoff_base_seconds is None:
        return "backoffBaseSeconds"
    if s.backoff_max_seconds is None:
        return "backoffMaxSeconds"
    return None


def _min_properties(obj: msgspec.Struct | None, path: str) -> list[FieldError]:
    if obj is None:
        return []
    n = sum(getattr(obj, f) is not None for f in obj.__struct_fields__)
    if n >= 1:
        return []
    return [e.invalid(path, n, f"{path} in body should have at least 1 properties")]


def validate_kueue(cr: Kueue, gates: Mapping[str, bool] | None = None) -> list[FieldError]:
    """What the API server checks beyond what the struct's decoding and CEL rules check
    (``minProperties``; the backoff rule's evaluation error), then the operator's mapping:
    what Kueue would refuse in the Configuration the operator writes, at the resource's
    own field paths. ``gates`` (a scenario's Kueue gates) play no part: the operator sets
    Kueue's gates itself."""
    c = cr.spec.config
    errs = _min_properties(c.resources, "spec.config.resources")
    g = c.gang_scheduling
    rs = g.by_workload.requeuing_strategy if g and g.by_workload else None
    errs += _min_properties(rs, _REQUEUING)
    if rs is not None and not errs:
        missing = _absent_backoff(rs)
        if missing is not None:
            errs.append(
                e.invalid(
                    _REQUEUING,
                    "object",
                    f"no such key: {missing} evaluating rule: {BACKOFF_MESSAGE}",
                )
            )
    if errs:
        return errs
    _, errs = to_kueue_config(cr)
    return errs


# --------------------------------------------------------------------------- the operator's mapping
# defaultKueueConfigurationTemplate's fixed parts.
_GROUP_KIND_CONCURRENCY = {
    "Job.batch": 5,
    "Pod": 5,
    "Workload.kueue.x-k8s.io": 5,
    "LocalQueue.kueue.x-k8s.io": 1,
    "ClusterQueue.kueue.x-k8s.io": 1,
    "ResourceFlavor.kueue.x-k8s.io": 1,
}
_NONE_TIMEOUT_SECONDS = 365 * 24 * 3600  # gangScheduling None: "a really high timeout"
_DEFAULT_AFS_HALF_LIFE_SECONDS = 30 * 60  # admissionFairSharing Default


def _duration(seconds: int) -> str:
    from kuota.api.kueue.config import format_duration_ns

    return format_duration_ns(seconds * 1_000_000_000)


def _wait_for_pods_ready(g: GangScheduling | None) -> dict[str, Any] | None:
    """buildWaitForPodsReady. ``ByWorkloadDefaults``, ``""`` and absent: none written, so
    Kueue's own v1beta2 defaults apply (on, 30m timeout, not blocking admission)."""
    policy = g.policy if g is not None else ""
    if policy == "ByWorkload":
        assert g is not None
        bw = g.by_workload
        w: dict[str, Any] = {
            "blockAdmission": bw is not None and bw.admission == "Sequential",
            "timeout": "0s",  # a non-pointer Duration: 0s unless set, Kueue defaults it
        }
        if bw is not None:
            if bw.timeout_seconds:
                w["timeout"] = _duration(bw.timeout_seconds)
            if bw.recovery_timeout_seconds is not None:
                w["recoveryTimeout"] = _duration(bw.recovery_timeout_seconds)
            rs = bw.requeuing_strategy
            if rs is not None and (
                rs.retry_limit
                or rs.backoff_base_seconds
                or rs.backoff_max_seconds
                or rs.time_reference
            ):
                out: dict[str, Any] = {}
                if rs.retry_limit:
                    out["backoffLimitCount"] = rs.retry_limit
                if rs.backoff_base_seconds:
                    out["backoffBaseSeconds"] = rs.backoff_base_seconds
                if rs.backoff_max_seconds:
                    out["backoffMaxSeconds"] = rs.backoff_max_seconds
                if rs.time_reference:
                    out["timestamp"] = rs.time_reference
                w["requeuingStrategy"] = out
        return w
    if policy == "None":
        return {"timeout": _duration(_NONE_TIMEOUT_SECONDS), "blockAdmission": False}
    return None  # ByWorkloadDefaults, "" or absent


def _parse_weight(text: str) -> float | None:
    """strconv.ParseFloat(text, 64) for what the CRD admits; None where Go errs (out of range)."""
    try:
        f = float(text)
    except ValueError:
        return None
    return None if math.isinf(f) else f


def _admission_fair_sharing(
    a: AdmissionFairSharing | None, errs: list[FieldError]
) -> dict[str, Any] | None:
    """buildAdmissionFairSharing."""
    if a is None or not a.configuration:
        return None
    if a.configuration != "Custom":
        return {"usageHalfLifeTime": _duration(_DEFAULT_AFS_HALF_LIFE_SECONDS)}
    out: dict[str, Any] = {}
    c = a.custom
    if c is None:  # refused by the CEL rule before this runs
        return out
    if c.usage_half_life_time_seconds > 0:
        out["usageHalfLifeTime"] = _duration(c.usage_half_life_time_seconds)
    if c.usage_sampling_interval_seconds:
        out["usageSamplingInterval"] = _duration(c.usage_sampling_interval_seconds)
    weights: dict[str, float] = {}
    for i, rw in enumerate(c.resource_weights or ()):
        f = _parse_weight(rw.weight)
        if f is None:
            errs.append(
                e.invalid(
                    child(
                        index("spec.config.admissionFairSharing.custom.resourceWeights", i),
                        "weight",
                    ),
                    rw.weight,
                    f'strconv.ParseFloat: parsing "{rw.weight}": value out of range '
                    "(the operator cannot build Kueue's Configuration)",
                )
            )
            continue
        weights[rw.name] = f
    if weights:
        out["resourceWeights"] = weights
    return out


def _resources(r: Resources | None) -> dict[str, Any] | None:
    """buildResources."""
    if r is None or not r.device_class_mappings:
        return None
    mappings = []
    for m in r.device_class_mappings:
        out: dict[str, Any] = {"name": m.name, "deviceClassNames": list(m.device_class_names)}
        sources = []
        for s in m.sources or ():
            counter = s.counter
            src: dict[str, Any] = {
                "name": counter.name if counter else "",
                "driver": counter.driver if counter else "",
            }
            sel = counter.device_selector.cel if counter else None
            if sel is not None and sel.expression:
                src["deviceSelector"] = {"cel": {"expression": sel.expression}}
            sources.append({"counter": src})
        if sources:
            out["sources"] = sources
        mappings.append(out)
    return {"deviceClassMappings": mappings}


def _feature_gates(
    c: KueueConfiguration, dra_extended_resource: bool, dra_partitionable_devices: bool
) -> dict[str, bool] | None:
    """buildFeatureGates."""
    gates: dict[str, bool] = {}
    if dra_extended_resource:
        gates["KueueDRAIntegrationExtendedResource"] = True
    mappings = (c.resources.device_class_mappings if c.resources else None) or ()
    if dra_partitionable_devices and any(m.sources for m in mappings):
        gates["KueueDRAIntegrationPartitionableDevices"] = True
    if "SparkApplication" in c.integrations.frameworks:
        gates["SparkApplicationIntegration"] = True
    if c.integrations.external_frameworks or (
        c.multi_kueue is not None and c.multi_kueue.external_frameworks
    ):
        gates["ShortWorkloadNames"] = True
    return gates or None


def _build(
    cr: Kueue,
    namespace: str,
    gvr_to_kind: Mapping[str, str] | None,
    dra_extended_resource: bool,
    dra_partitionable_devices: bool,
    errs: list[FieldError],
) -> dict[str, Any]:
    c = cr.spec.config
    ints = c.integrations
    integrations: dict[str, Any] = {"frameworks": [FRAMEWORKS.get(f, "") for f in ints.frameworks]}
    if ints.external_frameworks:
        integrations["externalFrameworks"] = [
            f"{x.resource}.{x.version}.{x.group}" for x in ints.external_frameworks
        ]
    if ints.label_keys_to_copy:
        integrations["labelKeysToCopy"] = [x.key for x in ints.label_keys_to_copy]
    d: dict[str, Any] = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "namespace": namespace,
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443", "enableClusterQueueResources": True},
        "webhook": {"port": 9443},
        "controller": {"groupKindConcurrency": dict(_GROUP_KIND_CONCURRENCY)},
        # OpenShift's recommended lease durations (137s, 107s, 26s).
        "leaderElection": {
            "leaderElect": True,
            "leaseDuration": _duration(137),
            "renewDeadline": _duration(107),
            "retryPeriod": _duration(26),
        },
        "clientConnection": {"qps": 50.0, "burst": 100},
        "integrations": integrations,
        "internalCertManagement": {"enable": False},
        "managedJobsNamespaceSelector": {"matchLabels": {MANAGED_NAMESPACE_LABEL: "true"}},
        "manageJobsWithoutQueueName": (
            c.workload_management is not None and c.workload_management.label_policy == "None"
        ),
    }
    w = _wait_for_pods_ready(c.gang_scheduling)
    if w is not None:
        d["waitForPodsReady"] = w
    if c.preemption is not None and c.preemption.preemption_policy == "FairSharing":
        d["fairSharing"] = {
            "preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
        }
    res = _resources(c.resources)
    if res is not None:
        d["resources"] = res
    gates = _feature_gates(c, dra_extended_resource, dra_partitionable_devices)
    if gates is not None:
        d["featureGates"] = gates
    if c.multi_kueue is not None:
        kinds = gvr_to_kind or {}
        mk: dict[str, Any] = {}
        if c.multi_kueue.external_frameworks:
            mk["externalFrameworks"] = [
                {
                    "name": f"{kinds.get(f'{x.group}/{x.version}/{x.resource}', x.resource)}"
                    f".{x.version}.{x.group}"
                }
                for x in c.multi_kueue.external_frameworks
            ]
        d["multiKueue"] = mk
    afs = _admission_fair_sharing(c.admission_fair_sharing, errs)
    if afs is not None:
        d["admissionFairSharing"] = afs
    return d


def operator_configuration(
    cr: Kueue,
    *,
    namespace: str = OPERATOR_NAMESPACE,
    gvr_to_kind: Mapping[str, str] | None = None,
    dra_extended_resource_enabled: bool = False,
    dra_partitionable_devices_enabled: bool = False,
) -> dict[str, Any]:
    """The Kueue Configuration (v1beta2 wire form) the operator writes for ``cr``.

    The keyword arguments stand for what the operator finds in the cluster: the namespace
    it runs in, the kinds of MultiKueue's external frameworks (``group/version/resource``
    -> ``Kind``, from discovery; the resource name is used when missing, as the operator
    does) and whether the DRAExtendedResource / DRAPartitionableDevices Kubernetes
    features are on. The cluster's TLS profile (``tls``) is not modelled. A resource
    weight Go cannot parse is left out here (the operator fails on it instead;
    ``to_kueue_config`` reports it).
    """
    return _build(
        cr,
        namespace,
        gvr_to_kind,
        dra_extended_resource_enabled,
        dra_partitionable_devices_enabled,
        [],
    )


# ------------------------------------------------------------------------------- error paths
_CFG = "spec.config"
_NO_VALUE = object()  # no value to show for the resource's field
_WFPR = {
    "timeout": "timeoutSeconds",
    "recoveryTimeout": "recoveryTimeoutSeconds",
}
_REQUEUE = {
    "timestamp": "timeReference",
    "backoffLimitCount": "retryLimit",
    "backoffBaseSeconds": "backoffBaseSeconds",
    "backoffMaxSeconds": "backoffMaxSeconds",
}
_AFS = {
    "usageHalfLifeTime": "usageHalfLifeTimeSeconds",
    "usageSamplingInterval": "usageSamplingIntervalSeconds",
}


def _cr_path(path: str, cr: Kueue) -> tuple[str, Any]:
    """The resource's field (and its value, or ``_NO_VALUE``) that a Configuration field
    path comes from."""
    c = cr.spec.config
    m = re.match(r"integrations\.(frameworks|externalFrameworks|labelKeysToCopy)\[(\d+)\]", path)
    if m:
        i = int(m.group(2))
        if m.group(1) == "frameworks":
            return index(f"{_CFG}.integrations.frameworks", i), c.integrations.frameworks[i]
        if m.group(1) == "externalFrameworks":
            return index(f"{_CFG}.integrations.externalFrameworks", i), _NO_VALUE
        key_path = child(index(f"{_CFG}.integrations.labelKeysToCopy", i), "key")
        labels = c.integrations.label_keys_to_copy or []
        return key_path, labels[i].key if i < len(labels) else _NO_VALUE
    if path.startswith("integrations"):
        return f"{_CFG}.integrations", _NO_VALUE
    if path.startswith("waitForPodsReady"):
        g = c.gang_scheduling
        if g is None or g.policy != "ByWorkload":
            return f"{_CFG}.gangScheduling.policy" if g else _CFG, _NO_VALUE
        bw = f"{_CFG}.gangScheduling.byWorkload"
        m = re.match(r"waitForPodsReady\.(timeout|recoveryTimeout)$", path)
        if m:
            return child(bw, _WFPR[m.group(1)]), _NO_VALUE
        m = re.match(r"waitForPodsReady\.requeuingStrategy\.(\w+)", path)
        if m and m.group(1) in _REQUEUE:
            return child(f"{bw}.requeuingStrategy", _REQUEUE[m.group(1)]), _NO_VALUE
        return bw, _NO_VALUE
    if path.startswith("fairSharing"):
        return f"{_CFG}.preemption.preemptionPolicy", _NO_VALUE
    if path.startswith("admissionFairSharing"):
        a = c.admission_fair_sharing
        if a is None or a.custom is None:
            return f"{_CFG}.admissionFairSharing.configuration", _NO_VALUE
        custom = f"{_CFG}.admissionFairSharing.custom"
        m = re.match(r"admissionFairSharing\.(usageHalfLifeTime|usageSamplingInterval)$", path)
        if m:
            return child(custom, _AFS[m.group(1)]), _NO_VALUE
        m = re.match(r"admissionFairSharing\.resourceWeights\[(.*)\]$", path)
        if m:
            for i, rw in enumerate(a.custom.resource_weights or ()):
                if rw.name == m.group(1):
                    return child(index(f"{custom}.resourceWeights", i), "weight"), rw.weight
        return custom, _NO_VALUE
    if path.startswith("resources.deviceClassMappings"):
        return f"{_CFG}.{path}", _NO_VALUE  # the same shape on both sides
    m = re.match(r"multiKueue\.externalFrameworks\[(\d+)\]", path)
    if m:
        return index(f"{_CFG}.multiKueue.externalFrameworks", int(m.group(1))), _NO_VALUE
    if path.startswith("multiKueue"):
        return f"{_CFG}.multiKueue", _NO_VALUE
    if path == "manageJobsWithoutQueueName":
        return f"{_CFG}.workloadManagement.labelPolicy", _NO_VALUE
    return _CFG, _NO_VALUE  # what the operator sets on its own (namespace, gates, ...)


def _on_resource(err: FieldError, cr: Kueue) -> FieldError:
    """Kueue's error about the generated Configuration, told at the resource's field."""
    path, value = _cr_path(err.path, cr)
    detail = f"Kueue refuses the Configuration the operator writes from this: {err}"
    if value is not _NO_VALUE and path.startswith(f"{_CFG}.integrations.frameworks["):
        mapped = FRAMEWORKS.get(value)
        if mapped is None:
            detail = (
                f"the operator has no Kueue framework name for {value} (pkg/configmap "
                f'buildFrameworkList writes ""); {detail}'
            )
        else:
            detail = f'the operator writes it as Kueue framework "{mapped}"; {detail}'
    if value is _NO_VALUE:
        return FieldError(path, err.type, detail)
    return FieldError(path, err.type, detail, value)


def to_kueue_config(
    cr: Kueue,
    *,
    namespace: str = OPERATOR_NAMESPACE,
    gvr_to_kind: Mapping[str, str] | None = None,
    dra_extended_resource_enabled: bool = False,
    dra_partitionable_devices_enabled: bool = False,
) -> tuple[KueueConfig | None, list[FieldError]]:
    """Kueue's configuration as the operator would run it for ``cr`` (a decoded,
    schema-valid resource): ``operator_configuration`` read by ``config.load_config``.

    Returns the config, or None and every error, each at the resource's field path it
    comes from (``spec.config.integrations.frameworks[2]``); errors in what the operator
    sets on its own are reported at ``spec.config``.
    """
    from kuota.api.kueue.config import load_config

    errs: list[FieldError] = []
    raw = _build(
        cr,
        namespace,
        gvr_to_kind,
        dra_extended_resource_enabled,
        dra_partitionable_devices_enabled,
        errs,
    )
    if errs:
        return None, errs
    cfg, kerrs = load_config(raw)
    if cfg is None:
        return None, [_on_resource(x, cr) for x in kerrs]
    return cfg, []


# --------------------------------------------------------------------------- for the control plane
@dataclass(frozen=True, slots=True, kw_only=True)
class OpenShiftSettings:
    """What running under OpenShift's Kueue operator means besides Kueue's Configuration."""

    config: KueueConfig
    # Kueue's webhooks and managedJobsNamespaceSelector act only in namespaces with
    # this label set to "true".
    managed_namespace_label: str = MANAGED_NAMESPACE_LABEL
    # "QueueName" (only labelled jobs are managed) or "None" (all jobs in managed
    # namespaces are); "" resolved to the operator's default.
    label_policy: str
    gang_scheduling_policy: str = DEFAULT_GANG_SCHEDULING_POLICY
    preemption_policy: str = DEFAULT_PREEMPTION_POLICY
    # The LocalQueue new unlabelled jobs of a managed namespace are sent to.
    default_local_queue: str = DEFAULT_LOCAL_QUEUE
    management_state: str = "Managed"


def openshift_settings(
    cr: Kueue, **kwargs: Any
) -> tuple[OpenShiftSettings | None, list[FieldError]]:
    """``to_kueue_config`` (same keyword arguments) with the operator's other settings."""
    cfg, errs = to_kueue_config(cr, **kwargs)
    if cfg is None:
        return None, errs
    c = cr.spec.config
    wm, g, p = c.workload_management, c.gang_scheduling, c.preemption
    return (
        OpenShiftSettings(
            config=cfg,
            label_policy=(wm.label_policy if wm else "") or DEFAULT_LABEL_POLICY,
            gang_scheduling_policy=(g.policy if g else "") or DEFAULT_GANG_SCHEDULING_POLICY,
            preemption_policy=(p.preemption_policy if p else "") or DEFAULT_PREEMPTION_POLICY,
            management_state=cr.spec.management_state or "Managed",
        ),
        [],
    )


def read_openshift_config(
    raw: Mapping[str, Any], **kwargs: Any
) -> tuple[OpenShiftSettings | None, list[FieldError]]:
    """A raw ``Kueue`` resource (parsed YAML/JSON) read as the API server and the
    operator read it: schema, CEL rules, metadata, then the mapping."""
    from kuota.api.decode import decode_object

    if not is_openshift_kueue(raw):
        return None, [
            e.not_supported(
                "kind", f"{raw.get('apiVersion')}/{raw.get('kind')}", [f"{API_VERSION}/{KIND}"]
            )
        ]
    doc = decode_object(dict(raw))
    if not doc.ok:
        return None, doc.errors
    return openshift_settings(doc.obj, **kwargs)
