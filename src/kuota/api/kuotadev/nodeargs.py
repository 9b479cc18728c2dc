"""The argument syntax of ``oc adm taint`` / ``oc label`` (kubectl's
``pkg/cmd/taint`` and ``pkg/cmd/label``) and what applying it to a node does.

Taints: ``key=value:Effect`` or ``key:Effect`` adds, ``key:Effect-`` removes
that pair, ``key-`` removes every effect of the key. Labels: ``key=value``
sets, ``key-`` removes. Errors carry kubectl's own text, so a bad argument
reads the same in ``kuota node taint``, in a ``NodeOperation`` and in ``oc``.
Pure: lists and maps in, new lists and maps out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kuota.api import names
from kuota.api.k8s.corev1 import Taint

__all__ = [
    "TAINT_EFFECTS",
    "LabelEdit",
    "NodeArgError",
    "TaintEdit",
    "apply_labels",
    "apply_taints",
    "parse_label_specs",
    "parse_taint_specs",
    "taint_string",
]

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


class NodeArgError(ValueError):
    """A taint or label argument kubectl refuses (the message is kubectl's)."""


def taint_string(t: Taint) -> str:
    """``Taint.ToString``: ``key=value:effect``, ``key:effect``, ``key=value:`` or ``key``."""
    value = t.value or ""
    if not t.effect:
        return f"{t.key}={value}:" if value else t.key
    return f"{t.key}={value}:{t.effect}" if value else f"{t.key}:{t.effect}"


# ------------------------------------------------------------------------ taints
@dataclass(frozen=True, slots=True)
class TaintEdit:
    add: list[Taint]
    remove: list[Taint]  # effect "" removes every effect of the key


def _parse_taint(spec: str) -> Taint:
    """``parseTaint``: ``key=value:effect``, ``key:effect`` or ``key``."""
    parts = spec.split(":")
    value = ""
    effect = ""
    if len(parts) == 1:
        key = parts[0]
    elif len(parts) == 2:
        effect = parts[1]
        if effect not in TAINT_EFFECTS:
            raise NodeArgError(f"invalid taint effect: {effect}, unsupported taint effect")
        kv = parts[0].split("=")
        if len(kv) > 2:
            raise NodeArgError(f"invalid taint spec: {spec}")
        key = kv[0]
        if len(kv) == 2:
            value = kv[1]
            errs = names.is_label_value(value)
            if errs:
                raise NodeArgError(f"invalid taint spec: {spec}, {'; '.join(errs)}")
    else:
        raise NodeArgError(f"invalid taint spec: {spec}")
    errs = names.is_qualified_name(key)
    if errs:
        raise NodeArgError(f"invalid taint spec: {spec}, {'; '.join(errs)}")
    return Taint(key=key, value=value or None, effect=effect)


def parse_taint_specs(specs: Sequence[str]) -> TaintEdit:
    """``parseTaints``: a taint to add needs an effect; two additions may not
    share key and effect."""
    add: list[Taint] = []
    remove: list[Taint] = []
    seen: set[tuple[str, str]] = set()
    for spec in specs:
        if spec.endswith("-"):
            t = _parse_taint(spec[:-1])
            remove.append(Taint(key=t.key, effect=t.effect))
            continue
        if ":" not in spec:
            # kubectl would complain about the key ("gpu=true" is not a
            # qualified name); the real problem is the missing effect.
            raise NodeArgError(
                f"invalid taint spec: {spec}: a taint to add needs an effect "
                f"(key=value:Effect or key:Effect; Effect one of {', '.join(TAINT_EFFECTS)})"
            )
        t = _parse_taint(spec)
        if not t.effect:
            raise NodeArgError(f"invalid taint spec: {spec}")
        if (t.key, t.effect) in seen:
            raise NodeArgError(f"duplicated taints with the same key and effect: {taint_string(t)}")
        seen.add((t.key, t.effect))
        add.append(t)
    if not add and not remove:
        raise NodeArgError("at least one taint update is required")
    return TaintEdit(add, remove)


def apply_taints(
    node_name: str, current: Sequence[Taint], edit: TaintEdit, *, overwrite: bool
) -> tuple[str, list[Taint]]:
    """``reorganizeTaints`` after kubectl's overwrite check: the verb kubectl
    prints (``tainted``, ``untainted``, ``modified``) and the new taint list.
    Raises NodeArgError for a taint that is already there (without
    ``overwrite``) or one to remove that is not."""
    if not overwrite:
        clash = [
            t.key for t in edit.add if any(o.key == t.key and o.effect == t.effect for o in current)
        ]
        if clash:
            raise NodeArgError(
                f"node {node_name} already has {','.join(clash)} taint(s) with same "
                "effect(s) and --overwrite is false"
            )
    new = list(edit.add)
    for old in current:  # addTaints: keep the old ones not replaced
        if not any(t.key == old.key and t.effect == old.effect for t in new):
            new.append(old)
    added = len(current) != len(new)
    missing: list[str] = []
    deleted = False
    for rm in edit.remove:
        keep = [
            t for t in new if not (t.key == rm.key and (not rm.effect or t.effect == rm.effect))
        ]
        deleted = len(keep) != len(new)
        if not deleted:
            missing.append(f'taint "{taint_string(rm)}" not found')
        new = keep
    if missing:
        raise NodeArgError(missing[0] if len(missing) == 1 else "[" + ", ".join(missing) + "]")
    if (added and deleted) or overwrite:
        return "modified", new
    return ("tainted" if added else "untainted"), new


# ------------------------------------------------------------------------ labels
@dataclass(frozen=True, slots=True)
class LabelEdit:
    set: dict[str, str]
    remove: list[str]


def parse_label_specs(specs: Sequence[str]) -> LabelEdit:
    """``parseLabels``: ``key=value`` or ``key-``."""
    labels: dict[str, str] = {}
    remove: list[str] = []
    for spec in specs:
        if "=" in spec:
            parts = spec.split("=")
            if len(parts) != 2:
                raise NodeArgError(f"invalid label spec: {spec}")
            errs = names.is_label_value(parts[1])
            if errs:
                raise NodeArgError(f'invalid label value: "{spec}": {";".join(errs)}')
            errs = names.is_qualified_name(parts[0])
            if errs:  # the API server's metadata.labels check, reported up front
                raise NodeArgError(f'invalid label key "{parts[0]}": {"; ".join(errs)}')
            labels[parts[0]] = parts[1]
        elif spec.endswith("-"):
            remove.append(spec[:-1])
        else:
            raise NodeArgError(f"unknown label spec: {spec}")
    if any(k in labels for k in remove):
        raise NodeArgError("can not both modify and remove a label in the same command")
    if not labels and not remove:
        raise NodeArgError("at least one label update is required")
    return LabelEdit(labels, remove)


def apply_labels(
    current: Mapping[str, str], edit: LabelEdit, *, overwrite: bool
) -> tuple[str, dict[str, str], list[str]]:
    """kubectl label's update: the verb (``labeled``, ``unlabeled``, ``not
    labeled``), the new labels and warnings for labels to remove that were
    not there. Raises NodeArgError when a value would change without
    ``overwrite``."""
    if not overwrite:
        for k, v in edit.set.items():
            have = current.get(k)
            if have is not None and have != v:
                raise NodeArgError(f"'{k}' already has a value ({have}), and --overwrite is false")
    new = dict(current)
    new.update(edit.set)
    warnings = []
    for k in edit.remove:
        if k in new:
            del new[k]
        else:
            warnings.append(f'label "{k}" not found.')
    if new == dict(current):
        return "not labeled", new, warnings
    return ("labeled" if edit.set else "unlabeled"), new, warnings
