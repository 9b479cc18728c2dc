"""The ``featureGates`` of a Configuration, checked as component-base's feature gate
(``LoadAndValidateFeatureGates``) checks them."""

from __future__ import annotations

from collections.abc import Mapping

from kuota.api import errors as e
from kuota.api.errors import FieldError
from kuota.api.features import (
    FEATURE_GATE_DEFAULTS,
    FEATURE_GATE_DEPENDENCIES,
)
from kuota.api.features import GATES as _GATES

# ============================================================================ feature gates
# The gate table is in ``features``: decoding manifests reads its defaults without
# loading this module.

# component-base's special keys: switch every gate of that stage not named explicitly.
_ALL_STAGE_KEYS = {"AllAlpha": "Alpha", "AllBeta": "Beta"}
_FEATURE_GATES_PATH = "featureGates"


def _aggregate(msgs: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message, or ``[a, b]`` de-duplicated."""
    uniq = list(dict.fromkeys(msgs))
    return uniq[0] if len(uniq) == 1 else "[" + ", ".join(uniq) + "]"


def validate_feature_gates(
    overrides: Mapping[str, bool] | None,
) -> tuple[dict[str, bool], list[FieldError]]:
    """``LoadAndValidateFeatureGates`` with ``featureGates`` from the file (no CLI flag).

    Returns every Kueue gate's value (the overrides applied over the defaults) and the
    errors. On error the gates are the defaults, as Kueue would not start.
    """
    gates = dict(FEATURE_GATE_DEFAULTS)
    if not overrides:
        return gates, []
    # SetFromMap stops at the first unknown gate (Go's map order is random; ours sorted).
    for name in sorted(overrides):
        if name not in _GATES and name not in _ALL_STAGE_KEYS:
            msg = f"unrecognized feature gate: {name}"
            return gates, [e.invalid(_FEATURE_GATES_PATH, dict(overrides), msg)]
    msgs: list[str] = []
    enabled: dict[str, bool] = {}
    for name in sorted(overrides):
        value = bool(overrides[name])
        if name in _ALL_STAGE_KEYS:
            continue
        g = _GATES[name]
        if g.locked and value != g.default:
            msgs.append(
                f"cannot set feature gate {name} to {_gobool(value)}, "
                f"feature is locked to {_gobool(g.default)}"
            )
            continue
        enabled[name] = value
    for special, stage in _ALL_STAGE_KEYS.items():
        if special in overrides:
            for name, g in _GATES.items():
                if g.stage == stage and name not in overrides:
                    enabled[name] = bool(overrides[special])
    if not msgs:
        effective = {**gates, **enabled}
        for feature, deps in FEATURE_GATE_DEPENDENCIES.items():
            if not effective[feature]:
                continue
            off = [d for d in deps if not effective[d]]
            if off:
                msgs.append(
                    f"{feature} is enabled, but depends on features that are disabled: "
                    f"[{' '.join(off)}]"
                )
    if msgs:
        return gates, [e.invalid(_FEATURE_GATES_PATH, dict(overrides), _aggregate(msgs))]
    gates.update(enabled)
    # Kueue's own check after SetFromMap; unreachable while TASProfileMixed depends on
    # TopologyAwareScheduling, kept so the rule stays when that dependency goes.
    if gates["TASProfileMixed"] and not gates["TopologyAwareScheduling"]:
        return dict(FEATURE_GATE_DEFAULTS), [
            e.invalid(_FEATURE_GATES_PATH, 1, "cannot use a TAS profile with TAS disabled")
        ]
    return gates, []


def _gobool(v: bool) -> str:
    return "true" if v else "false"
