"""Reading a world for ``kuota run``: any mix of Kueue objects, core objects
(Namespaces, Nodes, Jobs, Pods, ...), at most one Kueue Configuration or
OpenShift ``Kueue`` resource, from YAML files and directories."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kuota.api import errors as e
from kuota.api.apiextensions import CustomResourceDefinition, register_crd
from kuota.api.apiextensions.crd_validation import crd_warnings
from kuota.api.decode import REGISTRY, Document, YamlError, decode_document, iter_yaml_documents
from kuota.api.kueue.config import KueueConfig, load_config
from kuota.api.lws.template_checks import lws_template_warnings
from kuota.cli.files import CannotRead, expand, read_bytes
from kuota.cli.run_annotations import run_annotation_errors, run_annotation_warnings

CONFIG_GROUP = "config.kueue.x-k8s.io"
OPENSHIFT_API = "kueue.openshift.io/v1"
SCHEDULER_API = "config.openshift.io/v1"


@dataclass
class World:
    objects: list[Any] = field(default_factory=list)
    config: KueueConfig | None = None
    openshift: bool = False
    config_source: str = ""
    # OpenShift's cluster scheduler config (config.openshift.io/v1 Scheduler).
    scheduler: Any = None
    scheduler_source: str = ""
    problems: list[str] = field(default_factory=list)  # "file (document N): Kind/name: error"
    warnings: list[str] = field(default_factory=list)
    # Where each object was read: id(object) -> "file (document N): Kind/ns/name".
    sources: dict[int, str] = field(default_factory=dict)
    _keys: dict[tuple[str, str, str, str], str] = field(default_factory=dict, repr=False)
    # Documents of kinds not known when read: read again at the end, when the
    # CustomResourceDefinitions of the world (in any file) define them.
    _later: list[tuple[Path, int, Any]] = field(default_factory=list, repr=False)

    def source_of(self, obj: Any) -> str:
        m = obj.metadata
        ref = f"{obj.kind}/{m.namespace}/{m.name}" if m.namespace else f"{obj.kind}/{m.name}"
        return self.sources.get(id(obj), ref)

    def _add(self, doc: Document) -> None:
        obj = doc.obj
        m = obj.metadata
        info = REGISTRY.get((obj.api_version, obj.kind))
        if info is not None and info.namespaced and not m.namespace:
            m.namespace = "default"  # as kubectl applies it: the default namespace
        where = f"{doc.where}: {doc.ref}"
        errs = run_annotation_errors(obj)
        if m.name:
            key = (obj.api_version.rpartition("/")[0], obj.kind, m.namespace or "", m.name)
            first = self._keys.get(key)
            if first is not None:
                errs.append(
                    e.FieldError("metadata.name", e.DUPLICATE, f"also defined at {first}", m.name)
                )
            else:
                self._keys[key] = doc.where
        if errs:
            self.problems += [f"{where}: {doc.shown(err)}" for err in errs]
            return
        self.objects.append(obj)
        self.sources[id(obj)] = where


def _default_config() -> KueueConfig:
    cfg, errs = load_config({"apiVersion": f"{CONFIG_GROUP}/v1beta2", "kind": "Configuration"})
    assert cfg is not None, errs
    return cfg


def load_world(paths: list[str]) -> World:
    """Everything in the named files; raises CannotRead for a path or file
    that cannot be read at all."""
    world = World()
    for path in expand(paths):
        _load_file(world, path)
    later, world._later = world._later, []
    for path, i, raw in later:
        _decode_into(world, path, i, raw)
    if world.config is None:
        world.config = _default_config()
    return world


def _load_file(world: World, path: Path) -> None:
    data = read_bytes(path)
    try:
        _load_documents(world, path, iter_yaml_documents(data))
    except YamlError as err:  # (the whole world is refused: nothing runs)
        raise CannotRead(f"{path}: {err}") from None


def _load_documents(world: World, path: Path, raws: Iterator[Any]) -> None:
    """Each raw document decoded as it is read: a world of 100,000 Jobs
    never holds them all as raw YAML beside their decoded objects."""
    for i, raw in enumerate(raws):
        where = f"{path} (document {i + 1})"
        if raw is None:
            continue
        # Only string heads are dispatched on; any other is decode_document's error.
        api_version = raw.get("apiVersion") if isinstance(raw, dict) else ""
        kind = raw.get("kind") if isinstance(raw, dict) else ""
        if not isinstance(api_version, str):
            api_version = ""
        if api_version.startswith(CONFIG_GROUP + "/"):
            _set_config(world, where, *load_config(raw), openshift=False)
            continue
        if api_version == OPENSHIFT_API and kind == "Kueue":
            _load_openshift(world, where, raw)
            continue
        if api_version == SCHEDULER_API and kind == "Scheduler":
            _load_scheduler(world, where, raw, str(path), i)
            continue
        if (
            isinstance(kind, str)
            and api_version
            and kind != "List"
            and (api_version, kind) not in REGISTRY
        ):
            world._later.append((path, i, raw))
            continue
        _decode_into(world, path, i, raw)


def _decode_into(world: World, path: Path, i: int, raw: Any) -> None:
    for doc in decode_document(raw, source=str(path), index=i):
        if doc.ok:
            doc.warnings += run_annotation_warnings(doc.obj) + lws_template_warnings(doc.obj)
            if isinstance(doc.obj, CustomResourceDefinition):
                doc.warnings += crd_warnings(doc.obj)
                register_crd(doc.obj)  # its kind is read from now on
        for w in doc.warnings:
            world.warnings.append(f"{doc.where}: {doc.ref}: {w}")
        if doc.ok:
            world._add(doc)
        else:
            for err in doc.errors:
                world.problems.append(f"{doc.where}: {doc.ref}: {doc.shown(err)}")


def _set_config(
    world: World, where: str, cfg: KueueConfig | None, errs: list[Any], *, openshift: bool
) -> None:
    if world.config_source:
        world.problems.append(
            f"{where}: a second configuration (the first is in {world.config_source})"
        )
        return
    if cfg is None:
        for err in errs:
            world.problems.append(f"{where}: {err}")
        return
    world.config, world.openshift, world.config_source = cfg, openshift, where


def _load_scheduler(world: World, where: str, raw: Any, source: str, index: int) -> None:
    """The cluster's scheduler config: its profile and default node selector
    shape how the embedded cluster places pods."""
    for doc in decode_document(raw, source=source, index=index):
        if not doc.ok:
            world.problems += [f"{doc.where}: {doc.ref}: {doc.shown(err)}" for err in doc.errors]
        elif world.scheduler is not None:
            world.problems.append(
                f"{where}: a second Scheduler (the first is in {world.scheduler_source})"
            )
        else:
            world.scheduler, world.scheduler_source = doc.obj, where


def _load_openshift(world: World, where: str, raw: Any) -> None:
    try:
        from kuota.api.openshift.operator_config import to_kueue_config
    except ImportError:
        world.problems.append(f"{where}: OpenShift's Kueue resource is not supported yet")
        return
    docs = decode_document(raw, source=where, index=0)
    doc = docs[0]
    if not doc.ok:
        for err in doc.errors:
            world.problems.append(f"{where}: {doc.ref}: {doc.shown(err)}")
        return
    cfg, errs = to_kueue_config(doc.obj)
    _set_config(world, where, cfg, errs, openshift=True)
