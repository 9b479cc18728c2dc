"""v1beta1 <-> v1beta2 (``configuration_conversion.go``), and a Configuration
written back in either version."""

from __future__ import annotations

from typing import Any

import msgspec

from kuota.api.base import dec_hook, enc_hook
from kuota.api.kueue.config.decoding import canonical_durations
from kuota.api.kueue.config.defaults import (
    LESS_THAN_INITIAL_SHARE,
    LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
)
from kuota.api.kueue.config.wire import (
    API_VERSIONS,
    GROUP,
    KIND,
    V1BETA1,
    V1BETA2,
    WIRE_STRUCTS,
    ConfigurationV1Beta1,
    ConfigurationV1Beta2,
)


# ============================================================================ conversion
def to_builtins(obj: msgspec.Struct) -> dict[str, Any]:
    return msgspec.to_builtins(obj, enc_hook=enc_hook)


def v1beta1_to_v1beta2(src: ConfigurationV1Beta1) -> ConfigurationV1Beta2:
    """``Convert_v1beta1_Configuration_To_v1beta2_Configuration``.

    A disabled (or absent) waitForPodsReady or fairSharing becomes nil; an enabled one
    without a timeout gets v1beta1's 5m and without blockAdmission gets true. podOptions
    and queueVisibility have no v1beta2 counterpart and are dropped, as Kueue drops them.
    """
    d = to_builtins(src)
    d.pop("queueVisibility", None)
    if isinstance(d.get("integrations"), dict):
        d["integrations"].pop("podOptions", None)
    w = d.pop("waitForPodsReady", None)
    if w is not None and w.pop("enable", False):
        w.setdefault("timeout", "5m0s")
        w.setdefault("blockAdmission", True)
        d["waitForPodsReady"] = w
    fs = d.pop("fairSharing", None)
    if fs is not None and fs.pop("enable", False):
        if not fs.get("preemptionStrategies"):
            fs["preemptionStrategies"] = [
                LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
                LESS_THAN_INITIAL_SHARE,
            ]
        d["fairSharing"] = fs
    if d.get("apiVersion"):
        d["apiVersion"] = V1BETA2
    return msgspec.convert(d, ConfigurationV1Beta2, dec_hook=dec_hook)


def v1beta2_to_v1beta1(src: ConfigurationV1Beta2) -> ConfigurationV1Beta1:
    """``Convert_v1beta2_Configuration_To_v1beta1_Configuration``.

    A present waitForPodsReady or fairSharing is ``enable: true``; fields v1beta1 lacks
    (visibilityServer, quotaCheckStrategy, DRA sources, clusterProfile, the incremental
    dispatcher's config, custom labels' sourceKind/trackedValues) are dropped.
    """
    d = to_builtins(src)
    d.pop("visibilityServer", None)
    w = d.get("waitForPodsReady")
    if w is not None:
        w["enable"] = True
        w.setdefault("blockAdmission", False)
    fs = d.get("fairSharing")
    if fs is not None:
        fs["enable"] = True
    res = d.get("resources")
    if res is not None:
        res.pop("quotaCheckStrategy", None)
        for m in res.get("deviceClassMappings") or ():
            m.pop("sources", None)
    mk = d.get("multiKueue")
    if mk is not None:
        mk.pop("clusterProfile", None)
        mk.pop("incrementalDispatcherConfig", None)
    for label in (d.get("metrics") or {}).get("customLabels") or ():
        label.pop("sourceKind", None)
        label.pop("trackedValues", None)
    if d.get("apiVersion"):
        d["apiVersion"] = V1BETA1
    return msgspec.convert(d, ConfigurationV1Beta1, dec_hook=dec_hook)


def to_wire(cfg: ConfigurationV1Beta2 | ConfigurationV1Beta1, version: str) -> dict[str, Any]:
    """``cfg`` written as a Configuration in ``version`` (``v1beta1``/``v1beta2`` or the
    full apiVersion), converting as Kueue converts and printing durations as Go does."""
    api_version = version if "/" in version else f"{GROUP}/{version}"
    if api_version not in WIRE_STRUCTS:
        raise ValueError(
            f"unsupported Configuration version {version!r}; use one of {API_VERSIONS}"
        )
    out: ConfigurationV1Beta2 | ConfigurationV1Beta1
    if api_version == V1BETA1:
        out = cfg if isinstance(cfg, ConfigurationV1Beta1) else v1beta2_to_v1beta1(cfg)
    else:
        out = cfg if isinstance(cfg, ConfigurationV1Beta2) else v1beta1_to_v1beta2(cfg)
    out = msgspec.convert(to_builtins(out), type(out), dec_hook=dec_hook)  # a copy to rewrite
    canonical_durations(out)
    d = to_builtins(out)
    d.pop("apiVersion", None)
    d.pop("kind", None)
    return {"apiVersion": api_version, "kind": KIND, **d}
