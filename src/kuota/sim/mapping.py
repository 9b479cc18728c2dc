"""How a trace's teams and GPU models land in a quota design.

A mapping file (YAML, every key optional)::

    fractionalGpus: round-up      # or milli
    milliResource: kuota.dev/gpu-milli
    requests: [gpus, cpus, memory]
    teams:
      LS: {namespace: openb, queue: ls, priorityClass: latency-sensitive}
      BE: openb/best-effort       # namespace/queue
      "*": {namespace: openb, queue: other}   # every team not named
    gpuModels:
      V100M16: v100
      "": a100                    # pin jobs that name no model

Defaults: team T goes to the LocalQueue named T in namespace T, GPU model M
to the ResourceFlavor named M, both lower-cased with every character a
Kubernetes name cannot hold replaced by ``-``. A job that names no GPU
model may use any flavor its ClusterQueue offers.

Fractional GPUs (GPU-sharing pods): ``round-up`` (the default) requests
whole ``nvidia.com/gpu``, a 0.46-GPU pod asking for one GPU; ``milli``
counts every GPU request in milli-GPUs on a resource of its own
(``milliResource``, default ``kuota.dev/gpu-milli``): a 0.46-GPU pod asks
for 460, a one-GPU pod for 1000, and the design's quotas and nodes are
written in that resource.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import yaml

from kuota.sim.trace import InputError

__all__ = [
    "DEFAULT_MILLI_RESOURCE",
    "GPU",
    "Mapping",
    "TeamTarget",
    "gpu_request",
    "k8s_name",
    "load_mapping",
]

GPU = "nvidia.com/gpu"
DEFAULT_MILLI_RESOURCE = "kuota.dev/gpu-milli"
POLICIES = ("round-up", "milli")
REQUESTS = ("gpus", "cpus", "memory")
# The top-level keys of a mapping file (kuota simulate --mapping), which has
# no apiVersion or kind: `kuota validate` tells it from a manifest by these.
MAPPING_KEYS = frozenset({"fractionalGpus", "milliResource", "requests", "teams", "gpuModels"})
ANY_TEAM = "*"
_NOT_NAME = re.compile(r"[^a-z0-9-]+")
_RESOURCE_NAME = re.compile(
    r"([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
)


def k8s_name(text: str) -> str:
    """Lower-cased, every character a Kubernetes name (DNS-1123 label) cannot
    hold replaced by ``-``, trimmed to 63 characters without a leading or
    trailing ``-``. Empty when nothing usable is left."""
    s = _NOT_NAME.sub("-", text.lower())[:63]
    return s.strip("-")


@dataclass(frozen=True, slots=True)
class TeamTarget:
    namespace: str
    queue: str
    priority_class: str | None = None
    where: tuple[str, int, int] | None = None  # (file, line, col) of the mapping key

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.queue}"


@dataclass(frozen=True, slots=True)
class Mapping:
    fractional: str = "round-up"
    milli_resource: str = DEFAULT_MILLI_RESOURCE
    requests: tuple[str, ...] = REQUESTS
    teams: dict[str, TeamTarget] = field(default_factory=dict)
    models: dict[str, tuple[str, tuple[str, int, int]]] = field(default_factory=dict)
    source: str | None = None

    @property
    def gpu_resource(self) -> str:
        """The resource GPU requests are made in."""
        return self.milli_resource if self.fractional == "milli" else GPU

    @property
    def gpu_scale(self) -> int:
        """Units of :attr:`gpu_resource` per GPU."""
        return 1000 if self.fractional == "milli" else 1

    def team(self, team: str) -> TeamTarget:
        t = self.teams.get(team)
        if t is not None:
            return t
        any_team = self.teams.get(ANY_TEAM)
        if any_team is not None:
            ns = any_team.namespace or k8s_name(team)
            return TeamTarget(
                ns, any_team.queue or k8s_name(team), any_team.priority_class, any_team.where
            )
        name = k8s_name(team)
        return TeamTarget(name, name)

    def flavor(self, model: str) -> tuple[str | None, tuple[str, int, int] | None]:
        """The flavor a GPU model must use (None: any) and where the mapping said so."""
        m = self.models.get(model)
        if m is not None:
            return m
        return (k8s_name(model) if model else None), None

    def describe(self) -> str:
        if self.fractional == "milli":
            return (
                f"milli: GPU requests counted in milli-GPUs on {self.milli_resource} "
                "(a 0.46-GPU pod asks for 460)"
            )
        return f"round-up: fractional GPUs rounded up to whole {GPU} (a 0.46-GPU pod asks for 1)"


def gpu_request(gpus: Decimal, mapping: Mapping) -> int:
    """The request, in :attr:`Mapping.gpu_resource` units, of a pod asking for ``gpus``."""
    if mapping.fractional == "milli":
        return math.ceil(gpus * 1000)
    return math.ceil(gpus)


# ---------------------------------------------------------------------- reading
class _Doc:
    def __init__(self, path: str) -> None:
        self.path = path

    def err(self, node: yaml.Node, reason: str) -> InputError:
        m = node.start_mark
        return InputError(self.path, m.line + 1, m.column + 1, reason)

    def scalar(self, node: yaml.Node, what: str) -> str:
        if not isinstance(node, yaml.ScalarNode):
            raise self.err(node, f"{what}: expected a string")
        return str(node.value)

    def pairs(self, node: yaml.Node, what: str) -> list[tuple[yaml.Node, yaml.Node]]:
        if not isinstance(node, yaml.MappingNode):
            raise self.err(node, f"{what}: expected a mapping")
        seen: set[str] = set()
        for k, _ in node.value:
            key = self.scalar(k, what)
            if key in seen:
                raise self.err(k, f'{what}: key "{key}" appears twice')
            seen.add(key)
        return list(node.value)


def _where(doc: _Doc, node: yaml.Node) -> tuple[str, int, int]:
    m = node.start_mark
    return (doc.path, m.line + 1, m.column + 1)


def load_mapping(path: str | Path) -> Mapping:
    """Read a mapping file; raises :class:`InputError` naming line and column."""
    path = str(path)
    doc = _Doc(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        reason = getattr(err, "strerror", None) or str(err)
        raise InputError(path, 1, 1, f"cannot read: {reason}") from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as err:
        m = err.problem_mark
        line, col = (m.line + 1, m.column + 1) if m is not None else (1, 1)
        raise InputError(path, line, col, f"not YAML: {err.problem}") from None
    except yaml.YAMLError as err:
        raise InputError(path, 1, 1, f"not YAML: {err}") from None
    if root is None:
        return Mapping(source=path)
    fractional, milli, requests = "round-up", DEFAULT_MILLI_RESOURCE, REQUESTS
    teams: dict[str, TeamTarget] = {}
    models: dict[str, tuple[str, tuple[str, int, int]]] = {}
    for k, v in doc.pairs(root, "mapping"):
        key = k.value
        if key == "fractionalGpus":
            fractional = doc.scalar(v, key)
            if fractional not in POLICIES:
                raise doc.err(v, f'{key}: "{fractional}" is not one of {", ".join(POLICIES)}')
        elif key == "milliResource":
            milli = doc.scalar(v, key)
            if not _RESOURCE_NAME.fullmatch(milli) or "/" not in milli:
                raise doc.err(v, f'{key}: "{milli}" is not an extended resource name (domain/name)')
        elif key == "requests":
            if not isinstance(v, yaml.SequenceNode):
                raise doc.err(v, f"{key}: expected a list of {', '.join(REQUESTS)}")
            items = []
            for item in v.value:
                s = doc.scalar(item, key)
                if s not in REQUESTS:
                    raise doc.err(item, f'{key}: "{s}" is not one of {", ".join(REQUESTS)}')
                items.append(s)
            requests = tuple(r for r in REQUESTS if r in items)
        elif key == "teams":
            for tk, tv in doc.pairs(v, key):
                teams[tk.value] = _team(doc, tk, tv)
        elif key == "gpuModels":
            for mk, mv in doc.pairs(v, key):
                flavor = doc.scalar(mv, f"gpuModels.{mk.value}")
                if k8s_name(flavor) != flavor:
                    raise doc.err(mv, f'gpuModels.{mk.value}: "{flavor}" is not a flavor name')
                models[mk.value] = (flavor, _where(doc, mk))
        else:
            raise doc.err(
                k,
                f'unknown key "{key}" (expected fractionalGpus, milliResource, requests, '
                "teams, gpuModels)",
            )
    return Mapping(fractional, milli, requests, teams, models, path)


def _team(doc: _Doc, k: yaml.Node, v: yaml.Node) -> TeamTarget:
    team = k.value
    what = f"teams.{team}"
    where = _where(doc, k)
    default = "" if team == ANY_TEAM else k8s_name(team)
    if isinstance(v, yaml.ScalarNode):
        ns, sep, queue = str(v.value).partition("/")
        if not sep:
            raise doc.err(v, f'{what}: "{v.value}" is not namespace/queue')
        out = TeamTarget(ns, queue, None, where)
    else:
        fields: dict[str, str] = {}
        for fk, fv in doc.pairs(v, what):
            if fk.value not in ("namespace", "queue", "priorityClass"):
                raise doc.err(
                    fk,
                    f'{what}: unknown key "{fk.value}" (expected namespace, queue, priorityClass)',
                )
            fields[fk.value] = doc.scalar(fv, f"{what}.{fk.value}")
        out = TeamTarget(
            fields.get("namespace", default),
            fields.get("queue", default),
            fields.get("priorityClass"),
            where,
        )
    for part, value in (("namespace", out.namespace), ("queue", out.queue)):
        if value and k8s_name(value) != value:
            raise doc.err(v, f'{what}: {part} "{value}" is not a Kubernetes name')
    return out
