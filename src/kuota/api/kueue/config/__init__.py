"""Kueue's Configuration file (``config.kueue.x-k8s.io`` v1beta1 and v1beta2), read as Kueue reads it.

Kueue loads its Configuration with a strict universal decoder: the file is decoded in the
version it names (unknown fields are errors), that version's ``SetDefaults_Configuration``
runs, the result is converted to v1beta2, the feature gates of ``featureGates`` are set and
``pkg/config/validation.go`` checks it. This package does the same, in that order, at Kueue
HEAD ff69552e:

* wire structs for both versions (``ConfigurationV1Beta2``, ``ConfigurationV1Beta1``) with
  every field of ``apis/config/v1beta{1,2}/configuration_types.go``;
* ``default_v1beta2`` / ``default_v1beta1`` (``defaults.go`` of each version);
* ``v1beta1_to_v1beta2`` / ``v1beta2_to_v1beta1`` (``configuration_conversion.go``);
* ``validate`` (every rule of ``validation.go``) and ``validate_feature_gates``
  (``LoadAndValidateFeatureGates`` over component-base's feature gate);
* ``KueueConfig``: the one internal model the rest of kuota reads (durations as
  ``timedelta``, disabled features as ``None``, gates merged over Kueue's defaults);
* ``load_config``, ``config_from_scenario`` and ``to_wire``.

One module per concept: ``durations``, ``wire``, ``decoding``, ``defaults``,
``conversion``, ``featuregates``, ``frameworks``, ``checks`` and ``server_checks``
(validation), ``model``; this package exports their public names. Kubernetes names
are checked by ``kuota.api.names``.

Durations are strings on the wire (``metav1.Duration``); ``parse_duration`` and
``format_duration`` follow Go's ``time.ParseDuration`` and ``Duration.String``.
"""

from __future__ import annotations

from kuota.api.features import FEATURE_GATE_DEFAULTS, FEATURE_GATE_DEPENDENCIES, FEATURE_GATE_STAGES
from kuota.api.kueue.config.checks import validate
from kuota.api.kueue.config.conversion import to_wire, v1beta1_to_v1beta2, v1beta2_to_v1beta1
from kuota.api.kueue.config.decoding import decode_config
from kuota.api.kueue.config.defaults import default_v1beta1, default_v1beta2
from kuota.api.kueue.config.durations import (
    format_duration,
    format_duration_ns,
    parse_duration,
    parse_duration_ns,
)
from kuota.api.kueue.config.featuregates import validate_feature_gates
from kuota.api.kueue.config.frameworks import BUILTIN_FRAMEWORKS
from kuota.api.kueue.config.model import (
    AdmissionFairSharing,
    ConfigError,
    DeviceClassMapping,
    DeviceSource,
    FairSharing,
    Integrations,
    KueueConfig,
    ObjectRetention,
    RequeuingStrategy,
    Resources,
    ResourceTransformation,
    WaitForPodsReady,
    config_from_scenario,
    load_config,
)
from kuota.api.kueue.config.wire import (
    API_VERSIONS,
    GROUP,
    KIND,
    UNKNOWN_FIELD,
    V1BETA1,
    V1BETA2,
    ConfigurationV1Beta1,
    ConfigurationV1Beta2,
)

__all__ = [
    "API_VERSIONS",
    "BUILTIN_FRAMEWORKS",
    "FEATURE_GATE_DEFAULTS",
    "FEATURE_GATE_DEPENDENCIES",
    "FEATURE_GATE_STAGES",
    "GROUP",
    "KIND",
    "UNKNOWN_FIELD",
    "V1BETA1",
    "V1BETA2",
    "AdmissionFairSharing",
    "ConfigError",
    "ConfigurationV1Beta1",
    "ConfigurationV1Beta2",
    "DeviceClassMapping",
    "DeviceSource",
    "FairSharing",
    "Integrations",
    "KueueConfig",
    "ObjectRetention",
    "RequeuingStrategy",
    "ResourceTransformation",
    "Resources",
    "WaitForPodsReady",
    "config_from_scenario",
    "decode_config",
    "default_v1beta1",
    "default_v1beta2",
    "format_duration",
    "format_duration_ns",
    "load_config",
    "parse_duration",
    "parse_duration_ns",
    "to_wire",
    "v1beta1_to_v1beta2",
    "v1beta2_to_v1beta1",
    "validate",
    "validate_feature_gates",
]
