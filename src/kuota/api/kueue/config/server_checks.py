"""The Configuration rules on Kueue's servers and metrics: TLS options, the
visibility server, custom metric labels, and the quota check strategy."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping

from kuota.api import errors as e
from kuota.api.errors import FieldError, child, index
from kuota.api.kueue.config.conversion import to_builtins
from kuota.api.kueue.config.wire import ConfigurationV1Beta2, TLSOptions
from kuota.api.names import is_label_key

_MAX_CUSTOM_LABELS = 20
_MAX_TRACKED_VALUES = 16
_MAX_TRACKED_WORKLOAD_VALUES = 12
_MAX_CUSTOM_LABELS_PER_KIND = {"Workload": 2, "LocalQueue": 6, "ClusterQueue": 6, "Cohort": 6}
_CUSTOM_LABEL_NAME_RE = re.compile("[a-zA-Z][a-zA-Z0-9_]*")

_Gates = Mapping[str, bool]


# Go 1.26 crypto/tls: tls.CipherSuites() (secure) and tls.InsecureCipherSuites(), plus
# the legacy ChaCha names component-base still accepts.
_SECURE_CIPHERS = (
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305",
)
_INSECURE_CIPHERS = (
    "TLS_RSA_WITH_RC4_128_SHA",
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA256",
    "TLS_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA",
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
)
# tls.CurveID values with a name in Go 1.26 (CurveP256..P521, X25519, the ML-KEM hybrids).
_CURVES = frozenset({23, 24, 25, 29, 4587, 4588, 4589})


def _tls_parse_errors(tls: TLSOptions) -> list[str]:
    """pkg/util/tlsconfig.ParseTLSOptions: the errors it joins."""
    msgs: list[str] = []
    v = tls.min_version
    if v in ("VersionTLS11", "VersionTLS10"):
        msgs.append("invalid minVersion. Please use VersionTLS12 or VersionTLS13")
    elif v not in ("", "VersionTLS12", "VersionTLS13"):
        msgs.append(
            f'invalid minVersion: unknown tls version "{v}". Please use VersionTLS12 or VersionTLS13'
        )
    known = set(_SECURE_CIPHERS) | set(_INSECURE_CIPHERS)
    for name in tls.cipher_suites or ():
        if name not in known:
            preferred = " ".join(sorted(_SECURE_CIPHERS))
            msgs.append(
                f"invalid cipher suites: Cipher suite {name} not supported or doesn't exist. "
                f"Please use the secure cipher names: [{preferred}]"
            )
            break
    seen: set[int] = set()
    for cid in tls.curve_preferences or ():
        problem = None
        if cid <= 0 or cid > 65535:
            problem = f"curve preference {cid} is out of range (must be 1-65535)"
        elif cid in seen:
            problem = f"duplicate curve preference {cid}"
        elif cid not in _CURVES:
            problem = f"curve preference {cid} is not supported by the current Go version"
        if problem:
            msgs.append(f"invalid curve preferences: {problem}")
            break
        seen.add(cid)
    return msgs


def validate_tls(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    if c.tls is None:
        return []
    msgs = _tls_parse_errors(c.tls)
    if msgs:
        return [e.invalid("tls", to_builtins(c.tls), "\n".join(msgs))]
    if c.tls.min_version == "VersionTLS13" and c.tls.cipher_suites:
        return [
            e.invalid(
                "tls.cipherSuites",
                c.tls.cipher_suites,
                "may not be specified when `minVersion` is 'VersionTLS13'",
            )
        ]
    return []


def _is_go_ip(text: str) -> bool:
    """net.ParseIP: dotted IPv4 (no leading zeros) or IPv6, no zone."""
    if "%" in text:
        return False
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def validate_visibility_server(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    vs = c.visibility_server
    if vs is None:
        return []
    errs: list[FieldError] = []
    if vs.bind_address is not None and not _is_go_ip(vs.bind_address):
        errs.append(
            e.invalid("visibilityServer.bindAddress", vs.bind_address, "must be a valid IP address")
        )
    if vs.bind_port is not None and not 1 <= vs.bind_port <= 65535:
        errs.append(
            e.invalid(
                "visibilityServer.bindPort", vs.bind_port, "must be a valid port number (1-65535)"
            )
        )
    return errs


def validate_custom_labels(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    labels = (c.metrics.custom_labels if c.metrics else None) or []
    if not labels:
        return []
    base = "metrics.customLabels"
    errs: list[FieldError] = []
    if len(labels) > _MAX_CUSTOM_LABELS:
        errs.append(e.too_many(base, len(labels), _MAX_CUSTOM_LABELS))
    seen: set[str] = set()
    per_kind: dict[str, int] = {}
    for i, lab in enumerate(labels):
        p = index(base, i)
        if not _CUSTOM_LABEL_NAME_RE.fullmatch(lab.name):
            errs.append(e.invalid(child(p, "name"), lab.name, "must match ^[a-zA-Z][a-zA-Z0-9_]*$"))
        if lab.name in seen:
            errs.append(e.duplicate(child(p, "name"), lab.name))
        else:
            seen.add(lab.name)
        if lab.source_label_key and lab.source_annotation_key:
            errs.append(
                e.invalid(
                    p,
                    to_builtins(lab),
                    "sourceLabelKey and sourceAnnotationKey are mutually exclusive",
                )
            )
        if lab.source_label_key:
            errs += _label_key_errors(child(p, "sourceLabelKey"), lab.source_label_key)
        elif lab.source_annotation_key:
            errs += _label_key_errors(child(p, "sourceAnnotationKey"), lab.source_annotation_key)
        else:
            errs += _label_key_errors(child(p, "name"), lab.name)
        kind = lab.source_kind if lab.source_kind is not None else "ClusterQueue"
        per_kind[kind] = per_kind.get(kind, 0) + 1
        tracked = lab.tracked_values or []
        tp = child(p, "trackedValues")
        if kind == "Workload":
            if not tracked:
                errs.append(
                    e.invalid(tp, tracked, "must not be empty when sourceKind is 'Workload'")
                )
            if len(tracked) > _MAX_TRACKED_WORKLOAD_VALUES:
                errs.append(
                    e.invalid(
                        tp,
                        tracked,
                        f"must not be greater than {_MAX_TRACKED_WORKLOAD_VALUES} when sourceKind is 'Workload'",
                    )
                )
        elif len(tracked) > _MAX_TRACKED_VALUES:
            errs.append(e.too_many(tp, len(tracked), _MAX_TRACKED_VALUES))
        if len(set(tracked)) < len(tracked):
            errs.append(e.invalid(tp, tracked, "must not contain duplicates"))
    shown = [to_builtins(x) for x in labels]
    for kind in sorted(per_kind):
        limit = _MAX_CUSTOM_LABELS_PER_KIND.get(kind)
        if limit is None:
            errs.append(e.invalid(base, shown, f"unknown source kind: {kind}"))
        elif per_kind[kind] > limit:
            errs.append(
                e.invalid(
                    base,
                    shown,
                    f"too many custom labels for source kind {kind}: found {per_kind[kind]}, expected <= {limit}",
                )
            )
    return errs


def _label_key_errors(path: str, value: str) -> list[FieldError]:
    msgs = is_label_key(value)
    return [e.invalid(path, value, "; ".join(msgs))] if msgs else []


def validate_quota_check_strategy(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    if (
        not g["QuotaCheckStrategy"]
        or c.resources is None
        or c.resources.quota_check_strategy is None
    ):
        return []
    errs: list[FieldError] = []
    strategy = c.resources.quota_check_strategy
    p = "resources.quotaCheckStrategy"
    if c.resources.exclude_resource_prefixes and strategy == "IgnoreUndeclared":
        errs.append(
            e.invalid(
                p,
                strategy,
                "excludeResourcePrefixes is not allowed when quotaCheckStrategy is IgnoreUndeclared",
            )
        )
    if strategy not in ("IgnoreUndeclared", "BlockUndeclared"):
        errs.append(e.not_supported(p, strategy, ["IgnoreUndeclared", "BlockUndeclared"]))
    return errs
